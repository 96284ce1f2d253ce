package pipeline

import (
	"testing"
)

func TestInspect(t *testing.T) {
	sum, err := Inspect([]byte(pdConfig))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Format != "stage_args" || len(sum.Stages) != 3 {
		t.Fatalf("summary %+v", sum)
	}
	if s := sum.Stages[1]; s.StageID != 1 || s.ModelStage != "thinker" || !s.FinalOutput || len(s.Inputs) != 1 || s.Inputs[0] != 0 || len(s.Devices) != 1 || s.Devices[0] != 1 {
		t.Errorf("stage 1 = %+v", s)
	}
	// Without written edges, the edges are the ones the inputs imply.
	if len(sum.Edges) != 2 || sum.Edges[0] != (Edge{From: 0, To: 1}) || sum.Edges[1] != (Edge{From: 1, To: 2}) {
		t.Errorf("edges = %v", sum.Edges)
	}
	// Written edges are reported as written.
	sum, err = Inspect([]byte(pdConfig + "runtime:\n  edges:\n    - {from: 1, to: 2}\n"))
	if err != nil || len(sum.Edges) != 1 || sum.Edges[0] != (Edge{From: 1, To: 2}) {
		t.Errorf("written edges = %v, %v", sum.Edges, err)
	}
	// The stages dialect's inputs come from its connectors and edges.
	sum, err = Inspect([]byte(readLocal(t, stagesQwen3)))
	if err != nil || sum.Format != "stages" || len(sum.Stages) != 3 || len(sum.Stages[2].Inputs) != 1 || sum.Stages[2].Inputs[0] != 1 {
		t.Errorf("stages summary %+v, %v", sum, err)
	}
	if _, err := Inspect([]byte("nope: 1\n")); err == nil {
		t.Error("Inspect accepted a non-config")
	}
}
