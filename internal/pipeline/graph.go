package pipeline

import (
	"fmt"
	"sort"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// graphStage is one stage with the facts the planner and the checks need,
// read once from the document. stage is kept for what the planner edits
// and for messages (Describe, Line).
type graphStage struct {
	stage      stageconfig.Stage
	id         int
	hasID      bool
	inputs     []int
	modelStage string
	stageType  string // llm unless the config says
	final      bool
	prefill    bool
	decode     bool
	// devices are the GPUs the config gives the stage: hasDevices is false
	// when it gives none, devicesErr says why they cannot be read.
	devices    []int
	hasDevices bool
	devicesErr error
	host       string // VLLM_HOST_IP in the stage's environment; "" on one host
}

// graph is a config's stages and the data paths between them.
type graph struct {
	doc    *stageconfig.Document
	stages []graphStage
	byID   map[int]int // stage id -> index in stages
	edges  []Edge      // as written (runtime.edges or top-level edges)
	// hasEdges is true when the config writes its edges out.
	hasEdges bool
}

// readGraph reads every stage. Problems that make a stage unreadable are
// reported at line granularity and the stage is kept with what could be read.
func readGraph(doc *stageconfig.Document, ds *Diagnostics, path Path) *graph {
	g := &graph{doc: doc, byID: map[int]int{}}
	g.edges, g.hasEdges = readEdges(doc, ds, path)
	for _, s := range doc.Stages() {
		gs := graphStage{stage: s, modelStage: s.ModelStage(), stageType: s.StageType()}
		gs.id, gs.hasID = s.ID()
		gs.devices, gs.hasDevices, gs.devicesErr = s.Devices()
		gs.host, _ = s.EnvVar("VLLM_HOST_IP")
		if gs.hasID && gs.id < 0 {
			ds.errorf(diagcode.StageIDNegative, path, "a stage_id is negative",
				"%s (line %d) has stage_id %d; stage ids are whole numbers from 0 (engine_input_source and the edges name stages by them): renumber the stages from 0.", s.Describe(), s.Line(), gs.id)
		}
		if !gs.hasID {
			ds.errorf(diagcode.StageIDMissing, path, "a stage has no stage_id",
				"%s (line %d) needs a whole-number stage_id: add one, such as `stage_id: %d`.", s.Describe(), s.Line(), s.Index)
		} else if prev, dup := g.byID[gs.id]; dup {
			ds.errorf(diagcode.StageIDDuplicate, path, "two stages share a stage_id",
				"stage_id %d is used by %s (line %d) and %s (line %d); give each stage its own id.",
				gs.id, g.stages[prev].stage.Describe(), g.stages[prev].stage.Line(), s.Describe(), s.Line())
		} else {
			g.byID[gs.id] = len(g.stages)
		}
		inputs, ok, err := s.Inputs()
		if err != nil {
			ds.errorf(diagcode.StageInputsInvalid, path, "engine_input_source cannot be read", "%s: %v", s.Describe(), err)
		}
		if ok {
			gs.inputs = inputs
		} else if doc.Dialect == stageconfig.Stages {
			gs.inputs = stagesDialectInputs(s, g.edges, gs.id)
		}
		gs.final = s.Flag("final_output")
		gs.prefill = s.Flag("is_prefill_only")
		gs.decode = s.Flag("is_decode_only")
		g.stages = append(g.stages, gs)
	}
	if len(g.stages) == 0 {
		ds.errorf(diagcode.BaseNoStages, path, "the config has no stages",
			"its %s list is empty; list the pipeline's stages in it, or leave base_config unset to use the preset for model.", doc.Dialect)
	}
	return g
}

// stagesDialectInputs derives a stage's inputs where the `stages` dialect
// records them: `input_connectors` keys and top-level edges.
func stagesDialectInputs(s stageconfig.Stage, edges []Edge, id int) []int {
	set := map[int]bool{}
	for _, from := range s.ConnectorStages("input_connectors", "from_stage_") {
		set[from] = true
	}
	for _, e := range edges {
		if e.To == id {
			set[e.From] = true
		}
	}
	return sortedKeys(set)
}

func sortedKeys[V any](set map[int]V) []int {
	if len(set) == 0 {
		return nil
	}
	out := make([]int, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

func readEdges(doc *stageconfig.Document, ds *Diagnostics, path Path) ([]Edge, bool) {
	edges := doc.Edges()
	if edges.NotAList {
		ds.errorf(diagcode.EdgesInvalid, path, "edges must be a list", "line %d: write edges as a list of {from, to} mappings.", edges.Line)
	}
	for _, line := range edges.Unreadable {
		ds.errorf(diagcode.EdgesInvalid, path, "an edge is not a {from, to} pair of stage ids", "line %d: write each edge as `- from: 0` / `to: 1`.", line)
	}
	return edges.List, edges.Written
}

// inputEdges lists the edges implied by every stage's inputs, sorted.
func (g *graph) inputEdges() []Edge {
	var out []Edge
	for _, s := range g.stages {
		for _, in := range s.inputs {
			out = append(out, Edge{From: in, To: s.id})
		}
	}
	sortEdges(out)
	return out
}

func sortEdges(es []Edge) {
	sort.Slice(es, func(i, j int) bool {
		if es[i].From != es[j].From {
			return es[i].From < es[j].From
		}
		return es[i].To < es[j].To
	})
}

func (g *graph) stageByID(id int) (graphStage, bool) {
	i, ok := g.byID[id]
	if !ok {
		return graphStage{}, false
	}
	return g.stages[i], true
}

// findCycle returns the ids along a cycle in the input graph, or nil.
func (g *graph) findCycle() []int {
	const (
		unseen = iota
		onPath
		done
	)
	state := map[int]int{}
	var path []int
	var visit func(id int) []int
	visit = func(id int) []int {
		state[id] = onPath
		path = append(path, id)
		s, _ := g.stageByID(id)
		for _, in := range s.inputs {
			if _, ok := g.byID[in]; !ok {
				continue
			}
			switch state[in] {
			case onPath:
				for i, p := range path {
					if p == in {
						return append(append([]int{}, path[i:]...), in)
					}
				}
			case unseen:
				if c := visit(in); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[id] = done
		return nil
	}
	for _, s := range g.stages {
		if s.hasID && state[s.id] == unseen {
			if c := visit(s.id); c != nil {
				return c
			}
		}
	}
	return nil
}

func describeIDs(ids []int) string {
	s := ""
	for i, id := range ids {
		if i > 0 {
			s += " → "
		}
		s += fmt.Sprint(id)
	}
	return s
}
