package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pdConfig is a sound, already split config: prefill (0) → decode (1) →
// talker (2). The cases below break one rule of the reference's section 4
// at a time and expect Check to name it.
const pdConfig = `stage_args:
  - stage_id: 0
    is_prefill_only: true
    runtime:
      devices: "0"
    engine_args:
      model_stage: thinker
      tensor_parallel_size: 1
      gpu_memory_utilization: 0.9
      kv_transfer_config:
        kv_connector: MooncakeConnector
        kv_role: kv_producer
        kv_rank: 0
        kv_parallel_size: 2
        kv_connector_extra_config:
          mooncake_bootstrap_port: 25201
    final_output: false
  - stage_id: 1
    is_decode_only: true
    runtime:
      devices: "1"
    engine_args:
      model_stage: thinker
      tensor_parallel_size: 1
      gpu_memory_utilization: 0.9
      kv_transfer_config:
        kv_connector: MooncakeConnector
        kv_role: kv_consumer
        kv_rank: 1
        kv_parallel_size: 2
        kv_connector_extra_config:
          mooncake_bootstrap_port: 25202
    engine_input_source: [0]
    final_output: true
    final_output_type: text
  - stage_id: 2
    runtime:
      devices: "2"
    engine_args:
      model_stage: talker
      gpu_memory_utilization: 0.5
    engine_input_source: [1]
    final_output: true
    final_output_type: audio
`

// edit applies replacements to pdConfig in order; n is how many times each
// old string must occur (the first n are replaced), so a case that no longer
// matches the fixture fails instead of checking the sound config.
type edit struct {
	old, new string
	n        int
}

func pdConfigWith(t *testing.T, edits ...edit) string {
	t.Helper()
	s := pdConfig
	for _, e := range edits {
		n := e.n
		if n == 0 {
			n = 1
		}
		if c := strings.Count(s, e.old); c < n {
			t.Fatalf("pdConfig has %d of %q, the edit needs %d", c, e.old, n)
		}
		s = strings.Replace(s, e.old, e.new, n)
	}
	return s
}

func TestCheckSound(t *testing.T) {
	if ds := Check([]byte(pdConfig)); len(ds) != 0 {
		t.Fatalf("the sound fixture has diagnostics:\n%s", describeDiags(ds))
	}
	// Every config the planner writes passes Check.
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			res := mustPlan(t, tc.spec(t))
			for _, d := range Check([]byte(res.ConfigYAML)) {
				if d.Severity == SeverityError {
					t.Errorf("planned config fails Check: %s", d)
				}
			}
		})
	}
}

func TestCheckRules(t *testing.T) {
	tests := []struct {
		name  string
		src   func(t *testing.T) string
		code  string
		inMsg string // fragment of the summary or detail
	}{
		{"duplicate stage ids", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "  - stage_id: 2\n", new: "  - stage_id: 1\n"})
		}, "stage_id_duplicate", "stage_id 1 is used by"},
		{"stage without an id", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "  - stage_id: 2\n    runtime", new: "  - runtime"})
		}, "stage_id_missing", "needs a whole-number stage_id"},
		{"input from a missing stage", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "engine_input_source: [1]", new: "engine_input_source: [1, 7]"})
		}, "input_unknown", "reads from stage 7"},
		{"stage reads itself", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "engine_input_source: [1]", new: "engine_input_source: [1, 2]"})
		}, "input_self", "lists itself"},
		{"inputs unreadable", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "engine_input_source: [1]", new: "engine_input_source: [talker]"})
		}, "stage_inputs_invalid", "not a stage id"},
		{"no entry stage", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "    final_output: false\n", new: "    final_output: false\n    engine_input_source: [2]\n"})
		}, "no_entry_stage", "none receives the prompt"},
		{"cycle", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "    final_output: false\n", new: "    final_output: false\n    engine_input_source: [2]\n"})
		}, "graph_cycle", "feed each other in a loop"},
		{"no final output", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "final_output: true", new: "final_output: false", n: 2})
		}, "no_final_output", "final_output: true"},
		{"two PD pairs", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "  - stage_id: 2\n", new: "  - stage_id: 2\n    is_prefill_only: true\n"})
		}, "pd_multiple_pairs", "one PD pair per pipeline"},
		{"prefill without decode", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "    is_decode_only: true\n", new: ""})
		}, "pd_prefill_alone", "PD is silently off"},
		{"decode without prefill", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "    is_prefill_only: true\n", new: ""})
		}, "pd_decode_alone", "no stage is prefill-only"},
		{"decode does not read prefill", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "    engine_input_source: [0]\n", new: ""})
		}, "pd_decode_input", "must list 0 in engine_input_source"},
		{"kv_transfer_config missing on prefill", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "      kv_transfer_config:\n        kv_connector: MooncakeConnector\n        kv_role: kv_producer\n", new: "      kv_other:\n        kv_connector: MooncakeConnector\n        kv_role: kv_producer\n"})
		}, "kv_config_missing", "is missing"},
		{"kv_transfer_config not a mapping", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "      kv_transfer_config:\n        kv_connector: MooncakeConnector\n        kv_role: kv_consumer\n        kv_rank: 1\n        kv_parallel_size: 2\n        kv_connector_extra_config:\n          mooncake_bootstrap_port: 25202\n",
				new: "      kv_transfer_config: '{\"kv_connector\": \"MooncakeConnector\"}'\n"})
		}, "kv_config_missing", "is not a mapping"},
		{"prefill role consumer", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "kv_role: kv_producer", new: "kv_role: kv_consumer"})
		}, "kv_role_prefill", `kv_role "kv_consumer"`},
		{"decode role producer", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "kv_role: kv_consumer", new: "kv_role: kv_producer"})
		}, "kv_role_decode", `kv_role "kv_producer"`},
		{"empty kv_connector", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "kv_connector: MooncakeConnector", new: `kv_connector: ""`})
		}, "kv_connector_empty", "kv_connector is empty"},
		{"different kv_connector", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "kv_connector: MooncakeConnector\n        kv_role: kv_consumer", new: "kv_connector: NixlConnector\n        kv_role: kv_consumer"})
		}, "kv_connector_mismatch", `"NixlConnector"`},
		{"kv_buffer_device differs", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "kv_role: kv_producer", new: "kv_role: kv_producer\n        kv_buffer_device: cuda"},
				edit{old: "kv_role: kv_consumer", new: "kv_role: kv_consumer\n        kv_buffer_device: cpu"})
		}, "kv_buffer_device_mismatch", `"cuda" and decode "cpu"`},
		{"kv_buffer_size differs", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "kv_role: kv_producer", new: "kv_role: kv_producer\n        kv_buffer_size: 1.0e9"},
				edit{old: "kv_role: kv_consumer", new: "kv_role: kv_consumer\n        kv_buffer_size: 2.0e9"})
		}, "kv_buffer_size_mismatch", "kv_buffer_size differs"},
		{"TP differs with Mooncake", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "      tensor_parallel_size: 1\n      gpu_memory_utilization: 0.9\n      kv_transfer_config:\n        kv_connector: MooncakeConnector\n        kv_role: kv_consumer",
				new: "      tensor_parallel_size: 2\n      gpu_memory_utilization: 0.9\n      kv_transfer_config:\n        kv_connector: MooncakeConnector\n        kv_role: kv_consumer"},
				edit{old: `devices: "1"`, new: `devices: "1,3"`})
		}, "tp_mismatch", "refuses different tensor_parallel_size"},
		{"NIXL decode TP below prefill", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "kv_connector: MooncakeConnector", new: "kv_connector: NixlConnector", n: 2},
				edit{old: "      tensor_parallel_size: 1\n", new: "      tensor_parallel_size: 2\n"},
				edit{old: `devices: "0"`, new: `devices: "0,3"`})
		}, "tp_mismatch", "NixlConnector too"},
		{"device count not the world size", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: `devices: "0"`, new: `devices: "0,3"`})
		}, "devices_world_size", "runs on 2 device(s)"},
		{"pipeline parallel counts", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "      model_stage: talker\n", new: "      model_stage: talker\n      pipeline_parallel_size: 2\n"})
		}, "devices_world_size", "pipeline_parallel_size 2 needs 2"},
		{"devices unreadable", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: `devices: "2"`, new: `devices: "gpu2"`})
		}, "devices_invalid", `device "gpu2"`},
		{"P and D share a GPU", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: `devices: "1"`, new: `devices: "0"`},
				edit{old: "gpu_memory_utilization: 0.9", new: "gpu_memory_utilization: 0.4", n: 2})
		}, "pd_devices_overlap", "both use device(s) 0"},
		{"same bootstrap port on one host", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "mooncake_bootstrap_port: 25202", new: "mooncake_bootstrap_port: 25201"})
		}, "port_collision", "mooncake_bootstrap_port 25201"},
		{"bootstrap env disagrees", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "      devices: \"0\"\n", new: "      devices: \"0\"\n      env:\n        VLLM_MOONCAKE_BOOTSTRAP_PORT: \"25299\"\n"})
		}, "bootstrap_env_mismatch", "VLLM_MOONCAKE_BOOTSTRAP_PORT is 25299"},
		{"GPU memory over-subscribed", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: `devices: "2"`, new: `devices: "1"`})
		}, "gpu_memory_oversubscribed", "add up to 1.40"},
		{"edge not in the inputs", func(t *testing.T) string {
			return pdConfig + "runtime:\n  enabled: true\n  edges:\n    - {from: 0, to: 1}\n    - {from: 1, to: 2}\n    - {from: 0, to: 2}\n"
		}, "edge_not_in_inputs", "0 → 2"},
		{"input without an edge", func(t *testing.T) string {
			return pdConfig + "runtime:\n  enabled: true\n  edges:\n    - {from: 0, to: 1}\n"
		}, "edge_missing", "no 1 → 2 edge"},
		{"edges not a list", func(t *testing.T) string {
			return pdConfig + "runtime:\n  edges: 3\n"
		}, "edges_invalid", "edges must be a list"},
		{"undefined connector", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "    engine_input_source: [1]\n", new: "    engine_input_source: [1]\n    input_connectors:\n      from_stage_1: missing_conn\n"}) +
				"runtime:\n  connectors:\n    shm: {name: SharedMemoryConnector}\n"
		}, "connector_undefined", `connector "missing_conn"`},
		{"connectors disagree on an edge", func(t *testing.T) string {
			return pdConfigWith(t, edit{old: "    engine_input_source: [1]\n", new: "    engine_input_source: [1]\n    input_connectors:\n      from_stage_1: a\n"},
				edit{old: "    final_output_type: text\n", new: "    final_output_type: text\n    output_connectors:\n      to_stage_2: b\n"}) +
				"runtime:\n  connectors:\n    a: {name: SharedMemoryConnector}\n    b: {name: MooncakeConnector}\n"
		}, "connector_conflict", `sends with "b"`},
		{"stage_args in a stages file", func(*testing.T) string {
			return pdConfig + "stages: []\n"
		}, "config_unreadable", "rejects `stage_args` in a `stages` file"},
		{"not YAML", func(*testing.T) string { return "stage_args: [\n" }, "config_unreadable", "line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ds := Check([]byte(tc.src(t)))
			var found *Diagnostic
			for i := range ds {
				if ds[i].Code.String() == tc.code {
					found = &ds[i]
					break
				}
			}
			if found == nil {
				t.Fatalf("no %s; got:\n%s", tc.code, describeDiags(ds))
			}
			if msg := found.Summary + ": " + found.Detail; !strings.Contains(msg, tc.inMsg) {
				t.Errorf("%q does not mention %q", msg, tc.inMsg)
			}
			if found.Detail == "" {
				t.Error("empty detail")
			}
		})
	}
}

// TestCheckMemoryWarning: shared GPUs above 0.95 but not over 1.0 warn.
func TestCheckMemoryWarning(t *testing.T) {
	src := pdConfigWith(t, edit{old: `devices: "2"`, new: `devices: "1"`},
		edit{old: "      gpu_memory_utilization: 0.9\n      kv_transfer_config:\n        kv_connector: MooncakeConnector\n        kv_role: kv_consumer",
			new: "      gpu_memory_utilization: 0.48\n      kv_transfer_config:\n        kv_connector: MooncakeConnector\n        kv_role: kv_consumer"})
	ds := Check([]byte(src))
	if ds.HasErrors() || len(ds) != 1 || ds[0].Code.String() != "gpu_memory_tight" {
		t.Errorf("want one gpu_memory_tight warning, got:\n%s", describeDiags(ds))
	}
}

// TestCheckUpstreamPD runs Check on upstream's own PD configs, which
// vllm-omni accepts: Check must not report an error on them.
func TestCheckUpstreamPD(t *testing.T) {
	for _, name := range []string{legacyQwen3PD, stageArgsQwen3TTSPD, stagesHunyuanPD} {
		t.Run(name, func(t *testing.T) {
			for _, d := range Check([]byte(readLocal(t, name))) {
				if d.Severity == SeverityError {
					t.Errorf("%s", d)
				}
			}
		})
	}
}

// TestCheckUpstreamNoCrash runs Check and Inspect on every upstream config.
// They must not panic, and a config Inspect reads must give stage ids.
func TestCheckUpstreamNoCrash(t *testing.T) {
	requireShared(t, sharedConfigs)
	files, _ := filepath.Glob(filepath.Join(sharedConfigs, "*", "*.yaml"))
	if len(files) == 0 {
		t.Fatal("no upstream configs")
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		Check(src)
		sum, err := Inspect(src)
		if err != nil {
			t.Errorf("%s: Inspect: %v", filepath.Base(f), err)
			continue
		}
		if len(sum.Stages) == 0 {
			t.Errorf("%s: no stages", filepath.Base(f))
		}
	}
}

// checkGraph, run by Plan on the base config, refuses a stage graph
// vllm-omni would not run.
func TestCheckGraphDiagnostics(t *testing.T) {
	m := seedModel
	runPlanDiagnostics(t, []planDiagCase{
		{"input from a missing stage", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "engine_input_source: [1]", "engine_input_source: [5]")}
		}, "input_unknown", "base_config"},
		{"stage reads itself", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "engine_input_source: [1]", "engine_input_source: [2]")}
		}, "input_self", "base_config"},
		{"cycle", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "final_output_type: text\n", "final_output_type: text\n    engine_input_source: [2]\n")}
		}, "graph_cycle", "base_config"},
		{"no entry stage", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "final_output_type: text\n", "final_output_type: text\n    engine_input_source: [2]\n")}
		}, "no_entry_stage", "base_config"},
		{"no final output", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: strings.ReplaceAll(miniBase, "final_output: true", "final_output: false")}
		}, "no_final_output", "base_config"},
		{"edge not in the inputs", func(*testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBase + "runtime:\n  edges:\n    - {from: 0, to: 1}\n    - {from: 1, to: 2}\n    - {from: 0, to: 2}\n"}
		}, "edge_not_in_inputs", "base_config"},
		{"input without an edge", func(*testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBase + "runtime:\n  edges:\n    - {from: 0, to: 1}\n"}
		}, "edge_missing", "base_config"},
		{"undefined connector", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "engine_input_source: [0]", "engine_input_source: [0]\n    input_connectors: {from_stage_0: nope}") +
				"runtime:\n  connectors:\n    shm: {name: SharedMemoryConnector}\n"}
		}, "connector_undefined", "base_config"},
		{"two connectors on one edge", func(t *testing.T) Spec {
			b := miniBaseWith(t, "engine_input_source: [0]", "engine_input_source: [0]\n    input_connectors: {from_stage_0: a}")
			b = strings.Replace(b, "final_output_type: text\n", "final_output_type: text\n    output_connectors: {to_stage_1: b}\n", 1)
			return Spec{Model: m, BaseConfig: b + "runtime:\n  connectors:\n    a: {name: SharedMemoryConnector}\n    b: {name: MooncakeConnector}\n"}
		}, "connector_conflict", "base_config"},
	})
}

// The planner and the config checks share one tensor-parallel rule:
// vllm-omni's PD validator demands equal sizes whatever the connector.
func TestTPProblem(t *testing.T) {
	tests := []struct {
		class            string
		prefill, decode  int
		wantOK           bool
		wantMentionsName bool
	}{
		{connectorMooncake, 2, 2, true, false},
		{connectorMooncake, 1, 2, false, true},
		{connectorNixl, 1, 2, false, true},
		{connectorNixl, 2, 1, false, true},
		{connectorNixl, 2, 2, true, false},
		{connectorMulti, 2, 4, false, true},
		{connectorMulti, 4, 2, false, true},
		{"SomeFutureConnector", 1, 2, false, true},
	}
	for _, tc := range tests {
		msg := tpProblem(tc.class, tc.prefill, tc.decode)
		if (msg == "") != tc.wantOK {
			t.Errorf("%s prefill %d decode %d: %q", tc.class, tc.prefill, tc.decode, msg)
		}
		if tc.wantMentionsName && !strings.Contains(msg, tc.class) {
			t.Errorf("%q does not name %s", msg, tc.class)
		}
	}
}
