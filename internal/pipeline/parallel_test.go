package pipeline

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// Every parallel size counts in placement, wherever it is given: the typed
// tensor_parallel_size, engine_args on prefill and decode, or a stage
// override's engine_args and num_replicas.
func TestPlan_ParallelSizesCountInPlacement(t *testing.T) {
	pp2 := map[string]any{"pipeline_parallel_size": int64(2)}
	cases := []struct {
		name string
		spec Spec
		want string // stage devices, "role:model_stage=devices" in stage order
	}{
		{"recipe", Spec{Model: seedModel},
			"prefill:thinker=[0] decode:thinker=[1] stage:talker=[2] stage:code2wav=[2]"},
		{"pipeline parallel on both sides", Spec{Model: seedModel, Prefill: RoleSpec{EngineArgs: pp2}, Decode: RoleSpec{EngineArgs: pp2}},
			"prefill:thinker=[0 1] decode:thinker=[2 3] stage:talker=[4] stage:code2wav=[4]"},
		{"pipeline parallel on decode", Spec{Model: seedModel, Decode: RoleSpec{EngineArgs: pp2}},
			"prefill:thinker=[0] decode:thinker=[1 2] stage:talker=[3] stage:code2wav=[3]"},
		{"tensor × pipeline", Spec{Model: seedModel,
			Prefill: RoleSpec{TensorParallelSize: ptr(2), EngineArgs: pp2}, Decode: RoleSpec{TensorParallelSize: ptr(2), EngineArgs: pp2}},
			"prefill:thinker=[0 1 2 3] decode:thinker=[4 5 6 7] stage:talker=[8] stage:code2wav=[8]"},
		{"data parallel on the talker", Spec{Model: seedModel, StageOverrides: map[string]StageOverride{
			"talker": {EngineArgs: map[string]any{"data_parallel_size": int64(2)}}}},
			"prefill:thinker=[0] decode:thinker=[1] stage:talker=[2 3] stage:code2wav=[2]"},
		{"pipeline parallel on code2wav", Spec{Model: seedModel, StageOverrides: map[string]StageOverride{
			"code2wav": {EngineArgs: pp2}}},
			"prefill:thinker=[0] decode:thinker=[1] stage:talker=[2] stage:code2wav=[2 3]"},
		{"replicas around the PD pair", Spec{Model: seedModel,
			Prefill: RoleSpec{Devices: []int{0}}, Decode: RoleSpec{Devices: []int{2}},
			StageOverrides: map[string]StageOverride{"talker": {NumReplicas: ptr(2)}}},
			"prefill:thinker=[0] decode:thinker=[2] stage:talker=[1 3] stage:code2wav=[1]"},
		{"replicas of both downstream stages", Spec{Model: seedModel,
			Prefill: RoleSpec{Devices: []int{1}}, Decode: RoleSpec{Devices: []int{3}},
			StageOverrides: map[string]StageOverride{"talker": {NumReplicas: ptr(3)}, "code2wav": {NumReplicas: ptr(2)}}},
			"prefill:thinker=[1] decode:thinker=[3] stage:talker=[0 2 4] stage:code2wav=[0 2]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustPlan(t, c.spec)
			var got []string
			pd := map[int]bool{}
			for _, s := range r.Stages {
				got = append(got, fmt.Sprintf("%s:%s=%v", s.Role, s.ModelStage, s.Devices))
				if s.Role != RoleStage {
					for _, d := range s.Devices {
						pd[d] = true
					}
				}
			}
			if g := strings.Join(got, " "); g != c.want {
				t.Fatalf("devices:\n got %s\nwant %s", g, c.want)
			}
			for _, s := range r.Stages {
				for _, d := range s.Devices {
					if s.Role == RoleStage && pd[d] {
						t.Errorf("%s (stage %d) was placed on GPU %d of the PD pair", s.ModelStage, s.StageID, d)
					}
				}
			}
			// The planned config passes the check validate_stage_config
			// runs, device counts included.
			if ds := Check([]byte(r.ConfigYAML)); ds.HasErrors() {
				t.Fatalf("the planned config fails its own check:\n%s", describeDiags(ds))
			}
		})
	}
}

// Parallel sizes that overflow, or are not whole numbers, are errors at the
// attribute they came from; nothing wraps around into a small device count.
func TestPlan_ParallelSizesOutOfRange(t *testing.T) {
	huge := int64(MaxWhole)
	cases := []struct {
		name       string
		spec       Spec
		code, path string
	}{
		{"tensor × pipeline overflows", Spec{Model: seedModel,
			Prefill: RoleSpec{TensorParallelSize: ptr(MaxWhole), EngineArgs: map[string]any{"pipeline_parallel_size": huge}},
			Decode:  RoleSpec{TensorParallelSize: ptr(MaxWhole), EngineArgs: map[string]any{"pipeline_parallel_size": huge}}},
			"world_size_range", "prefill.tensor_parallel_size"},
		{"tensor parallel alone beyond a host, beside pipeline parallel", Spec{Model: seedModel,
			Prefill: RoleSpec{TensorParallelSize: ptr(MaxWhole), EngineArgs: map[string]any{"pipeline_parallel_size": int64(2)}},
			Decode:  RoleSpec{TensorParallelSize: ptr(MaxWhole), EngineArgs: map[string]any{"pipeline_parallel_size": int64(2)}}},
			"world_size_range", "prefill.tensor_parallel_size"},
		{"pipeline parallel beyond a host", Spec{Model: seedModel,
			Prefill: RoleSpec{EngineArgs: map[string]any{"pipeline_parallel_size": int64(4096)}}},
			"world_size_range", "prefill.engine_args"},
		{"pipeline parallel fractional", Spec{Model: seedModel,
			Decode: RoleSpec{EngineArgs: map[string]any{"pipeline_parallel_size": 1.5}}},
			"pipeline_parallel_size_range", "decode.engine_args.pipeline_parallel_size"},
		{"data parallel zero", Spec{Model: seedModel,
			StageOverrides: map[string]StageOverride{"talker": {EngineArgs: map[string]any{"data_parallel_size": int64(0)}}}},
			"data_parallel_size_range", "stage_overrides.talker.engine_args.data_parallel_size"},
		{"data parallel beyond int32", Spec{Model: seedModel,
			StageOverrides: map[string]StageOverride{"talker": {EngineArgs: map[string]any{"data_parallel_size": int64(math.MaxInt64)}}}},
			"data_parallel_size_range", "stage_overrides.talker.engine_args.data_parallel_size"},
		{"replicas × data parallel overflow", Spec{Model: seedModel,
			StageOverrides: map[string]StageOverride{"talker": {NumReplicas: ptr(MaxWhole), EngineArgs: map[string]any{"data_parallel_size": huge}}}},
			"world_size_range", "stage_overrides.talker"},
		{"pipeline parallel beyond gpus", Spec{Model: seedModel, GPUs: ptr(4),
			Prefill: RoleSpec{EngineArgs: map[string]any{"pipeline_parallel_size": int64(2)}},
			Decode:  RoleSpec{EngineArgs: map[string]any{"pipeline_parallel_size": int64(2)}}},
			"gpus_exceeded", "gpus"},
		{"devices fewer than tensor × pipeline", Spec{Model: seedModel,
			Prefill: RoleSpec{Devices: []int{0, 1}, EngineArgs: map[string]any{"pipeline_parallel_size": int64(2)}, TensorParallelSize: ptr(2)},
			Decode:  RoleSpec{TensorParallelSize: ptr(2)}},
			"devices_world_size", "prefill.devices"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, ds := Plan(c.spec)
			if r != nil || !hasCode(ds, c.code, c.path) {
				t.Fatalf("want %s at %s, got:\n%s", c.code, c.path, describeDiags(ds))
			}
		})
	}
}

// stageParallel refuses a parallel size in stage_overrides that is not a
// positive whole number.
func TestParallelDiagnostics(t *testing.T) {
	m := seedModel
	runPlanDiagnostics(t, []planDiagCase{
		{"override TP not a number", func(*testing.T) Spec {
			return Spec{Model: m, StageOverrides: map[string]StageOverride{"talker": {EngineArgs: map[string]any{"tensor_parallel_size": "2"}}}}
		}, "tensor_parallel_size_range", "stage_overrides.talker.engine_args.tensor_parallel_size"},
	})
}
