package pipeline

import (
	"reflect"
	"testing"
)

// DeviceKeys names the PD pair by role and every other stage by its
// model_stage, prefixed so that it cannot take the pair's key, or by its
// stage id when the model_stage is missing or already taken.
func TestDeviceKeys(t *testing.T) {
	pre, dec := thinkerPair(0)
	tests := []struct {
		name   string
		stages []StageInfo
		want   []string
	}{
		{"pair and downstream", []StageInfo{pre, dec, stage(2, "talker"), stage(3, "code2wav")},
			[]string{"prefill", "decode", "stage:talker", "stage:code2wav"}},
		{"a stage named like a role", []StageInfo{pre, dec, stage(2, "decode"), stage(3, "prefill")},
			[]string{"prefill", "decode", "stage:decode", "stage:prefill"}},
		{"no model_stage", []StageInfo{pre, dec, stage(2, "")},
			[]string{"prefill", "decode", "stage#2"}},
		{"a model_stage twice", []StageInfo{stage(0, "encoder"), pre, dec, stage(3, "talker"), stage(4, "talker")},
			[]string{"stage:encoder", "prefill", "decode", "stage:talker", "stage#4"}},
		{"none", nil, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := DeviceKeys(tc.stages); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("DeviceKeys = %q, want %q", got, tc.want)
			}
		})
	}
	// The plan's Allocations use the same keys.
	res := mustPlan(t, Spec{Model: seedModel})
	for _, k := range DeviceKeys(res.Stages) {
		if _, ok := res.Allocations.Devices[HostKey{"", k}]; !ok {
			t.Errorf("allocations have no devices under %q: %v", k, res.Allocations.Devices)
		}
	}
}

// The override half of the rule: the PD pair by role, every other stage by
// its model_stage, or stage_<id> with its id in the base config (one less
// past the pair) when the name is missing, shared, a side's or the split
// stage's, or spelled like an id.
func TestStageOverrideKeys(t *testing.T) {
	pre, dec := thinkerPair(1)
	tests := []struct {
		name   string
		stages []StageInfo
		want   []string
	}{
		{"pair and downstream", []StageInfo{stage(0, "encoder"), pre, dec, stage(3, "talker"), stage(4, "code2wav")},
			[]string{"encoder", "prefill", "decode", "talker", "code2wav"}},
		{"shared", []StageInfo{pre, dec, stage(3, "talker"), stage(4, "talker")},
			[]string{"prefill", "decode", "stage_2", "stage_3"}},
		{"named like a side, the split stage or an id", []StageInfo{stage(0, "decode"), pre, dec, stage(3, "thinker"), stage(4, "stage_7"), stage(5, "")},
			[]string{"stage_0", "prefill", "decode", "stage_2", "stage_3", "stage_4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, k := range stageKeys(tc.stages) {
				got = append(got, k.override)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("override keys = %q, want %q", got, tc.want)
			}
		})
	}
}

// thinkerPair is the PD pair of a split thinker, prefill at id first.
func thinkerPair(first int) (prefill, decode StageInfo) {
	return StageInfo{StageID: first, Role: RolePrefill, ModelStage: "thinker"},
		StageInfo{StageID: first + 1, Role: RoleDecode, ModelStage: "thinker"}
}

// stage is a stage off the PD pair.
func stage(id int, modelStage string) StageInfo {
	return StageInfo{StageID: id, Role: RoleStage, ModelStage: modelStage}
}
