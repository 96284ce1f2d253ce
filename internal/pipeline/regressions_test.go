package pipeline

import (
	"fmt"
	"strings"
	"testing"
)

// Regression tests for engine bugs found while writing this suite. Each
// names what used to go wrong.

// A base_config whose aliases expand without bound (nested anchors, or an
// anchor inside itself) used to hang Plan or crash the process with a
// stack overflow when the split copied the stage list (Unalias). Parse now
// refuses such a document, and the plan reports it at base_config.
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

// vllm-omni reads configs with PyYAML (YAML 1.1): a user's string "on" or
// "off" written plain would reach it as a boolean, and a float written as
// 1e-05 as a string. User values must be written so that PyYAML reads them
// back as what the user gave.
func TestRegressionYAML11Values(t *testing.T) {
	res := mustPlan(t, Spec{Model: seedModel,
		Prefill:   RoleSpec{EngineArgs: map[string]any{"mode": "on", "flag": "off", "answer": "yes", "eps": 1e-05, "big": 1e21, "clock": "1:30"}},
		Connector: ConnectorSpec{ExtraConfig: map[string]any{"transport": "no"}},
	})
	for _, want := range []string{`mode: "on"`, `flag: "off"`, `answer: "yes"`, `clock: "1:30"`, `transport: "no"`, "eps: 1.0e-05", "big: 1.0e+21"} {
		if !strings.Contains(res.ConfigYAML, want) {
			t.Errorf("the planned config lacks %s", want)
		}
	}
	ea, _ := dig(stageList(t, config(t, res.ConfigYAML))[0], "engine_args").(map[string]any)
	if ea["mode"] != "on" || ea["eps"] != 1e-05 || ea["big"] != 1e21 {
		t.Errorf("values do not read back: %v", ea)
	}
}
