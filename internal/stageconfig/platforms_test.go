package stageconfig

import "testing"

func TestSplitPlatformStages(t *testing.T) {
	src := `stages:
  - stage_id: 0
platforms:
  rocm:
    stages:
      # thinker on rocm
      - stage_id: 1 # split
        devices: "2,3"
      - stage_id: 2
        max_num_seqs: 4
      - devices: "9"
  npu:
    stages:
      - stage_id: 0
      - stage_id: 1
        max_num_seqs: 1
  xpu:
    stages: none
`
	want := `stages:
  - stage_id: 0
platforms:
  rocm:
    stages:
      # thinker on rocm
      - stage_id: 1 # split
        devices: "2,3"
      - stage_id: 2 # split
        devices: "2,3"
      - stage_id: 3
        max_num_seqs: 4
      - devices: "9"
  npu:
    stages:
      - stage_id: 10
      - stage_id: 1
        max_num_seqs: 1
      - stage_id: 2
        max_num_seqs: 1
  xpu:
    stages: none
`
	d := mustParse(t, src)
	newID := func(id int) int {
		if id == 0 {
			return 10
		}
		return id + 1
	}
	placed := d.SplitPlatformStages(1, newID)
	if got := mustRender(t, d); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// Only the override of the split stage that sets devices places it.
	if wantPlaced := []PlatformPlacement{{"rocm", []int{2, 3}}}; !deepEqual(placed, wantPlaced) {
		t.Errorf("placements = %+v, want %+v", placed, wantPlaced)
	}
	// The two halves are separate nodes.
	halves := pathGet(d.top(), "platforms", "rocm", "stages").Content
	mapSet(halves[1], "devices", quotedStrNode("3"))
	if v, _ := scalarString(mapGet(halves[0], "devices")); v != "2,3" {
		t.Errorf("editing the decode override changed prefill's devices to %q", v)
	}
	if got := mustParse(t, "stages: []\n").SplitPlatformStages(0, newID); got != nil {
		t.Errorf("no platforms: placements = %+v", got)
	}
}
