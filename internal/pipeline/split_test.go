package pipeline

import (
	"reflect"
	"strings"
	"testing"
)

// A pipeline whose thinker is not the first stage: an encoder (stage 0)
// feeds the thinker (1), which feeds the talker (2) and code2wav (3). The
// split (rule 3 of the reference) must shift every later id, remap the
// inputs, rename connector keys and keep the edges equal to the inputs.
const encoderFirstBase = `# an encoder in front of the thinker
stage_args:
  - stage_id: 0
    runtime:
      devices: "0"
    engine_args:
      model_stage: encoder
      worker_type: generation
      gpu_memory_utilization: 0.2
    output_connectors:
      to_stage_1: shm
  - stage_id: 1 # the thinker
    runtime:
      devices: "1"
    engine_args:
      model_stage: thinker
      worker_type: ar
      tensor_parallel_size: 1
    engine_input_source: [0]
    final_output: true
    final_output_type: text
    input_connectors:
      from_stage_0: shm
    output_connectors:
      to_stage_2: shm
  - stage_id: 2
    runtime:
      devices: "2"
    engine_args:
      model_stage: talker
      worker_type: ar
      gpu_memory_utilization: 0.5
    engine_input_source: [1]
    input_connectors:
      from_stage_1: shm
    output_connectors:
      to_stage_3: shm
  - stage_id: 3
    runtime:
      devices: "2"
    engine_args:
      model_stage: code2wav
      worker_type: generation
      gpu_memory_utilization: 0.1
    engine_input_source: [2]
    final_output: true
    final_output_type: audio
    input_connectors:
      from_stage_2: shm
runtime:
  enabled: true
  connectors:
    shm:
      name: SharedMemoryConnector
  edges:
    - from: 0
      to: 1
      window_size: -1
    - from: 1
      to: 2
      window_size: -1
    - from: 2
      to: 3
      window_size: -1
`

// A thinker behind an encoder cannot be split: vllm-omni sends every
// request to stage 0 and gives the decode stage the user's prompt, so a
// prefill stage that is not the entry would compute a different prompt's KV
// (releases.CheckPrefillEntry). The error names the base config, or
// split_stage when the user chose the stage.
func TestSplitThinkerNotFirst(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		path string
	}{
		{Spec{Model: seedModel, BaseConfig: encoderFirstBase}, "base_config"},
		{Spec{Model: seedModel, BaseConfig: encoderFirstBase, SplitStage: ptr(1)}, "split_stage"},
		{Spec{Model: seedModel, BaseConfig: encoderFirstBase, SplitStage: ptr(2)}, "split_stage"},
	} {
		if _, ds := Plan(tc.spec); !hasCode(ds, "split_not_entry", tc.path) {
			t.Errorf("split %v: want split_not_entry at %s, got %s", tc.spec.SplitStage, tc.path, describeDiags(ds))
		}
	}
}

func mapKeys(v any) []string {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	keys := sortedStrings(m)
	return keys
}

// The same shape in the stages dialect, with platform overrides that must
// follow the renumbering: the thinker's override applies to both halves.
const stagesPlatformBase = `pipeline: my_pipeline
connectors:
  shm:
    name: SharedMemoryConnector
stages:
  - stage_id: 0
    devices: "0"
    gpu_memory_utilization: 0.3
    output_connectors:
      to_stage_1: shm
  - stage_id: 1
    devices: "1"
    tensor_parallel_size: 1
    input_connectors:
      from_stage_0: shm
    output_connectors:
      to_stage_2: shm
  - stage_id: 2
    devices: "2"
    gpu_memory_utilization: 0.5
    input_connectors:
      from_stage_1: shm
edges:
  - from: 0
    to: 1
    window_size: -1
  - from: 1
    to: 2
    window_size: -1
platforms:
  npu:
    stages:
      - stage_id: 0
        gpu_memory_utilization: 0.4
      - stage_id: 1
        gpu_memory_utilization: 0.5
      - stage_id: 2
        devices: "3"
  rocm:
    stages:
      - stage_id: 2
        enforce_eager: true
`

func TestSplitStagesDialectPlatforms(t *testing.T) {
	// No release registers a PD pipeline, so the stages dialect runs on the
	// user's own registration, named in pipeline, on a release they name.
	res := mustPlan(t, Spec{Model: seedModel, BaseConfig: stagesPlatformBase, SplitStage: ptr(0),
		Pipeline: "my_pipeline_pd", VLLMOmniVersion: "0.28.0",
		StageOverrides: map[string]StageOverride{"stage_1": {GPUMemoryUtilization: ptr(0.4)}}})
	cfg := config(t, res.ConfigYAML)
	if res.Format != "stages" || !has(cfg, "stages") {
		t.Fatalf("a stages base must stay in the stages dialect; format %q", res.Format)
	}
	if got := cfg["pipeline"]; got != "my_pipeline_pd" {
		t.Errorf("pipeline = %v, want the user's my_pipeline_pd", got)
	}
	if got := cfg["async_chunk"]; got != false {
		t.Errorf("async_chunk = %v, want false written out (the deploy loader assumes true)", got)
	}
	st := stageList(t, cfg)
	if len(st) != 4 {
		t.Fatalf("%d stages:\n%s", len(st), res.ConfigYAML)
	}
	for i, s := range st {
		if s["stage_id"] != i {
			t.Errorf("stage %d has stage_id %v", i, s["stage_id"])
		}
		// Topology keys do nothing in this dialect and would fall through
		// to the engine's arguments.
		for _, k := range []string{"engine_input_source", "is_prefill_only", "is_decode_only", "final_output"} {
			if has(s, k) {
				t.Errorf("stage %d has %s, which the stages dialect passes to the engine", i, k)
			}
		}
	}
	for i, w := range []struct{ in, out []string }{{nil, nil}, {nil, []string{"to_stage_2"}}, {[]string{"from_stage_1"}, []string{"to_stage_3"}}, {[]string{"from_stage_2"}, nil}} {
		if got := mapKeys(st[i]["input_connectors"]); !reflect.DeepEqual(got, w.in) {
			t.Errorf("stage %d input_connectors %v, want %v", i, got, w.in)
		}
		if got := mapKeys(st[i]["output_connectors"]); !reflect.DeepEqual(got, w.out) {
			t.Errorf("stage %d output_connectors %v, want %v", i, got, w.out)
		}
	}
	for i, role := range map[int]string{0: "kv_producer", 1: "kv_consumer"} {
		if got := dig(st[i], "kv_transfer_config", "kv_role"); got != role {
			t.Errorf("stage %d kv_role %v, want %s (flat in the stages dialect)", i, got, role)
		}
	}
	wantEdges := []any{}
	for _, e := range [][2]int{{0, 1}, {1, 2}, {2, 3}} {
		wantEdges = append(wantEdges, map[string]any{"from": e[0], "to": e[1], "window_size": -1})
	}
	if got := cfg["edges"]; !reflect.DeepEqual(got, wantEdges) {
		t.Errorf("edges = %v, want %v", got, wantEdges)
	}
	npu := dig(cfg, "platforms", "npu", "stages")
	wantNPU := []any{
		map[string]any{"stage_id": 0, "gpu_memory_utilization": 0.4},
		map[string]any{"stage_id": 1, "gpu_memory_utilization": 0.4},
		map[string]any{"stage_id": 2, "gpu_memory_utilization": 0.5},
		map[string]any{"stage_id": 3, "devices": "3"},
	}
	if !reflect.DeepEqual(npu, wantNPU) {
		t.Errorf("platforms.npu.stages = %v, want %v", npu, wantNPU)
	}
	if got := dig(cfg, "platforms", "rocm", "stages"); !reflect.DeepEqual(got, []any{map[string]any{"stage_id": 3, "enforce_eager": true}}) {
		t.Errorf("platforms.rocm.stages = %v", got)
	}
}

// TestSplitStageSelection checks which stage is split when split_stage is
// unset, and that split_stage overrides the choice: the layout, made from
// the base and the split alone, has the PD pair there.
func TestSplitStageSelection(t *testing.T) {
	tests := []struct {
		name  string
		spec  Spec
		split int // id of the prefill stage in the output
	}{
		{"stages dialect: first autoregressive entry stage", Spec{Model: seedModel, BaseConfig: stagesPlatformBase,
			Pipeline: "my_pipeline_pd", VLLMOmniVersion: "0.28",
			StageOverrides: map[string]StageOverride{"stage_1": {GPUMemoryUtilization: ptr(0.4)}}}, 0},
		{"preset", Spec{Model: seedModel}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, laid := laidOut(t, tc.spec)
			pre, dec := laid.pdPair()
			if pre.id != tc.split || dec.id != tc.split+1 || dec.inputs[0] != pre.id {
				t.Errorf("prefill %d, decode %d reading %v; want %d, %d", pre.id, dec.id, dec.inputs, tc.split, tc.split+1)
			}
		})
	}
}

// chooseSplit and checkNotSplit refuse a split_stage the base config cannot
// be split at, and a base already split.
func TestSplitDiagnostics(t *testing.T) {
	m := seedModel
	runPlanDiagnostics(t, []planDiagCase{
		{"split_stage not in the base", func(*testing.T) Spec { return Spec{Model: m, SplitStage: ptr(7)} }, "split_stage_unknown", "split_stage"},
		{"split_stage a generation stage", func(*testing.T) Spec { return Spec{Model: m, SplitStage: ptr(2)} }, "split_stage_not_autoregressive", "split_stage"},
		{"split_stage a diffusion stage", func(t *testing.T) Spec {
			return Spec{Model: m, SplitStage: ptr(1), BaseConfig: miniBaseWith(t, "  - stage_id: 1\n", "  - stage_id: 1\n    stage_type: diffusion\n")}
		}, "split_stage_not_autoregressive", "split_stage"},
		{"nothing to split", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: strings.ReplaceAll(miniBase, "worker_type: ar", "worker_type: generation")}
		}, "split_stage_not_found", "split_stage"},
		{"base already split", func(t *testing.T) Spec { return Spec{Model: m, BaseConfig: readLocal(t, legacyQwen3PD)} }, "base_already_split", "base_config"},
	})
}
