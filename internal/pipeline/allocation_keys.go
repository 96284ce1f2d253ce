package pipeline

import "strconv"

// DeviceKeys names each stage's devices in Allocations, in stage order: the
// PD pair by its role, every other stage as "stage:<model_stage>", or
// "stage#<stage_id>" when it has no model_stage or shares one with an
// earlier stage. The prefix keeps a downstream stage whose model_stage is
// "decode" (or "prefill") from taking the pair's key: the resource would
// swap their devices on every apply. The planner and the provider, which
// reads the keys back from state, both use this one rule.
func DeviceKeys(stages []StageInfo) []string {
	keys := make([]string, len(stages))
	seen := map[string]bool{}
	for i, s := range stages {
		key := s.Role
		if s.Role != RolePrefill && s.Role != RoleDecode {
			key = "stage:" + s.ModelStage
			if s.ModelStage == "" || seen[key] {
				key = "stage#" + strconv.Itoa(s.StageID)
			}
		}
		seen[key] = true
		keys[i] = key
	}
	return keys
}

// setDeviceKeys gives each planned stage its DeviceKeys name, once the
// layout knows every stage.
func setDeviceKeys(stages []*plannedStage) {
	infos := make([]StageInfo, len(stages))
	for i, s := range stages {
		infos[i] = StageInfo{StageID: s.id, Role: s.role, ModelStage: s.base.modelStage}
	}
	for i, k := range DeviceKeys(infos) {
		stages[i].deviceKey = k
	}
}
