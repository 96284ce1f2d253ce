package pipeline

import (
	"testing"
)

// loadBase and lintBase refuse a base config the planner cannot find or
// read.
func TestLoadBaseDiagnostics(t *testing.T) {
	m := seedModel
	runPlanDiagnostics(t, []planDiagCase{
		{"model with no preset", func(*testing.T) Spec { return Spec{Model: "meta-llama/Llama-3-8B"} }, "preset_not_inferred", "model"},
		{"unknown preset", func(*testing.T) Spec { return Spec{Model: m, Preset: "qwen4"} }, "preset_unknown", "preset"},
		{"base_config not YAML", func(*testing.T) Spec { return Spec{Model: m, BaseConfig: "stage_args: [\n"} }, "base_config_invalid", "base_config"},
		{"base_config in neither dialect", func(*testing.T) Spec { return Spec{Model: m, BaseConfig: "model: x\n"} }, "base_config_invalid", "base_config"},
		{"edges not a list", func(*testing.T) Spec { return Spec{Model: m, BaseConfig: miniBase + "runtime:\n  edges: {from: 0}\n"} }, "yaml_shape", "base_config"},
	})
}
