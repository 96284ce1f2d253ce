package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// Registration is the module every process of the plan imports before
// vllm-omni's CLI resolves the deploy config's `pipeline:`, which names
// it: on a release that loads only the stages dialect, the module the
// plan writes (releases.Release.WritesRegistration); with `pipeline`, the
// user's own, which the plan does not write.
type Registration struct {
	Pipeline string // the `pipeline:` key, and the module's name
	Path     string // where the hosts keep the module: beside the check script
	Content  string // the module the plan writes; "" for the user's own
}

// registrationPrefix starts the name of every module the plan writes; the
// rest is the start of the module's SHA-256, so a module's name says
// which text it is and the preflight can tell a stale one.
const registrationPrefix = "omni_pd_"

// registrationName names the module of content: its own hash, as the
// preflight checks it (pd-check.py's REGISTRATION).
func registrationName(content string) string {
	sum := sha256.Sum256([]byte(content))
	return registrationPrefix + hex.EncodeToString(sum[:])[:16]
}

// registrationPath is where the hosts keep the module of a pipeline key:
// in the check script's directory, which the units read and no process
// writes.
func registrationPath(s ServiceSpec, key string) string {
	return path.Join(path.Dir(s.withDefaults().CheckScriptPath), key+".py")
}

// planRegistration is the registration the processes import for the
// chosen release: the module the plan writes from the release's
// definition of the base's pipeline, the user's own where `pipeline`
// names it and the release has a registry, or nil.
func planRegistration(spec Spec, c releases.Choice, definition string, planned stageLayout) (*Registration, error) {
	r := c.Release
	switch {
	case c.UserPipeline && r.Registry != nil:
		return &Registration{Pipeline: c.PipelineKey, Path: registrationPath(spec.Service, c.PipelineKey)}, nil
	case !c.Registration:
		return nil, nil
	}
	def, ok := r.Registry.Definition(definition)
	if !ok {
		return nil, fmt.Errorf("vllm-omni %s has no definition of pipeline %q", r.Version, definition)
	}
	content, err := renderRegistration(r, def, planned)
	if err != nil {
		return nil, err
	}
	name := registrationName(content)
	return &Registration{Pipeline: name, Path: registrationPath(spec.Service, name), Content: content}, nil
}

// registrationDefinition is the release pipeline a base describes, for
// the registration: the preset it is, its own `pipeline:` key, or the
// preset whose model class and stages it has.
func registrationDefinition(base baseConfig) string {
	if base.preset != "" {
		return base.preset
	}
	if key, ok := base.doc.TopString("pipeline"); ok && key != "" {
		return key
	}
	var stages []string
	arch := ""
	for _, s := range base.g.stages {
		stages = append(stages, s.modelStage)
		if a, ok := s.stage.EngineString("model_arch"); ok && arch == "" {
			arch = a
		}
	}
	for _, name := range presets.Names() {
		if presets.Architecture(name) == arch && slices.Equal(presets.ModelStages(name), stages) {
			return name
		}
	}
	return ""
}

// thinkerOnlyPreset is the preset that runs the split stage alone, for the
// model class it loads: what a plan asks for where the release serves the
// PD pair and nothing after it.
func thinkerOnlyPreset(split graphStage) string {
	arch, _ := split.stage.EngineString("model_arch")
	for _, name := range presets.Names() {
		if presets.Architecture(name) == arch && slices.Equal(presets.ModelStages(name), []string{split.modelStage}) {
			return name
		}
	}
	return ""
}

// afterPair reports whether the layout has stages besides the PD pair:
// with the split stage the entry stage, they all take what decode makes.
func afterPair(lay stageLayout) bool {
	for _, s := range lay.stages {
		if s.role == RoleStage {
			return true
		}
	}
	return false
}

// renderRegistration writes the module that registers the planned
// pipeline with release r: each planned stage as a StagePipelineConfig,
// its topology from the plan (id, inputs, final output, the PD flag in
// the field the release reads it from) and the rest from the release's
// definition of its model_stage. Only data: the module's own name is the
// pipeline's key (model_type=__name__), so the text does not hold its
// hash.
func renderRegistration(r releases.Release, def releases.PipelineDef, planned stageLayout) (string, error) {
	reg := r.Registry
	pre, dec := planned.pdPair()
	if pre == nil || dec == nil || dec.id != pre.id+1 {
		return "", fmt.Errorf("the registration needs the PD pair's ids adjacent: vllm-omni %s hands a request from stage s to s+1", r.Version)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# The prefill-decode pipeline planned by omni_pd_pipeline for vllm-omni %s:\n", r.Version)
	fmt.Fprintf(&b, "# %s's stages, the %s split into prefill\n# (stage %d) and decode (stage %d).", def.Key, pre.base.modelStage, pre.id, dec.id)
	b.WriteString(" Every process imports this module before\n" +
		"# vllm-omni's CLI resolves the deploy config's pipeline:, which names it; it\n" +
		"# registers under its own name, the plan's hash of this text. The PD flags\n" +
		"# are in " + reg.PDFlags + ", which vllm-omni writes at the top level of each stage's\n" +
		"# config, where its PD detection reads them.\n")
	fmt.Fprintf(&b, "from %s import %s\n", reg.Module, reg.Register)
	fmt.Fprintf(&b, "from %s import %s, %s, %s\n\n", reg.TypesModule, reg.PipelineType, reg.ExecutionType, reg.StageType)
	fmt.Fprintf(&b, "%s(\n    %s(\n        model_type=__name__,\n        model_arch=%s,\n        stages=(\n", reg.Register, reg.PipelineType, pyString(def.ModelArch))
	for _, s := range planned.stages {
		fields, err := registrationStage(r, def, s)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "            %s(\n", reg.StageType)
		for _, f := range fields {
			if !slices.Contains(reg.StageFields, f[0]) {
				return "", fmt.Errorf("vllm-omni %s's %s has no field %s", r.Version, reg.StageType, f[0])
			}
			fmt.Fprintf(&b, "                %s=%s,\n", f[0], f[1])
		}
		b.WriteString("            ),\n")
	}
	b.WriteString("        ),\n    )\n)\n")
	return b.String(), nil
}

// registrationStage is one planned stage's fields, as Python keyword
// arguments in the order the release declares them.
func registrationStage(r releases.Release, def releases.PipelineDef, s *plannedStage) ([][2]string, error) {
	d, ok := def.Stage(s.base.modelStage)
	if !ok {
		return nil, fmt.Errorf("vllm-omni %s's pipeline %s has no stage %q", r.Version, def.Key, s.base.modelStage)
	}
	final := s.info().FinalOutput
	finalType := "None"
	if final {
		finalType = pyString(d.FinalOutputType)
	}
	inputs := make([]string, len(s.inputs))
	for i, in := range s.inputs {
		inputs[i] = strconv.Itoa(in)
	}
	extras := map[string]bool{}
	switch s.role {
	case RolePrefill:
		extras["is_prefill_only"] = true
	case RoleDecode:
		extras["is_decode_only"] = true
	}
	return [][2]string{
		{"stage_id", strconv.Itoa(s.id)},
		{"model_stage", pyString(d.ModelStage)},
		{"execution_type", r.Registry.ExecutionType + "." + d.ExecutionType},
		{"input_sources", pyTuple(inputs)},
		{"final_output", pyBool(final)},
		{"final_output_type", finalType},
		{"owns_tokenizer", pyBool(d.OwnsTokenizer)},
		{"requires_multimodal_data", pyBool(d.RequiresMultimodalData)},
		{"hf_config_name", pyString(d.HFConfigName)},
		{"engine_output_type", pyString(d.EngineOutputType)},
		{"sampling_constraints", pyBoolDict(d.SamplingConstraints)},
		{r.Registry.PDFlags, pyBoolDict(extras)},
	}, nil
}

// pyString is a Python string literal of s; Go's escapes are Python's.
func pyString(s string) string { return strconv.Quote(s) }

func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// pyTuple is a Python tuple of literals: "()", "(0,)", "(0, 1)".
func pyTuple(items []string) string {
	if len(items) == 1 {
		return "(" + items[0] + ",)"
	}
	return "(" + strings.Join(items, ", ") + ")"
}

// pyBoolDict is a Python dict of booleans, its keys sorted.
func pyBoolDict(m map[string]bool) string {
	var items []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		items = append(items, pyString(k)+": "+pyBool(m[k]))
	}
	return "{" + strings.Join(items, ", ") + "}"
}

// checkRegistrationAsyncChunk: the registration the plan writes has no
// async-chunk processor (decode takes the prompt from the orchestrator),
// and the release's deploy merge raises for a pipeline of several stages
// with async_chunk true and none (releases.DeployLoader).
func checkRegistrationAsyncChunk(doc *stageconfig.Document, reg *Registration, r releases.Release, base Path, ds *Diagnostics) {
	if reg == nil || reg.Content == "" {
		return
	}
	if on, ok := doc.TopBool("async_chunk"); ok && on {
		ds.errorf(diagcode.RegistrationAsyncChunk, base, "async_chunk: true cannot run on the plan's pipeline registration",
			"the base config sets async_chunk: true; vllm-omni %s's deploy merge then needs an async-chunk processor on a pipeline of several stages, and the registration the plan writes has none, since decode takes the prompt from the orchestrator. Remove async_chunk from the base config, or set it to false.", r.Version)
	}
}
