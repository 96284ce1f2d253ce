package pipeline

import (
	"regexp"
	"strings"
	"testing"
)

// The bad-input tables live beside the step that reports each error
// (spec_check_test.go, base_test.go, graph_test.go, ...); this file holds
// the fixture and the runner they share, and the test that one plan
// reports the problems of every step together.

// miniBase is a small valid stage_args config: thinker → talker → code2wav.
// The bad-input tables break one thing in it at a time.
const miniBase = `stage_args:
  - stage_id: 0
    engine_args: {model_stage: thinker, worker_type: ar, gpu_memory_utilization: 0.5}
    final_output: true
    final_output_type: text
  - stage_id: 1
    engine_args: {model_stage: talker, worker_type: ar, gpu_memory_utilization: 0.4}
    engine_input_source: [0]
  - stage_id: 2
    engine_args: {model_stage: code2wav, worker_type: generation, gpu_memory_utilization: 0.1}
    engine_input_source: [1]
    final_output: true
    final_output_type: audio
`

// miniBaseWith replaces one fragment of miniBase, failing loudly when the
// fragment is not there (so a case cannot silently test the valid base).
func miniBaseWith(t *testing.T, old, replacement string) string {
	t.Helper()
	if !strings.Contains(miniBase, old) {
		t.Fatalf("miniBase has no %q", old)
	}
	return strings.Replace(miniBase, old, replacement, 1)
}

// fixHint matches an instruction in a Detail: a verb that tells the user
// what to do, in the imperative, opening a sentence or a clause ("Set
// preset to ...", "..., or lower tensor_parallel_size"). The verb alone
// anywhere would pass a detail that only uses the word ("the units run as
// ...").
var fixHint = regexp.MustCompile(`(?i)(?:^|[.:;!?)]\s+|,\s+(?:or\s+|and\s+|then\s+)?|\b(?:or|then|and|either|instead|to fix it,?|so)\s+|\(\s*)` +
	`(use|set|remove|give|list|choose|write|pass|raise|lower|move|swap|widen|make|add|fix|mark|define|replace|unreserve|keep|start|leave|run|put|drop|rename|install|split|name|point|free|shorten|quote|escape|take)\b`)

// planDiagCase is one bad input: the spec, and the error Plan must report
// for it at the attribute path.
type planDiagCase struct {
	name string
	spec func(t *testing.T) Spec
	code string
	path string
}

// tpSizes is a prefill and a decode role with these tensor-parallel sizes.
func tpSizes(p, d int) (RoleSpec, RoleSpec) {
	return RoleSpec{TensorParallelSize: ptr(p)}, RoleSpec{TensorParallelSize: ptr(d)}
}

// runPlanDiagnostics plans each case and wants it refused with an error of
// the case's code at its path, with a summary, and a detail that says how to
// fix it. Each step's test file holds the table of the errors that step
// reports.
func runPlanDiagnostics(t *testing.T, tests []planDiagCase) {
	t.Helper()
	runStepDiagnostics(t, tests, func(t *testing.T, spec Spec) Diagnostics {
		res, ds := Plan(spec)
		if res != nil {
			t.Fatalf("Plan succeeded (warnings %v)", ds.Codes())
		}
		return ds
	})
}

// runStepDiagnostics is runPlanDiagnostics for the steps step runs on
// each case's spec, without the rest of Plan: what they report must hold
// the case's error.
func runStepDiagnostics(t *testing.T, tests []planDiagCase, step func(t *testing.T, spec Spec) Diagnostics) {
	t.Helper()
	if len(tests) == 0 {
		t.Fatal("no cases")
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := step(t, tc.spec(t))
			var found *Diagnostic
			for i, d := range ds {
				if d.Code.String() == tc.code && d.Path.String() == tc.path {
					found = &ds[i]
					break
				}
			}
			if found == nil {
				t.Fatalf("no %s at %q; got:\n%s", tc.code, tc.path, describeDiags(ds))
			}
			seen[tc.code] = true
			if found.Severity != SeverityError {
				t.Errorf("severity %v, want error", found.Severity)
			}
			if found.Summary == "" || found.Detail == "" {
				t.Errorf("empty summary or detail: %+v", *found)
			}
			if !fixHint.MatchString(found.Detail) {
				t.Errorf("detail %q does not say how to fix it", found.Detail)
			}
			for _, d := range ds {
				if d.Code.String() == "" {
					t.Errorf("a diagnostic has no code: %+v", d)
				}
			}
		})
	}
	t.Logf("%d cases, %d distinct codes", len(tests), len(seen))
}

// TestPlanCollectsEveryProblem: one plan reports every independent problem
// it can see, so a user fixes them in one round.
func TestPlanCollectsEveryProblem(t *testing.T) {
	_, ds := Plan(Spec{
		Model:         seedModel,
		Format:        "toml",
		ConfigPath:    "relative.yaml",
		GPUs:          ptr(0),
		Prefill:       RoleSpec{TensorParallelSize: ptr(0), Devices: []int{-2}},
		Decode:        RoleSpec{MaxNumSeqs: ptr(-1), Host: "bad host"},
		PortRange:     &PortRange{First: 10, Last: 5},
		ReservedPorts: []int{70000},
		APIPort:       ptr(0),
		Connector:     ConnectorSpec{Name: "Nope"},
	})
	want := map[string]string{
		"format_unknown":             "format",
		"config_path_not_absolute":   "config_path",
		"gpus_range":                 "gpus",
		"tensor_parallel_size_range": "prefill.tensor_parallel_size",
		"device_negative":            "prefill.devices[0]",
		"max_num_seqs_range":         "decode.max_num_seqs",
		"host_invalid":               "decode.host",
		"port_range_inverted":        "port_range",
		"reserved_port_invalid":      "reserved_ports",
		"port_invalid":               "api_port",
		"connector_unknown":          "connector.name",
	}
	for code, path := range want {
		if !hasCode(ds, code, path) {
			t.Errorf("missing %s at %s", code, path)
		}
	}
	if len(ds.Errors()) < len(want) {
		t.Errorf("%d errors, want at least %d:\n%s", len(ds.Errors()), len(want), describeDiags(ds))
	}
	// Problems in the base config's graph are collected together too.
	bad := strings.Replace(miniBase, "engine_input_source: [1]", "engine_input_source: [9]", 1)
	bad = strings.ReplaceAll(bad, "final_output: true", "final_output: false")
	bad += "runtime:\n  edges:\n    - {from: 0, to: 2}\n"
	_, ds = Plan(Spec{Model: seedModel, BaseConfig: bad, Prefill: RoleSpec{MaxNumSeqs: ptr(0)}})
	for _, code := range []string{"input_unknown", "no_final_output", "edge_not_in_inputs", "edge_missing", "max_num_seqs_range"} {
		if !hasCodeAny(ds, code) {
			t.Errorf("missing %s; got %v", code, ds.Codes())
		}
	}
}

// A wrong input that placement or the ports do not read does not hide
// their problems: one plan reports both. An input they do read stops
// them, since their problems would follow from it.
func TestPlanJudgesPlacementPastIndependentErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec Spec
		want []string // codes that must all be reported
		not  []string // codes that must not
	}{
		{"a relative config_path and too few GPUs", Spec{Model: seedModel, ConfigPath: "deploy.yaml", GPUs: ptr(2)},
			[]string{"config_path_not_absolute", "gpus_exceeded"}, nil},
		{"a connector typo and too few GPUs", Spec{Model: seedModel, Connector: ConnectorSpec{Name: "NixlConector"}, GPUs: ptr(2)},
			[]string{"connector_unknown", "gpus_exceeded"}, nil},
		{"a relative config_path and a port in reserved_ports", Spec{Model: seedModel, ConfigPath: "deploy.yaml", Prefill: RoleSpec{BootstrapPort: ptr(26000)}, ReservedPorts: []int{26000}},
			[]string{"config_path_not_absolute", "port_reserved"}, nil},
		// Placement reads the prefill settings: with one wrong it is not
		// judged.
		{"a wrong prefill setting and too few GPUs", Spec{Model: seedModel, Prefill: RoleSpec{MaxNumSeqs: ptr(0)}, GPUs: ptr(2)},
			[]string{"max_num_seqs_range"}, []string{"gpus_exceeded"}},
		// The ports read the connector: with it unknown they are not judged.
		{"a connector typo and a reserved port", Spec{Model: seedModel, Connector: ConnectorSpec{Name: "NixlConector"}, Prefill: RoleSpec{BootstrapPort: ptr(26000)}, ReservedPorts: []int{26000}},
			[]string{"connector_unknown"}, []string{"port_reserved"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, ds := Plan(tc.spec)
			if res != nil {
				t.Fatal("the plan succeeded")
			}
			for _, code := range tc.want {
				if !hasCodeAny(ds, code) {
					t.Errorf("missing %s:\n%s", code, describeDiags(ds))
				}
			}
			for _, code := range tc.not {
				if hasCodeAny(ds, code) {
					t.Errorf("%s reported, though it would follow from another error:\n%s", code, describeDiags(ds))
				}
			}
		})
	}
}
