package pipeline

import (
	"fmt"
	"reflect"
	"sort"
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

func TestSplitThinkerNotFirst(t *testing.T) {
	res := mustPlan(t, Spec{Model: seedModel, BaseConfig: encoderFirstBase})
	cfg := config(t, res.ConfigYAML)
	st := stageList(t, cfg)

	type want struct {
		modelStage string
		inputs     any // decoded engine_input_source, nil when absent
		in, out    []string
		prefill    bool
		decode     bool
	}
	wants := []want{
		{"encoder", nil, nil, []string{"to_stage_1"}, false, false},
		{"thinker", []any{0}, []string{"from_stage_0"}, nil, true, false},
		{"thinker", []any{1}, nil, []string{"to_stage_3"}, false, true},
		{"talker", []any{2}, []string{"from_stage_2"}, []string{"to_stage_4"}, false, false},
		{"code2wav", []any{3}, []string{"from_stage_3"}, nil, false, false},
	}
	if len(st) != len(wants) {
		t.Fatalf("%d stages, want %d:\n%s", len(st), len(wants), res.ConfigYAML)
	}
	for i, w := range wants {
		s := st[i]
		if s["stage_id"] != i {
			t.Errorf("stage %d: stage_id %v", i, s["stage_id"])
		}
		if got := dig(s, "engine_args", "model_stage"); got != w.modelStage {
			t.Errorf("stage %d: model_stage %v, want %s", i, got, w.modelStage)
		}
		if got := s["engine_input_source"]; !reflect.DeepEqual(got, w.inputs) {
			t.Errorf("stage %d: engine_input_source %v, want %v", i, got, w.inputs)
		}
		if got := mapKeys(s["input_connectors"]); !reflect.DeepEqual(got, w.in) {
			t.Errorf("stage %d: input_connectors keys %v, want %v", i, got, w.in)
		}
		if got := mapKeys(s["output_connectors"]); !reflect.DeepEqual(got, w.out) {
			t.Errorf("stage %d: output_connectors keys %v, want %v", i, got, w.out)
		}
		if got := s["is_prefill_only"] == true; got != w.prefill {
			t.Errorf("stage %d: is_prefill_only %v", i, s["is_prefill_only"])
		}
		if got := s["is_decode_only"] == true; got != w.decode {
			t.Errorf("stage %d: is_decode_only %v", i, s["is_decode_only"])
		}
	}

	// Edges equal the input graph, and keep the base's window_size (the new
	// prefill → decode edge copies it from the edge that left the thinker).
	wantEdges := []any{}
	for _, e := range [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}} {
		wantEdges = append(wantEdges, map[string]any{"from": e[0], "to": e[1], "window_size": -1})
	}
	if got := dig(cfg, "runtime", "edges"); !reflect.DeepEqual(got, wantEdges) {
		t.Errorf("runtime.edges = %v, want %v", got, wantEdges)
	}
	if !reflect.DeepEqual(edgesOfInputs(t, st), []Edge{{0, 1}, {1, 2}, {2, 3}, {3, 4}}) {
		t.Errorf("inputs imply edges %v", edgesOfInputs(t, st))
	}
	if !reflect.DeepEqual(res.Edges, []Edge{{0, 1}, {1, 2}, {2, 3}, {3, 4}}) {
		t.Errorf("Result.Edges = %v", res.Edges)
	}
	// Comments survive; the one on the thinker's id line describes both
	// halves, so each copy keeps it.
	if strings.Count(res.ConfigYAML, "# the thinker") != 2 || strings.Count(res.ConfigYAML, "# an encoder in front of the thinker") != 1 {
		t.Errorf("comments were lost or duplicated:\n%s", res.ConfigYAML)
	}
	// Placement follows the recipe: P and D on their own GPUs, the others
	// after them; the encoder sits with the talker group.
	var roles []string
	for _, s := range res.Stages {
		roles = append(roles, fmt.Sprintf("%d:%s:%v", s.StageID, s.Role, s.Devices))
	}
	if got := strings.Join(roles, " "); !strings.Contains(got, "1:prefill:[0]") || !strings.Contains(got, "2:decode:[1]") {
		t.Errorf("stages = %s", got)
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

func edgesOfInputs(t *testing.T, st []map[string]any) []Edge {
	t.Helper()
	var out []Edge
	for _, s := range st {
		ins, _ := s["engine_input_source"].([]any)
		for _, in := range ins {
			from, okFrom := in.(int)
			to, okTo := s["stage_id"].(int)
			if !okFrom || !okTo {
				t.Fatalf("edge %v -> %v is not a pair of ids", in, s["stage_id"])
			}
			out = append(out, Edge{From: from, To: to})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].From < out[j].From || out[i].From == out[j].From && out[i].To < out[j].To
	})
	return out
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
	res := mustPlan(t, Spec{Model: seedModel, BaseConfig: stagesPlatformBase, SplitStage: ptr(1)})
	cfg := config(t, res.ConfigYAML)
	if res.Format != "stages" || !has(cfg, "stages") {
		t.Fatalf("a stages base must stay in the stages dialect; format %q", res.Format)
	}
	if got := cfg["pipeline"]; got != "my_pipeline_pd" {
		t.Errorf("pipeline = %v, want the PD variant my_pipeline_pd", got)
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
	if got := mapKeys(st[3]["input_connectors"]); !reflect.DeepEqual(got, []string{"from_stage_2"}) {
		t.Errorf("last stage input_connectors %v, want [from_stage_2]", got)
	}
	if got := mapKeys(st[2]["output_connectors"]); !reflect.DeepEqual(got, []string{"to_stage_3"}) {
		t.Errorf("decode output_connectors %v, want [to_stage_3]", got)
	}
	if got := dig(st[0], "kv_transfer_config"); got != nil {
		t.Errorf("the encoder got a kv_transfer_config: %v", got)
	}
	for i, role := range map[int]string{1: "kv_producer", 2: "kv_consumer"} {
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
		map[string]any{"stage_id": 1, "gpu_memory_utilization": 0.5},
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
// unset, and that split_stage overrides the choice.
func TestSplitStageSelection(t *testing.T) {
	tests := []struct {
		name  string
		spec  Spec
		split int // id of the prefill stage in the output
	}{
		{"thinker by name", Spec{Model: seedModel, BaseConfig: encoderFirstBase}, 1},
		{"split_stage names the thinker", Spec{Model: seedModel, BaseConfig: encoderFirstBase, SplitStage: ptr(1)}, 1},
		{"split_stage names the talker", Spec{Model: seedModel, BaseConfig: encoderFirstBase, SplitStage: ptr(2),
			StageOverrides: map[string]StageOverride{"thinker": {GPUMemoryUtilization: ptr(0.5)}}}, 2},
		{"stages dialect: first autoregressive entry stage", Spec{Model: seedModel, BaseConfig: stagesPlatformBase,
			StageOverrides: map[string]StageOverride{"stage_1": {GPUMemoryUtilization: ptr(0.4)}}}, 0},
		{"preset", Spec{Model: seedModel}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustPlan(t, tc.spec)
			var pre, dec = -1, -1
			for _, s := range res.Stages {
				switch s.Role {
				case RolePrefill:
					pre = s.StageID
				case RoleDecode:
					dec = s.StageID
				}
			}
			if pre != tc.split || dec != tc.split+1 {
				t.Errorf("prefill %d, decode %d; want %d, %d", pre, dec, tc.split, tc.split+1)
			}
		})
	}
}
