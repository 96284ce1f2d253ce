package pipeline

import (
	"fmt"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// parallel holds the factors of the devices a stage needs. vllm-omni gives
// each replica of an LLM stage tensor × pipeline × data parallel devices
// and checks a stage's device count against that (or that times
// num_replicas): _get_local_llm_parallel_sizes, get_stage_devices_per_replica
// and split_devices_for_replicas in vllm_omni/engine/stage_init_utils.py,
// check_device_layout in vllm_omni/config/composable_parallel/apply.py
// (@0027c20a). A diffusion stage's other axes (sequence, cfg, ... in
// parallel_config) multiply its world size the same way
// (DiffusionParallelConfig, vllm_omni/diffusion/data.py@0027c20a).
// Releases before that check counted tensor parallel ranks alone, but vLLM
// still needs every rank's GPU, so the plan gives them all.
type parallel struct {
	tp, pp, dp, replicas int
	other                int // a diffusion stage's remaining parallel_config axes
}

// world is the stage's device count: the product of its factors, 0 when a
// factor is not positive, and maxWorldSize+1 when the product exceeds
// maxWorldSize (the factors can be as large as MaxWhole each, so the
// product is capped as it grows, never computed in full).
func (x parallel) world() int {
	w := 1
	for _, f := range x.factors() {
		if f.n < 1 {
			return 0
		}
		w *= f.n
		if w > maxWorldSize {
			return maxWorldSize + 1
		}
	}
	return w
}

type factor struct {
	name string
	n    int
}

func (x parallel) factors() []factor {
	return []factor{
		{"tensor_parallel_size", x.tp},
		{"pipeline_parallel_size", x.pp},
		{"data_parallel_size", x.dp},
		{"num_replicas", x.replicas},
		{"the other parallel_config sizes", x.other},
	}
}

// String names the factors that are not 1 (and always tensor parallel),
// for messages: "tensor_parallel_size 2 × pipeline_parallel_size 2".
func (x parallel) String() string {
	parts := []string{}
	for i, f := range x.factors() {
		if i == 0 || f.n != 1 {
			parts = append(parts, fmt.Sprintf("%s %d", f.name, f.n))
		}
	}
	return strings.Join(parts, " × ")
}

// needs says how many devices x takes, for messages.
func (x parallel) needs() string {
	switch w := x.world(); {
	case w < 1:
		return "a non-positive number of devices"
	case w > maxWorldSize:
		return fmt.Sprintf("more than %d devices", maxWorldSize)
	default:
		return fmt.Sprintf("%d device(s)", w)
	}
}

// baseParallel reads a stage's parallel sizes as its config gives them:
// the engine's own keys, else its parallel_config; 1 for any unset.
func baseParallel(s stageconfig.Stage) parallel {
	x := parallel{tp: 0, pp: 1, dp: 1, replicas: s.NumReplicas(), other: 1}
	pc := s.ParallelConfig()
	x.tp = engineInt(s, "tensor_parallel_size", 0)
	if x.tp == 0 {
		x.tp, _ = pc.Int("tensor_parallel_size")
	}
	x.tp = max(x.tp, 1)
	x.pp = engineInt(s, "pipeline_parallel_size", 1)
	x.dp = engineInt(s, "data_parallel_size", 1)
	for _, k := range []string{"pipeline_parallel_size", "data_parallel_size", "sequence_parallel_size", "cfg_parallel_size"} {
		if v, ok := pc.Int(k); ok && v > 1 {
			x.other *= min(v, maxWorldSize+1)
		}
	}
	return x
}

// parallelArgs are the engine_args keys that set a parallel size.
var parallelArgs = []struct {
	key  string
	code diagcode.Code
}{
	{"tensor_parallel_size", diagcode.TensorParallelSizeRange},
	{"pipeline_parallel_size", diagcode.PipelineParallelSizeRange},
	{"data_parallel_size", diagcode.DataParallelSizeRange},
}

// parallelArg reads one of parallelArgs from engine_args: ok is false when
// it is unset, or not a whole number of at least 1 (checkParallelArgs).
func parallelArg(over map[string]any, key string) (int, bool) {
	if n, isInt := over[key].(int64); isInt && n >= 1 && n <= MaxWhole {
		return int(n), true
	}
	return 0, false
}

// withEngineArgs gives the sizes a stage runs with once over (the user's
// engine_args for it) is merged into its config: over's sizes take
// precedence key by key. A value in over that is not a whole number of at
// least 1 leaves the size as the config gives it; checkParallelArgs
// reports it.
func (x parallel) withEngineArgs(over map[string]any) parallel {
	for i, to := range []*int{&x.tp, &x.pp, &x.dp} {
		if n, ok := parallelArg(over, parallelArgs[i].key); ok {
			*to = n
		}
	}
	return x
}

// checkParallelArgs reports, at path's engine_args, each parallel size in
// over that is not a whole number of at least 1.
func checkParallelArgs(ds *Diagnostics, path Path, over map[string]any) {
	for _, k := range parallelArgs {
		v, ok := over[k.key]
		if !ok || v == nil {
			continue
		}
		if _, ok := parallelArg(over, k.key); ok {
			continue
		}
		if text, isText := v.(string); isText {
			// The cause is the quotes, not the number: "2" reads as text.
			ds.errorf(k.code, path.Attr("engine_args").Attr(k.key), k.key+" must be a whole number of at least 1",
				"it is the text %q, not a number; write it without quotes, such as %s = 2.", text, k.key)
			continue
		}
		ds.errorf(k.code, path.Attr("engine_args").Attr(k.key), k.key+" must be a whole number of at least 1",
			"it is %v; set a whole number such as 1 or 2.", v)
	}
}
