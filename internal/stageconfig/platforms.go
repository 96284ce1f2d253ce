package stageconfig

import "go.yaml.in/yaml/v3"

// PlatformPlacement is a platform override that places the split stage
// itself: its devices apply to both halves.
type PlatformPlacement struct {
	Platform string
	Devices  []int
}

// SplitPlatformStages renumbers `platforms.<name>.stages[].stage_id` like
// the stage list after a split of stage split: an override of the split
// stage is written twice, for split and split+1 (the second without its
// head comment), and every other id becomes newID(id). It returns the
// overrides of the split stage that set devices, which then name the same
// devices for prefill and decode.
func (d *Document) SplitPlatformStages(split int, newID func(int) int) []PlatformPlacement {
	platforms := mapGet(d.top(), "platforms")
	var placed []PlatformPlacement
	for _, name := range mapKeys(platforms) {
		list := mapGet(mapGet(platforms, name), "stages")
		if list == nil || list.Kind != yaml.SequenceNode {
			continue
		}
		var out []*yaml.Node
		for _, n := range list.Content {
			id, ok := scalarInt(mapGet(n, "stage_id"))
			if !ok {
				out = append(out, n)
				continue
			}
			if id == split {
				if devs := mapGet(n, "devices"); devs != nil {
					parsed, _ := parseDevices(devs)
					placed = append(placed, PlatformPlacement{Platform: name, Devices: parsed})
				}
				dec := deepCopy(n)
				dec.HeadComment = ""
				mapSet(dec, "stage_id", intNode(split+1))
				out = append(out, n, dec)
				continue
			}
			mapSet(n, "stage_id", intNode(newID(id)))
			out = append(out, n)
		}
		list.Content = out
	}
	return placed
}
