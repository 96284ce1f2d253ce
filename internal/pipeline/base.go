package pipeline

import (
	"errors"
	"fmt"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// loadBase parses the user's base config, or loads the named or inferred
// preset. It returns the document, the path to blame for problems inside
// it, and the preset's name ("" for the user's base config).
func loadBase(spec Spec, ds *Diagnostics) (*stageconfig.Document, Path, string) {
	if spec.BaseConfig != "" {
		path := AttrPath("base_config")
		doc, err := stageconfig.Parse([]byte(spec.BaseConfig))
		if err != nil {
			for _, pe := range parseErrors(err) {
				if pe.Loader {
					ds.errorf(diagcode.BaseConfigInvalid, path, "vllm-omni's loader cannot read base_config as written", "%s.", pe.Error())
					continue
				}
				ds.errorf(diagcode.BaseConfigInvalid, path, "base_config is not a usable stage config",
					"%s. Pass a vllm-omni stage config in the stage_args or stages dialect, for example with file(\"qwen3_omni_moe.yaml\").", pe.Error())
			}
			return nil, path, ""
		}
		if !lintBase(doc, ds, path) {
			return nil, path, ""
		}
		return doc, path, ""
	}
	name := spec.Preset
	path := AttrPath("preset")
	if name == "" {
		if modelRefused(*ds) {
			// checkSpec said what is wrong with model; no preset is
			// inferred from an id that is not one.
			return nil, AttrPath("model"), ""
		}
		inferred, ok := inferPreset(spec.Model, ds)
		if !ok {
			return nil, AttrPath("model"), ""
		}
		name, path = inferred, AttrPath("model")
	}
	if !presets.Known(name) {
		ds.errorf(diagcode.PresetUnknown, AttrPath("preset"), "unknown preset",
			"preset %q is not embedded in this provider. Use one of %s, or pass your own stage config in base_config.",
			name, strings.Join(presets.Names(), ", "))
		return nil, path, ""
	}
	// The planner only reads its base config; apply edits a clone.
	doc, err := presets.Shared(name)
	if err != nil {
		ds.errorf(diagcode.PresetUnreadable, path, "embedded preset cannot be read", "%v", err)
		return nil, path, ""
	}
	return doc, path, name
}

// lintBase reports the user's base config's values the planner cannot
// plan with as errors (stageconfig.Document.Lint), and warns of what it
// keeps as written without being able to read (OmegaConf interpolations)
// and of the anchors Parse wrote out. It reports whether planning can go on.
func lintBase(doc *stageconfig.Document, ds *Diagnostics, path Path) bool {
	findings, interps := doc.LintAll()
	for _, f := range findings {
		ds.errorf(f.Code, path, f.Summary, "%s", f.Detail)
	}
	if len(interps) > 0 {
		var where []string
		for i, n := range interps {
			if i == 3 {
				where = append(where, fmt.Sprintf("and %d more", len(interps)-3))
				break
			}
			where = append(where, fmt.Sprintf("line %d: %q", n.Line, n.Text))
		}
		ds.warnf(diagcode.YAMLInterpolationKept, path, "base_config holds OmegaConf interpolations, kept as written",
			"%s. vllm-omni resolves each when it loads the planned config, in which the split stage is two stages, later stages are renumbered and, in another format, keys move: check that each still points where you mean, or write the values out.", strings.Join(where, "; "))
	}
	aliasLine, mergeLine := doc.WrittenOut()
	if line := minPositive(aliasLine, mergeLine); line > 0 {
		ds.warnf(diagcode.YAMLAnchorsWrittenOut, path, "base_config's aliases and merge keys are written out",
			"line %d: the planned config holds the values that base_config's aliases (*name) and merge keys (<<: *name) stand for, written out in each place, so that each stage is planned and edited on its own; vllm-omni reads the same data. Nothing to do unless you maintain the planned config by hand.", line)
	}
	return len(findings) == 0
}

// modelRefused reports whether model itself was refused (empty, not an id
// or a path, a control character), so that nothing is inferred from it.
func modelRefused(ds Diagnostics) bool {
	for _, d := range ds.Errors() {
		if len(d.Path) == 1 && d.Path[0].Name == "model" {
			return true
		}
	}
	return false
}

func minPositive(a, b int) int {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}

// parseErrors lists the problems in a Parse error.
func parseErrors(err error) []*stageconfig.ParseError {
	var list stageconfig.ParseErrors
	if errors.As(err, &list) {
		return list
	}
	var pe *stageconfig.ParseError
	if errors.As(err, &pe) {
		return []*stageconfig.ParseError{pe}
	}
	return []*stageconfig.ParseError{{Msg: fmt.Sprint(err)}}
}

// checkArchitecture refuses a base whose split stage loads another model
// class than the one model names: a preset or base config for Qwen3-Omni
// given Qwen2.5-Omni weights would fail in vLLM's loader, on the machine.
// Only a Hugging Face id says what it is; a local path is not judged. An id
// of a known family is judged by the family even when no preset knows the
// model exactly, since all of a family's models load one class.
func checkArchitecture(spec Spec, base baseConfig, split graphStage, ds *Diagnostics) {
	if !presets.HubModel(spec.Model) {
		return
	}
	m := presets.ForModel(spec.Model)
	want := m.Architecture()
	got, _ := split.stage.EngineString("model_arch")
	if want == "" || got == "" || got == want {
		return
	}
	if !base.user() {
		if inferred, ok := m.Preset(); ok {
			ds.errorf(diagcode.ModelArchMismatch, AttrPath("preset"), "the preset is for another model",
				"model %q is a %s model (preset %s), but preset %q loads %s; set preset = %q, or leave preset unset to infer it from model.",
				spec.Model, want, inferred, spec.Preset, got, inferred)
			return
		}
		ds.errorf(diagcode.ModelArchMismatch, AttrPath("preset"), "the preset is for another model",
			"model %q is a %s model (its id names %s), but preset %q loads %s; set preset to the %s preset whose pipeline the model has: %s.",
			spec.Model, want, m.Family.Name, spec.Preset, got, m.Family.Name, describePresets(m.Family.Presets))
		return
	}
	presetFor, _ := m.Preset()
	if presetFor == "" {
		presetFor = m.Family.Presets[0]
	}
	ds.errorf(diagcode.ModelArchMismatch, base.path, "the base config is for another model",
		"model %q is a %s model, but %s (line %d) loads model_arch %s; pass a base config for %s (the %s preset is one), or the model it was written for.",
		spec.Model, want, split.stage.Describe(), split.stage.Line(), got, want, presetFor)
}
