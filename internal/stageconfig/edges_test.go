package stageconfig

import "testing"

func TestEdges(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      Edges
	}{
		{"none", "stages: []\n", Edges{}},
		{"stage_args edges at the top are not read", "stage_args: []\nedges: [{from: 0, to: 1}]\n", Edges{}},
		{"stages edges under runtime are not read", "stages: []\nruntime:\n  edges: [{from: 0, to: 1}]\n", Edges{}},
		{"stages", "stages: []\nedges:\n  - {from: 0, to: 1}\n  - {from: 1, to: 2, window_size: 4}\n",
			Edges{Written: true, List: []Edge{{0, 1}, {1, 2}}}},
		{"stage_args", "stage_args: []\nruntime:\n  edges:\n    - from: 2\n      to: 0\n",
			Edges{Written: true, List: []Edge{{2, 0}}}},
		{"empty list", "stages: []\nedges: []\n", Edges{Written: true, List: []Edge{}}},
		{"unreadable entries", "stages: []\nedges:\n  - {from: 0, to: 1}\n  - {from: \"0\", to: 1}\n  - {from: 0}\n  - 3\n  - {from: 1, to: 2}\n",
			Edges{Written: true, List: []Edge{{0, 1}, {1, 2}}, Unreadable: []int{4, 5, 6}}},
		{"not a list", "stages: []\n\nedges:\n  from: 0\n", Edges{Written: true, NotAList: true, Line: 4}},
		{"stage_args not a list", "stage_args: []\nruntime:\n  edges: none\n", Edges{Written: true, NotAList: true, Line: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustParse(t, tc.src).Edges(); !deepEqual(got, tc.want) {
				t.Errorf("Edges() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestWriteEdges(t *testing.T) {
	// Stage 1 splits into prefill 1 and decode 2, so an edge into it goes to
	// 1, one out of it leaves from 2, and the old stage 2 becomes 3.
	how := EdgeRewrite{
		Renumber: func(e Edge) Edge {
			if e.From >= 1 {
				e.From++
			}
			if e.To >= 2 {
				e.To++
			}
			return e
		},
		Template: func(e Edge) bool { return e.From == 1 },
	}
	want := []Edge{{0, 1}, {1, 2}, {2, 3}}
	for _, tc := range []struct {
		name, src, want string
	}{
		{"stages keeps old edges, copies the template's keys without comments",
			`stages: []
# the graph
edges: # line
  - {from: 0, to: 1}
  # talker
  - from: 1 # from
    to: 2
    window_size: 4 # window
  - {from: 9}
`, `stages: []
# the graph
edges: # line
  - {from: 0, to: 1}
  - from: 1
    to: 2
    window_size: 4
  # talker
  - from: 2 # from
    to: 3
    window_size: 4 # window
`},
		{"the first template wins", "stages: []\nedges:\n  - {from: 1, to: 2, window_size: 4}\n  - {from: 1, to: 5, window_size: 8}\n",
			"stages: []\nedges:\n  - {from: 0, to: 1, window_size: 4}\n  - {from: 1, to: 2, window_size: 4}\n  - {from: 2, to: 3, window_size: 4}\n"},
		{"stages without edges, no template", "stages: []\n",
			"stages: []\nedges:\n  - from: 0\n    to: 1\n  - from: 1\n    to: 2\n  - from: 2\n    to: 3\n"},
		{"stage_args creates an enabled runtime", "stage_args: []\n",
			"stage_args: []\nruntime:\n  enabled: true\n  edges:\n    - from: 0\n      to: 1\n    - from: 1\n      to: 2\n    - from: 2\n      to: 3\n"},
		// No release reads runtime.enabled: the user's value stays.
		{"stage_args keeps a runtime's enabled as written", "stage_args: []\nruntime:\n  connectors: {}\n  enabled: false # off\n  edges: [{from: 0, to: 1}]\n",
			"stage_args: []\nruntime:\n  connectors: {}\n  enabled: false # off\n  edges: [{from: 0, to: 1}, {from: 1, to: 2}, {from: 2, to: 3}]\n"},
		{"a flow list keeps the comment after it", "stage_args: []\nruntime:\n  edges: [{from: 0, to: 1}]  # the graph\n  # below\n",
			"stage_args: []\nruntime:\n  enabled: true\n  edges: [{from: 0, to: 1}, {from: 1, to: 2}, {from: 2, to: 3}] # the graph\n  # below\n"},
		{"a block list keeps its entries' comments", "stage_args: []\nruntime:\n  edges:  # the graph\n    # first\n    - {from: 0, to: 1}  # one\n    - {to: 1}  # unreadable\n",
			"stage_args: []\nruntime:\n  enabled: true\n  edges: # the graph\n    # first\n    - {from: 0, to: 1} # one\n    - from: 1\n      to: 2\n    - from: 2\n      to: 3\n\n# unreadable\n"},
		{"stage_args puts enabled first", "stage_args: []\nruntime:\n  connectors: {}\n",
			"stage_args: []\nruntime:\n  enabled: true\n  connectors: {}\n  edges:\n    - from: 0\n      to: 1\n    - from: 1\n      to: 2\n    - from: 2\n      to: 3\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustParse(t, tc.src)
			d.WriteEdges(want, how)
			if got := mustRender(t, d); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			if got := d.Edges(); !deepEqual(got.List, want) || len(got.Unreadable) != 0 {
				t.Errorf("Edges() after = %+v, want %v", got, want)
			}
		})
	}
}
