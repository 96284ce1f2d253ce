package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/presets"
)

// inferPreset chooses the preset when neither preset nor base_config is
// given: the one of the published model that model names exactly
// (presets.Variants). An id that only looks like one of a family's is an
// error, not a guess: the family's models do not all have one pipeline,
// and the talker pipeline planned for a thinker-only model fails on the
// machine.
func inferPreset(model string, ds *Diagnostics) (string, bool) {
	m := presets.ForModel(model)
	if name, ok := m.Preset(); ok {
		return name, true
	}
	if f := m.Family; f != nil {
		which := "."
		if f.Which != "" {
			which = "; " + f.Which + "."
		}
		local := ""
		if !presets.HubModel(model) {
			local = fmt.Sprintf(" A local path is matched by its last element, as in /models/%s.", familyVariants(f)[0].Name())
		}
		ds.errorf(diagcode.PresetVariantUnknown, AttrPath("model"), "no preset knows this model exactly",
			"model %q looks like a %s model, but it is none of the published ones a preset is chosen for (%s), and not every %s model has the same pipeline, so none is guessed. Set preset to the pipeline this model has: %s%s Or pass your own stage config in base_config.%s",
			model, f.Name, describeVariants(familyVariants(f)), f.Name, describePresets(f.Presets), which, local)
		return "", false
	}
	ds.errorf(diagcode.PresetNotInferred, AttrPath("model"), "no preset matches this model",
		"model %q does not name a model with an embedded preset. Set preset to one of %s, or pass your own stage config in base_config.",
		model, strings.Join(presets.Names(), ", "))
	return "", false
}

// checkVariant refuses a preset that runs stages the published model
// named does not have, such as the talker pipeline for
// Qwen3-Omni-30B-A3B-Thinking, whose checkpoint is the thinker alone: the
// stages beyond it would fail to load on the machine. A preset with fewer
// stages than the model's (the thinker alone for the Instruct model, for
// text only) is the user's choice. As for the architecture, only a Hugging
// Face id says which model it is. preset is the preset loaded as the base
// ("" for the user's base config).
func checkVariant(spec Spec, preset string, ds *Diagnostics) {
	if preset == "" || spec.Preset == "" || !presets.HubModel(spec.Model) {
		return
	}
	m := presets.ForModel(spec.Model)
	own, ok := m.Preset()
	if !ok || own == preset || presets.Architecture(own) != presets.Architecture(preset) {
		return // the same pipeline, or another model's, which checkArchitecture refuses
	}
	have := presets.ModelStages(own)
	var extra []string
	for _, s := range presets.ModelStages(preset) {
		if !slices.Contains(have, s) {
			extra = append(extra, s)
		}
	}
	if len(extra) == 0 {
		return
	}
	ds.errorf(diagcode.PresetVariantMismatch, AttrPath("preset"), "the preset runs stages this model does not have",
		"model %q is published with the pipeline of preset %q, %s (%s); preset %q also runs %s, which the model has no weights for, so vllm-omni would fail to start them. Set preset = %q, or leave preset unset to infer it from model.",
		spec.Model, own, presets.Pipeline(own), m.Variant.Source, preset, strings.Join(extra, " and "), own)
}

// familyVariants are the published models of a family, in table order.
func familyVariants(f *presets.Family) []presets.Variant {
	var out []presets.Variant
	for _, v := range presets.Variants {
		if slices.Contains(f.Presets, v.Preset) {
			out = append(out, v)
		}
	}
	return out
}

// describeVariants lists models with their presets:
// `Qwen/Qwen3-Omni-30B-A3B-Instruct (qwen3_omni_moe), ...`.
func describeVariants(vs []presets.Variant) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.ID + " (" + v.Preset + ")"
	}
	return strings.Join(parts, ", ")
}

// describePresets lists presets with their pipelines, as alternatives:
// `"qwen3_omni_moe" (thinker, talker, code2wav; text and audio output) or
// "qwen3_omni_moe_thinker_only" (thinker only; text output)`.
func describePresets(names []string) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%q (%s)", n, presets.Pipeline(n))
	}
	return strings.Join(parts, " or ")
}
