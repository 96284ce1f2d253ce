package pipeline

import (
	"reflect"
	"testing"
)

// apply writes each planned stage into the config: the PD marks, the
// user's engine_args on the stage they were given for and no other, the
// sizes, the KV transfer config of each side, and, across hosts only, each
// stage's address. A nil want is a key that must be absent.
func TestApplyStages(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		want map[string]any
	}{
		{"PD marks", Spec{Model: seedModel}, map[string]any{
			"stage_args.0.is_prefill_only": true,
			"stage_args.0.final_output":    false,
			"stage_args.1.is_decode_only":  true,
			"stage_args.1.final_output":    true,
			"stage_args.2.is_prefill_only": nil,
			"stage_args.2.is_decode_only":  nil,
		}},
		{"prefill engine_args on prefill only", Spec{Model: seedModel, Prefill: RoleSpec{EngineArgs: map[string]any{"max_model_len": int64(4096)}}}, map[string]any{
			"stage_args.0.engine_args.max_model_len": 4096,
			"stage_args.1.engine_args.max_model_len": nil,
		}},
		{"decode engine_args on decode only", Spec{Model: seedModel, Decode: RoleSpec{EngineArgs: map[string]any{"max_model_len": int64(2048)}}}, map[string]any{
			"stage_args.0.engine_args.max_model_len": nil,
			"stage_args.1.engine_args.max_model_len": 2048,
		}},
		{"override on its stage", Spec{Model: seedModel, StageOverrides: map[string]StageOverride{"talker": {
			EngineArgs: map[string]any{"max_model_len": int64(1024)}, GPUMemoryUtilization: ptr(0.3), MaxNumSeqs: ptr(3),
		}}}, map[string]any{
			"stage_args.2.engine_args.max_model_len":          1024,
			"stage_args.2.engine_args.gpu_memory_utilization": 0.3,
			"stage_args.2.engine_args.max_num_seqs":           3,
			"stage_args.3.engine_args.max_model_len":          nil,
		}},
		{"sizes of the pair", Spec{Model: seedModel, Prefill: RoleSpec{GPUMemoryUtilization: ptr(0.7)}, Decode: RoleSpec{MaxNumSeqs: ptr(8)}}, map[string]any{
			"stage_args.0.engine_args.gpu_memory_utilization": 0.7,
			"stage_args.0.engine_args.tensor_parallel_size":   1,
			"stage_args.1.engine_args.max_num_seqs":           8,
		}},
		{"KV roles", Spec{Model: seedModel}, map[string]any{
			"stage_args.0.engine_args.kv_transfer_config.kv_role": "kv_producer",
			"stage_args.1.engine_args.kv_transfer_config.kv_role": "kv_consumer",
			"stage_args.2.engine_args.kv_transfer_config":         nil,
		}},
		{"one host names no address", Spec{Model: seedModel, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.1"}}, map[string]any{
			"stage_args.0.runtime.env.VLLM_HOST_IP": nil,
			"stage_args.3.runtime.env.VLLM_HOST_IP": nil,
		}},
		{"across hosts each stage its address", Spec{Model: seedModel, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}}, map[string]any{
			"stage_args.0.runtime.env.VLLM_HOST_IP": "10.0.0.1",
			"stage_args.1.runtime.env.VLLM_HOST_IP": "10.0.0.2",
			"stage_args.3.runtime.env.VLLM_HOST_IP": "10.0.0.2",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := config(t, mustPlan(t, tc.spec).ConfigYAML)
			for _, path := range sortedStrings(tc.want) {
				if g, w := digPath(got, path), tc.want[path]; !reflect.DeepEqual(g, w) {
					t.Errorf("%s = %#v, want %#v", path, g, w)
				}
			}
		})
	}
}
