package pipeline

import (
	"regexp"
	"strconv"
)

// stageKey is what a stage of the output pipeline is called beside its
// stage id, in the two places where a name must not depend on the ids:
//
//   - override is how stage_overrides addresses the stage: prefill and
//     decode for the PD pair, else its model_stage, or stage_<id> (its id
//     in the base config) when it has none, shares it with another stage
//     that is not split, is named like a side of the pair or the split
//     stage, or is itself spelled stage_<n>. Every key is unique, and a
//     name two stages share addresses neither: the user must not reach
//     two stages with one entry.
//   - device is the stage's name in Allocations.Devices: prefill and
//     decode for the PD pair, else "stage:<model_stage>", or
//     "stage#<stage_id>" (its id in the plan) when it has no model_stage or
//     shares one with an earlier stage. The prefix keeps a downstream stage
//     whose model_stage is "decode" (or "prefill") from taking the pair's
//     key, which would swap their devices on every apply; the first of two
//     stages that share a model_stage keeps it, so that adding a second
//     leaves the first's devices where they are.
//
// The two differ where their readers do: one is typed by a user, who must
// not be able to mean two stages, the other is read back from state and
// must stay the same from one plan to the next.
type stageKey struct {
	override string
	device   string
}

// idKey matches the stage_<n> spelling an override key takes from a
// stage's id.
var idKey = regexp.MustCompile(`^stage_[0-9]+$`)

// stageKeys names every stage of an output pipeline, given in stage order
// as its StageInfo (stage id, role and model_stage are read). A stage's id
// in the base config is its id in the plan, less one past the PD pair,
// which took the split stage's id and the one after it. The planner's
// layout and DeviceKeys, which the provider calls on the stages in state,
// both name stages through it.
func stageKeys(stages []StageInfo) []stageKey {
	split, splitStage := -1, ""
	count := make(map[string]int, len(stages))
	for _, s := range stages {
		switch s.Role {
		case RolePrefill:
			split, splitStage = s.StageID, s.ModelStage
		case RoleDecode:
		default:
			count[s.ModelStage]++
		}
	}
	keys := make([]stageKey, len(stages))
	seen := make(map[string]bool, len(stages))
	for i, s := range stages {
		if s.Role == RolePrefill || s.Role == RoleDecode {
			keys[i] = stageKey{override: s.Role, device: s.Role}
			continue
		}
		ms := s.ModelStage
		override := ms
		if ms == "" || count[ms] > 1 || ms == prefillKey || ms == decodeKey || ms == splitStage || idKey.MatchString(ms) {
			baseID := s.StageID
			if split >= 0 && baseID > split {
				baseID--
			}
			override = "stage_" + strconv.Itoa(baseID)
		}
		device := "stage:" + ms
		if ms == "" || seen[device] {
			device = "stage#" + strconv.Itoa(s.StageID)
		}
		seen[device] = true
		keys[i] = stageKey{override: override, device: device}
	}
	return keys
}

// DeviceKeys names each stage's devices in Allocations, in stage order, by
// the device half of the planner's one naming rule (stageKey): the PD pair
// by its role, every other stage as "stage:<model_stage>", or
// "stage#<stage_id>" when it has no model_stage or shares one with an
// earlier stage. The planner and the provider, which reads the keys back
// from state, both use it.
func DeviceKeys(stages []StageInfo) []string {
	out := make([]string, len(stages))
	for i, k := range stageKeys(stages) {
		out[i] = k.device
	}
	return out
}
