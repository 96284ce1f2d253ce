package container

import (
	"maps"
	"slices"
	"testing"
)

func TestLocalDevices(t *testing.T) {
	for _, c := range []struct {
		container, stage, want []int
	}{
		{[]int{2, 3}, []int{2, 3}, []int{0, 1}},
		{[]int{3, 2}, []int{3, 2}, []int{1, 0}}, // the stage's order, the host's numbering
		{[]int{4, 6}, []int{4}, []int{0}},       // two stages of one process
		{[]int{4, 6}, []int{6}, []int{1}},
		{[]int{7}, []int{7}, []int{0}},
		{[]int{1, 5, 3}, []int{5, 1}, []int{2, 0}},
		{nil, nil, []int{}},
	} {
		got, err := LocalDevices(c.container, c.stage)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("LocalDevices(%v, %v) = %v, %v; want %v", c.container, c.stage, got, err, c.want)
		}
	}
	if got, err := LocalDevices([]int{2, 3}, []int{1}); err == nil {
		t.Errorf("a GPU the container lacks became %v", got)
	}
	if got := LocalIndex([]int{6, 2, 6}); !maps.Equal(got, map[int]int{2: 0, 6: 1}) {
		t.Errorf("LocalIndex = %v", got)
	}
}
