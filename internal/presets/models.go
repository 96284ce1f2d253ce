package presets

import (
	"path"
	"slices"
	"strings"
)

// Variant is a published model the presets know by its exact id, and the
// preset of the pipeline it has.
type Variant struct {
	ID     string // the Hugging Face id as published
	Preset string
	Source string // where the model's pipeline is stated
}

// Name is the id's last part ("Qwen3-Omni-30B-A3B-Thinking"), which a local
// path to the model's directory ends in.
func (v Variant) Name() string { return path.Base(v.ID) }

// Variants are the published models a preset is chosen for from `model`
// alone. One family's models do not all have the same pipeline: vllm-omni
// runs a Qwen3-Omni model's thinker alone when its Hugging Face config has
// enable_audio_output false ("some variants, e.g.,
// Qwen3-Omni-30B-A3B-Captioner, are thinker only": resolve_qwen3_omni_pipeline,
// vllm_omni/model_executor/models/qwen3_omni/pipeline.py@d4a869fe), so a
// model is matched by its id, never by a piece of it.
var Variants = []Variant{
	{ID: "Qwen/Qwen3-Omni-30B-A3B-Instruct", Preset: Qwen3OmniMoe,
		Source: "its model card: thinker and talker, text and audio output; docs/models/supported_models.md@d4a869fe :22, and the PD recipe's model"},
	{ID: "Qwen/Qwen3-Omni-30B-A3B-Thinking", Preset: Qwen3OmniMoeThinkerOnly,
		Source: "its model card: the thinker only, text output; examples/online_serving/qwen3_omni/qwen3_omni_moe_thinking.yaml@d4a869fe (one thinker stage)"},
	{ID: "Qwen/Qwen3-Omni-30B-A3B-Captioner", Preset: Qwen3OmniMoeThinkerOnly,
		Source: "its model card: the thinker only, text output; qwen3_omni/pipeline.py@d4a869fe resolve_qwen3_omni_pipeline :96-104, tests/e2e/offline_inference/test_qwen3_omni.py@d4a869fe :17 (thinker_only_models)"},
	{ID: "Qwen/Qwen2.5-Omni-7B", Preset: Qwen25Omni,
		Source: "its model card: thinker and talker, text and audio output; docs/models/supported_models.md@d4a869fe :23"},
	{ID: "Qwen/Qwen2.5-Omni-3B", Preset: Qwen25Omni,
		Source: "its model card: thinker and talker, text and audio output; docs/models/supported_models.md@d4a869fe :23"},
}

// Family is a line of models whose ids share a name. An id that looks like
// one but is not among Variants (a fine-tune, a quantized copy, an id that
// names no model) may have any of the family's pipelines, so its preset is
// the user's to say.
type Family struct {
	Name    string   // as the models are named: "Qwen3-Omni"
	Presets []string // the pipelines its models have, audio output first
	// Which says how to tell which pipeline a model has, or "".
	Which string
	// fragments are lower-cased pieces of an id or path that name the
	// family.
	fragments []string
}

// Families are the model lines the presets serve.
var Families = []Family{
	{Name: "Qwen3-Omni", Presets: []string{Qwen3OmniMoe, Qwen3OmniMoeThinkerOnly},
		Which:     "the model's config.json says which: vllm-omni runs the thinker alone when enable_audio_output is false (qwen3_omni/pipeline.py@d4a869fe resolve_qwen3_omni_pipeline)",
		fragments: []string{"qwen3-omni", "qwen3_omni"}},
	{Name: "Qwen2.5-Omni", Presets: []string{Qwen25Omni},
		fragments: []string{"qwen2.5-omni", "qwen2_5-omni", "qwen2_5_omni"}},
}

// Match is what a model id says about the preset that serves it.
type Match struct {
	// Variant is the published model the id names, nil when none does
	// exactly.
	Variant *Variant
	// Family is the family the id looks like, nil when none; set with
	// Variant too.
	Family *Family
}

// Preset is the preset the id names exactly: its variant's.
func (m Match) Preset() (string, bool) {
	if m.Variant == nil {
		return "", false
	}
	return m.Variant.Preset, true
}

// Architecture is the model class (`model_arch`) the id's models load, as
// far as the id tells: its variant's preset's, else its family's, whose
// presets all load one class (TestFamiliesShareAnArchitecture).
func (m Match) Architecture() string {
	if name, ok := m.Preset(); ok {
		return Architecture(name)
	}
	if m.Family != nil {
		return Architecture(m.Family.Presets[0])
	}
	return ""
}

// ForModel says which published model, or at least which family, a model
// id such as "Qwen/Qwen3-Omni-30B-A3B-Instruct" names. A Hugging Face id is
// matched whole, and an absolute local path by its last element
// ("/models/Qwen3-Omni-30B-A3B-Thinking"), both regardless of case.
func ForModel(model string) Match {
	var m Match
	local := strings.HasPrefix(model, "/")
	for i := range Variants {
		v := &Variants[i]
		if !local && strings.EqualFold(model, v.ID) || local && strings.EqualFold(path.Base(model), v.Name()) {
			m.Variant = v
			break
		}
	}
	lower := strings.ToLower(model)
	for i := range Families {
		for _, f := range Families[i].fragments {
			if strings.Contains(lower, f) {
				m.Family = &Families[i]
				return m
			}
		}
	}
	return m
}

// Pipeline describes a preset's pipeline from its stages, for messages
// and the docs: "thinker, talker, code2wav; text and audio output", or
// "thinker only; text output".
func Pipeline(name string) string {
	doc, err := Shared(name)
	if err != nil {
		return ""
	}
	stages := ModelStages(name)
	var outputs []string
	for _, s := range doc.Stages() {
		final := s.Flag("final_output")
		out, _ := s.String("final_output_type")
		if final && out != "" && !slices.Contains(outputs, out) {
			outputs = append(outputs, out)
		}
	}
	what := strings.Join(stages, ", ")
	if len(stages) == 1 {
		what += " only"
	}
	return what + "; " + strings.Join(outputs, " and ") + " output"
}

// ModelStages lists a preset's stages by model_stage, in order.
func ModelStages(name string) []string {
	doc, err := Shared(name)
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range doc.Stages() {
		out = append(out, s.ModelStage())
	}
	return out
}
