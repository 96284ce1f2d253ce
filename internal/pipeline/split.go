package pipeline

import (
	"fmt"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
)

// The split step: which stage of the base becomes the prefill-decode pair.
// Its tests are in split_test.go.

// checkNotSplit refuses a base that already has a PD pair: splitting it
// again would make a second pair, which vllm-omni rejects.
func checkNotSplit(base baseConfig, ds *Diagnostics) bool {
	for _, s := range base.g.stages {
		if s.prefill || s.decode {
			ds.errorf(diagcode.BaseAlreadySplit, base.path, "the base config is already split into prefill and decode",
				"%s is marked is_prefill_only or is_decode_only. Pass the config before the split (with one thinker stage); the provider makes the PD pair.", s.stage.Describe())
			return false
		}
	}
	return true
}

// chooseSplit finds the stage of g to split: split_stage (id) when set,
// otherwise the thinker, otherwise the first autoregressive stage that
// takes the request. ok is false, with the problem reported, when there is
// none.
func chooseSplit(g *graph, id *int, ds *Diagnostics) (split graphStage, ok bool) {
	if id != nil {
		s, ok := g.stageByID(*id)
		if !ok {
			ds.errorf(diagcode.SplitStageUnknown, AttrPath("split_stage"), "no stage has this id",
				"split_stage is %d but the base config has stages %s; set it to one of them, or leave it unset to split the thinker.", *id, describeInts(g.ids()))
			return graphStage{}, false
		}
		if why := notSplittable(s); why != "" {
			ds.errorf(diagcode.SplitStageNotAutoregressive, AttrPath("split_stage"), "this stage cannot be split into prefill and decode",
				"%s %s; PD splits an autoregressive (worker_type: ar) LLM stage such as the thinker: set split_stage to that stage's id.", s.stage.Describe(), why)
			return graphStage{}, false
		}
		return s, true
	}
	for _, s := range g.stages {
		if s.modelStage == "thinker" && notSplittable(s) == "" {
			return s, true
		}
	}
	for _, s := range g.stages {
		if len(s.inputs) == 0 && notSplittable(s) == "" {
			return s, true
		}
	}
	ds.errorf(diagcode.SplitStageNotFound, AttrPath("split_stage"), "no stage to split",
		"the base config has no thinker and no autoregressive entry stage; set split_stage to the id of the autoregressive stage to split.")
	return graphStage{}, false
}

func notSplittable(s graphStage) string {
	if t := s.stageType; t != "llm" {
		return fmt.Sprintf("is a %s stage", t)
	}
	if w := s.stage.WorkerType(); w == "generation" || strings.Contains(strings.ToLower(w), "generation") {
		return "runs a generation worker"
	}
	return ""
}
