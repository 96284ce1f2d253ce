package pipeline

import (
	"fmt"
	"strings"
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

// A base_config whose aliases expand without bound (nested anchors, or an
// anchor inside itself) used to hang Plan or crash the process with a
// stack overflow when the split copied the stage list (stageconfig's
// unalias). Parse now refuses such a document, and the plan reports it at
// base_config.
func TestRegressionAliasExpansion(t *testing.T) {
	var bomb strings.Builder
	bomb.WriteString("l0: &l0 [a, a, a, a, a, a, a, a, a, a]\n")
	for i := 1; i <= 7; i++ {
		fmt.Fprintf(&bomb, "l%d: &l%d [*l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d, *l%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	tests := map[string]string{
		"nested anchors":       bomb.String() + miniBaseWith(t, "    final_output: true\n    final_output_type: text\n", "    final_output: true\n    final_output_type: text\n    x: *l7\n"),
		"anchor inside itself": strings.Replace(miniBase, "  - stage_id: 0\n", "  - &s\n    stage_id: 0\n    x: [*s]\n", 1),
	}
	for name, base := range tests {
		t.Run(name, func(t *testing.T) {
			res, ds := Plan(Spec{Model: seedModel, BaseConfig: base})
			if res != nil || !hasCode(ds, "base_config_invalid", "base_config") {
				t.Fatalf("want base_config_invalid, got %v", ds.Codes())
			}
		})
	}
	// Ordinary aliases still work and are written out in the plan.
	base := "defaults: &sp {temperature: 0.4}\n" + strings.Replace(miniBase, "    final_output_type: text\n", "    final_output_type: text\n    default_sampling_params: *sp\n", 1)
	res := mustPlan(t, Spec{Model: seedModel, BaseConfig: base})
	st := stageList(t, config(t, res.ConfigYAML))
	for i := 0; i < 2; i++ {
		if got := dig(st[i], "default_sampling_params", "temperature"); got != 0.4 {
			t.Errorf("stage %d sampling temperature = %v", i, got)
		}
	}
}
