package pipeline

import (
	"strings"
	"testing"
)

// Regression tests for engine bugs found while writing this suite. Each
// names what used to go wrong. Regressions of the plan as a whole stay here;
// one that a single step fixed sits beside that step
// (TestRegressionAliasExpansion in base_test.go).

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
