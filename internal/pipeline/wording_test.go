package pipeline

import (
	"regexp"
	"strings"
	"testing"
)

// Errors whose words point at the cause: each case has one cause, and the
// error for it must name that cause (match says what it must say), while
// the errors that would send the user elsewhere (absent) are not given.
func TestErrorsNameTheirCause(t *testing.T) {
	mb := func(old, repl string) string { return miniBaseWith(t, old, repl) }
	edges := "runtime:\n  edges:\n    - {from: 0, to: 1}\n    - {from: 1, to: 2}\n"
	const stagesBase = "stages:\n  - stage_id: 0\n  - stage_id: 1\n    input_connectors: {from_stage_0: c}\nconnectors:\n  c: {name: SharedMemoryConnector}\nedges:\n  - {from: 0, to: 1}\n"
	for _, c := range []struct {
		name   string
		spec   Spec   // planned, unless check is set
		check  string // a config for validate_stage_config
		code   string
		path   string
		match  string   // a regexp the detail matches
		absent []string // codes that must not be given
	}{
		{name: "an edge to a stage that does not exist", spec: Spec{BaseConfig: miniBase + edges + "    - {from: 2, to: 9}\n"},
			code: "edge_stage_unknown", path: "base_config", match: `runtime.edges has 2 → 9, but there is no stage 9 \(the config has stages 0, 1, 2\)`, absent: []string{"edge_not_in_inputs"}},
		{name: "an edge from a stage that does not exist", spec: Spec{BaseConfig: miniBase + edges + "    - {from: 7, to: 2}\n"},
			code: "edge_stage_unknown", path: "base_config", match: `there is no stage 7`, absent: []string{"edge_not_in_inputs"}},
		{name: "an edge to a stage that does not exist, stages dialect", check: stagesBase + "  - {from: 1, to: 4}\n",
			code: "edge_stage_unknown", match: `^edges has 1 → 4, but there is no stage 4`},
		{name: "an edge from a stage to itself", spec: Spec{BaseConfig: miniBase + edges + "    - {from: 2, to: 2}\n"},
			code: "edge_self", path: "base_config", match: `2 → 2; a stage cannot read its own output`, absent: []string{"edge_not_in_inputs"}},
		{name: "an input from a stage that does not exist, with edges", spec: Spec{BaseConfig: mb("engine_input_source: [1]", "engine_input_source: [1, 9]") + edges},
			code: "input_unknown", path: "base_config", match: `reads from stage 9, which is not in the config; fix engine_input_source`, absent: []string{"edge_missing"}},
		{name: "an input from a stage that does not exist, stages dialect", check: strings.Replace(stagesBase, "from_stage_0", "from_stage_7", 1),
			code: "input_unknown", match: `fix its input_connectors or the edges into it`},
		{name: "two stages with one id", spec: Spec{BaseConfig: mb("  - stage_id: 2\n", "  - stage_id: 1\n")},
			code: "stage_id_duplicate", path: "base_config", match: `stage_id 1 is used by`, absent: []string{"input_self"}},
		{name: "an edge that cannot be read", spec: Spec{BaseConfig: miniBase + "runtime:\n  edges:\n    - {from: 0}\n    - {from: 1, to: 2}\n"},
			code: "edge_missing", path: "base_config", match: `no 0 → 1 edge; add it \(or fix the entry at line 16, if it is meant to be that edge\)`},
		{name: "unit_prefix too long", spec: Spec{Service: ServiceSpec{UnitPrefix: strings.Repeat("a", 201)}},
			code: "systemd_unit_prefix_invalid", path: "systemd.unit_prefix", match: `^it has 201 characters; use at most 200`},
		{name: "unit_prefix with a slash", spec: Spec{Service: ServiceSpec{UnitPrefix: "a/b"}},
			code: "systemd_unit_prefix_invalid", path: "systemd.unit_prefix", match: `use letters, digits`},
		{name: "a model id with a space", spec: Spec{Model: "Qwen/Qwen3 Omni"},
			code: "model_invalid", path: "model", match: `org/name`, absent: []string{"preset_not_inferred", "preset_variant_unknown"}},
		{name: "a listed device the host does not have", spec: Spec{GPUs: ptr(4), Prefill: RoleSpec{Devices: []int{5}}},
			code: "gpus_exceeded", path: "prefill.devices", match: `^prefill \(stage 0\) is placed on GPU 5, but gpus = 4 gives each host GPUs 0-3`},
		{name: "too few GPUs for the layout", spec: Spec{GPUs: ptr(2)},
			code: "gpus_exceeded", path: "gpus", match: `needs devices 0-2 \(3 GPUs\) but gpus = 2`},
		{name: "a parallel size written as text", spec: Spec{StageOverrides: map[string]StageOverride{"talker": {EngineArgs: map[string]any{"tensor_parallel_size": "2"}}}},
			code: "tensor_parallel_size_range", path: "stage_overrides.talker.engine_args.tensor_parallel_size", match: `the text "2", not a number; write it without quotes`},
		{name: "tensor_parallel_size 0", spec: Spec{Prefill: RoleSpec{TensorParallelSize: ptr(0)}},
			code: "tensor_parallel_size_range", path: "prefill.tensor_parallel_size", match: `it is 0`, absent: []string{"tp_mismatch"}},
		{name: "an override host that is not an address", spec: Spec{StageOverrides: map[string]StageOverride{"talker": {Host: "x"}}},
			code: "host_invalid", path: "stage_overrides.talker.host", match: `not an IP address`, absent: []string{"host_missing"}},
		{name: "a host missing beside a usable one", spec: Spec{Decode: RoleSpec{Host: "10.0.0.2"}},
			code: "host_missing", path: "prefill.host", match: `spans 2 hosts`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ds Diagnostics
			if c.check != "" {
				ds = Check([]byte(c.check))
			} else {
				spec := c.spec
				if spec.Model == "" {
					spec.Model = seedModel
				}
				_, ds = Plan(spec)
			}
			got := codesOf(ds, c.code)
			if len(got) == 0 || got[0].Path.String() != c.path || !regexp.MustCompile(c.match).MatchString(got[0].Detail) {
				t.Fatalf("want %s at %q matching %q:\n%s", c.code, c.path, c.match, describeDiags(ds))
			}
			for _, code := range c.absent {
				if hasCodeAny(ds, code) {
					t.Errorf("also %s, which points elsewhere:\n%s", code, describeDiags(ds))
				}
			}
		})
	}
	// The limit is the limit: 200 characters plan.
	if _, ds := Plan(Spec{Model: seedModel, Service: ServiceSpec{UnitPrefix: strings.Repeat("a", 200)}}); hasCodeAny(ds, "systemd_unit_prefix_invalid") {
		t.Errorf("a 200-character unit_prefix is refused: %s", describeDiags(ds))
	}
}
