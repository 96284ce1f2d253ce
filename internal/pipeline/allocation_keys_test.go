package pipeline

import (
	"reflect"
	"testing"
)

// DeviceKeys names the PD pair by role and every other stage by its
// model_stage, prefixed so that it cannot take the pair's key, or by its
// stage id when the model_stage is missing or already taken.
func TestDeviceKeys(t *testing.T) {
	pre := StageInfo{StageID: 0, Role: RolePrefill, ModelStage: "thinker"}
	dec := StageInfo{StageID: 1, Role: RoleDecode, ModelStage: "thinker"}
	stage := func(id int, modelStage string) StageInfo {
		return StageInfo{StageID: id, Role: RoleStage, ModelStage: modelStage}
	}
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
