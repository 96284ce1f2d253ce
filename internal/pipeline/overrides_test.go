package pipeline

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// DecodeStageOverrides reads the free-form stage_overrides value the
// provider receives (Terraform numbers arrive as int64 or float64). Shape
// errors must point at the entry and field at fault.
func TestDecodeStageOverrides(t *testing.T) {
	got, ds := DecodeStageOverrides(map[string]any{
		"talker": map[string]any{
			"devices":                []any{int64(2), float64(3)},
			"max_num_seqs":           int64(8),
			"gpu_memory_utilization": float64(0.5),
			"num_replicas":           int64(2),
			"host":                   "10.0.0.3",
			"engine_args":            map[string]any{"max_model_len": int64(4096)},
		},
		"code2wav": map[string]any{"max_num_seqs": float64(1), "gpu_memory_utilization": int64(1), "devices": nil},
	})
	if len(ds) != 0 {
		t.Fatalf("diagnostics:\n%s", describeDiags(ds))
	}
	want := map[string]StageOverride{
		"talker": {Devices: []int{2, 3}, MaxNumSeqs: ptr(8), GPUMemoryUtilization: ptr(0.5), NumReplicas: ptr(2),
			Host: "10.0.0.3", EngineArgs: map[string]any{"max_model_len": int64(4096)}},
		"code2wav": {MaxNumSeqs: ptr(1), GPUMemoryUtilization: ptr(1.0)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if got, ds := DecodeStageOverrides(nil); got != nil || ds != nil {
		t.Errorf("nil input gave %v, %v", got, ds)
	}
}

func TestDecodeStageOverridesErrors(t *testing.T) {
	tests := []struct {
		name string
		in   any
		code string
		path string
	}{
		{"not an object", []any{"talker"}, "stage_overrides_shape", "stage_overrides"},
		{"a string", "talker", "stage_overrides_shape", "stage_overrides"},
		{"entry not an object", map[string]any{"talker": int64(3)}, "stage_overrides_shape", "stage_overrides.talker"},
		{"entry a list", map[string]any{"talker": []any{}}, "stage_overrides_shape", "stage_overrides.talker"},
		{"unknown field", map[string]any{"talker": map[string]any{"tensor_parallel_size": int64(2)}}, "stage_overrides_unknown_key", "stage_overrides.talker.tensor_parallel_size"},
		{"devices not a list", map[string]any{"talker": map[string]any{"devices": "2"}}, "stage_overrides_type", "stage_overrides.talker.devices"},
		{"device not a number", map[string]any{"talker": map[string]any{"devices": []any{int64(1), "x"}}}, "stage_overrides_type", "stage_overrides.talker.devices[1]"},
		{"device fractional", map[string]any{"talker": map[string]any{"devices": []any{1.5}}}, "stage_overrides_type", "stage_overrides.talker.devices[0]"},
		{"device negative", map[string]any{"talker": map[string]any{"devices": []any{int64(-1)}}}, "device_negative", "stage_overrides.talker.devices[0]"},
		{"device repeated", map[string]any{"talker": map[string]any{"devices": []any{int64(2), int64(2)}}}, "device_repeated", "stage_overrides.talker.devices[1]"},
		{"devices empty", map[string]any{"talker": map[string]any{"devices": []any{}}}, "devices_empty", "stage_overrides.talker.devices"},
		{"max_num_seqs a string", map[string]any{"talker": map[string]any{"max_num_seqs": "8"}}, "stage_overrides_type", "stage_overrides.talker.max_num_seqs"},
		{"max_num_seqs fractional", map[string]any{"talker": map[string]any{"max_num_seqs": 2.5}}, "stage_overrides_type", "stage_overrides.talker.max_num_seqs"},
		{"max_num_seqs huge", map[string]any{"talker": map[string]any{"max_num_seqs": 1e12}}, "stage_overrides_range", "stage_overrides.talker.max_num_seqs"},
		{"max_num_seqs beyond int32", map[string]any{"talker": map[string]any{"max_num_seqs": int64(1e15)}}, "stage_overrides_range", "stage_overrides.talker.max_num_seqs"},
		{"max_num_seqs infinite", map[string]any{"talker": map[string]any{"max_num_seqs": math.Inf(1)}}, "stage_overrides_type", "stage_overrides.talker.max_num_seqs"},
		{"device beyond int32", map[string]any{"talker": map[string]any{"devices": []any{int64(1) << 40}}}, "stage_overrides_range", "stage_overrides.talker.devices[0]"},
		{"num_replicas beyond int32", map[string]any{"talker": map[string]any{"num_replicas": int64(1) << 32}}, "stage_overrides_range", "stage_overrides.talker.num_replicas"},
		{"device most negative", map[string]any{"talker": map[string]any{"devices": []any{int64(math.MinInt64)}}}, "stage_overrides_range", "stage_overrides.talker.devices[0]"},
		{"max_num_seqs 0", map[string]any{"talker": map[string]any{"max_num_seqs": int64(0)}}, "max_num_seqs_range", "stage_overrides.talker.max_num_seqs"},
		{"memory a bool", map[string]any{"talker": map[string]any{"gpu_memory_utilization": true}}, "stage_overrides_type", "stage_overrides.talker.gpu_memory_utilization"},
		{"memory above 1", map[string]any{"talker": map[string]any{"gpu_memory_utilization": 1.2}}, "gpu_memory_utilization_range", "stage_overrides.talker.gpu_memory_utilization"},
		{"num_replicas 0", map[string]any{"talker": map[string]any{"num_replicas": int64(0)}}, "num_replicas_range", "stage_overrides.talker.num_replicas"},
		{"host a number", map[string]any{"talker": map[string]any{"host": int64(1)}}, "stage_overrides_type", "stage_overrides.talker.host"},
		{"entry a list", map[string]any{"talker": []any{}}, "stage_overrides_shape", "stage_overrides.talker"},
		{"engine_args a list", map[string]any{"talker": map[string]any{"engine_args": []any{}}}, "stage_overrides_type", "stage_overrides.talker.engine_args"},
		{"engine_args managed key", map[string]any{"talker": map[string]any{"engine_args": map[string]any{"max_num_seqs": int64(2)}}}, "engine_args_managed_key", "stage_overrides.talker.engine_args.max_num_seqs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := DecodeStageOverrides(tc.in)
			if !hasCode(ds, tc.code, tc.path) {
				t.Fatalf("want %s at %s, got:\n%s", tc.code, tc.path, describeDiags(ds))
			}
			for _, d := range ds {
				if d.Detail == "" || !fixHint.MatchString(d.Detail) {
					t.Errorf("%s: detail %q does not say how to fix it", d.Code, d.Detail)
				}
			}
		})
	}
}

// TestDecodeStageOverridesCollects: every bad field of every entry is
// reported in one call, in a stable order.
func TestDecodeStageOverridesCollects(t *testing.T) {
	in := map[string]any{
		"talker":   map[string]any{"max_num_seqs": "x", "bogus": int64(1), "devices": []any{int64(-1)}},
		"code2wav": int64(5),
	}
	_, ds1 := DecodeStageOverrides(in)
	_, ds2 := DecodeStageOverrides(in)
	if len(ds1) != 4 {
		t.Errorf("%d diagnostics, want 4:\n%s", len(ds1), describeDiags(ds1))
	}
	if strings.Join(ds1.Codes(), ",") != strings.Join(ds2.Codes(), ",") {
		t.Errorf("order differs between calls: %v vs %v", ds1.Codes(), ds2.Codes())
	}
}

// An override given as null is no override, as any unset argument is.
func TestDecodeStageOverridesNull(t *testing.T) {
	got, ds := DecodeStageOverrides(map[string]any{"talker": nil, "code2wav": map[string]any{"max_num_seqs": int64(2)}})
	if len(ds) > 0 || len(got) != 1 || got["code2wav"].MaxNumSeqs == nil {
		t.Errorf("got %+v, %v", got, ds)
	}
}

// Two stages with one model_stage are addressed by their ids in the base
// config, and each override reaches only its stage.
func TestOverridesByStageID(t *testing.T) {
	base := strings.Replace(miniBase, "{model_stage: code2wav,", "{model_stage: talker,", 1)
	res := mustPlan(t, Spec{Model: seedModel, BaseConfig: base,
		StageOverrides: map[string]StageOverride{"stage_2": {MaxNumSeqs: ptr(3)}}})
	st := stageList(t, config(t, res.ConfigYAML))
	if got := dig(st[3], "engine_args", "max_num_seqs"); got != 3 {
		t.Errorf("stage_2 (now 3) max_num_seqs = %v, want 3", got)
	}
	if got := dig(st[2], "engine_args", "max_num_seqs"); got == 3 {
		t.Error("the other talker took stage_2's override")
	}
}

// A model_stage spelled like an id key does not take another stage's key:
// every override key names one stage.
func TestOverrideKeysUnique(t *testing.T) {
	base := strings.Replace(miniBase, "{model_stage: code2wav,", "{model_stage: stage_1,", 1)
	res := mustPlan(t, Spec{Model: seedModel, BaseConfig: base,
		StageOverrides: map[string]StageOverride{"stage_2": {MaxNumSeqs: ptr(3)}, "talker": {MaxNumSeqs: ptr(5)}}})
	st := stageList(t, config(t, res.ConfigYAML))
	if dig(st[2], "engine_args", "max_num_seqs") != 5 || dig(st[3], "engine_args", "max_num_seqs") != 3 {
		t.Errorf("talker %v, stage_2 %v", dig(st[2], "engine_args", "max_num_seqs"), dig(st[3], "engine_args", "max_num_seqs"))
	}
}
