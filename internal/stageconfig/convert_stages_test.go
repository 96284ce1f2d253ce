package stageconfig

import (
	"fmt"
	"strings"
	"testing"
)

func TestToStages(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"flattened, topology dropped, connectors and edges at the top", `# header

model: Qwen/Qwen3-Omni
pipeline: old
# the stages
stage_args: # line
  # prefill
  - stage_id: 0
    is_prefill_only: true
    runtime:
      # gpus
      devices: "0"
      max_batch_size: 4
      env: {A: "1"}
    engine_args:
      # which half
      model_stage: thinker
      gpu_memory_utilization: 0.5 # mem
    # not the last
    final_output: false
    output_connectors: {to_stage_1: mc}
  - stage_id: 1
    runtime: {max_batch_size: 2}
    engine_args: {max_num_seqs: 8}
    engine_input_source: [0]
    # dropped at the end
    final_output: true
# the runtime section
runtime:
  enabled: true
  # named connectors
  connectors:
    mc: {name: MooncakeConnector}
  defaults:
    window_size: -1
  # the graph
  edges:
    - {from: 0, to: 1}
    - {from: 1, to: 2, window_size: 4}
`, `# header

pipeline: qwen3_omni_pd
model: Qwen/Qwen3-Omni
# named connectors
connectors:
  mc: {name: MooncakeConnector}
# the stages
stages: # line
  # prefill
  - stage_id: 0
    # gpus
    devices: "0"
    max_num_seqs: 4
    env: {A: "1"}
    # which half
    gpu_memory_utilization: 0.5 # mem
    # not the last
    output_connectors: {to_stage_1: mc}
  - stage_id: 1
    max_num_seqs: 8
    # dropped at the end
# the runtime section
# the graph
edges:
  - {from: 0, to: 1, window_size: -1}
  - {from: 1, to: 2, window_size: 4}
`},
		{"a runtime without edges leaves its comment at the end", "stage_args:\n  - stage_id: 0\n# off\nruntime: {enabled: false}\npipeline: old # was\n",
			"pipeline: qwen3_omni_pd\nstages:\n  - stage_id: 0\n\n# off\n# was\n"},
		{"no runtime", "stage_args:\n  - stage_id: 0\n    engine_args: {max_num_seqs: 1}\n",
			"pipeline: qwen3_omni_pd\nstages:\n  - stage_id: 0\n    max_num_seqs: 1\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustParse(t, tc.src)
			out, _ := d.ToStages("qwen3_omni_pd")
			if out.Dialect != Stages {
				t.Errorf("dialect %q", out.Dialect)
			}
			if got := mustRender(t, out); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			if _, err := Parse([]byte(mustRender(t, out))); err != nil {
				t.Errorf("the result does not parse: %v", err)
			}
		})
	}
}

// TestToStagesReportsWhatItDrops: what a stage_args base sets that the
// stages dialect has no place for is reported with its path and line, and
// its comments are kept; `enabled: true`, edge defaults folded into edges
// and topology keys are not reported.
func TestToStagesReportsWhatItDrops(t *testing.T) {
	const stage = "stage_args:\n  - stage_id: 0\n"
	for _, c := range []struct {
		name, src string
		want      []string // Key@Line
	}{
		{"a user key of runtime", stage + "runtime:\n  enabled: true  # c1\n  mine: 1  # c2\n  edges: [{from: 0, to: 0}]\n", []string{"runtime.mine@5"}},
		{"enabled false", stage + "runtime:  # c1\n  enabled: false  # c2\n", []string{"runtime.enabled@4"}},
		{"defaults without edges", stage + "runtime:\n  defaults:  # c1\n    window_size: -1  # c2\n", []string{"runtime.defaults@4"}},
		{"defaults with edges", stage + "runtime:\n  defaults: {window_size: -1}  # c1\n  edges:  # c2\n    - {from: 0, to: 0}\n", nil},
		{"max_batch_size under engine max_num_seqs", stage + "    runtime: {max_batch_size: 4}  # c1\n    engine_args: {max_num_seqs: 8}  # c2\n", []string{"stage_args[0].runtime.max_batch_size@3"}},
		{"an engine key in runtime and engine_args", stage + "    runtime:\n      foo: 1  # c1\n    engine_args:\n      foo: 2  # c2\n", []string{"stage_args[0].runtime.foo@4"}},
		{"a runtime key in runtime and engine_args", stage + "    runtime:\n      devices: \"0\"  # c1\n    engine_args:\n      devices: \"1\"  # c2\n", []string{"stage_args[0].engine_args.devices@6"}},
		{"topology keys", stage + "    engine_input_source:\n      - 0  # c1\n    engine_args: {model_stage: thinker}  # c2\n", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, dropped := mustParse(t, c.src).ToStages("p")
			var got []string
			for _, d := range dropped {
				got = append(got, fmt.Sprintf("%s@%d", d.Key, d.Line))
				if d.Why == "" {
					t.Errorf("%s: no reason", d.Key)
				}
			}
			if !deepEqual(got, c.want) {
				t.Errorf("dropped %v, want %v", got, c.want)
			}
			text := mustRender(t, out)
			for _, comment := range []string{"# c1", "# c2"} {
				if !strings.Contains(text, comment) {
					t.Errorf("%s is lost:\n%s", comment, text)
				}
			}
		})
	}
}
