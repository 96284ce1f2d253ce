package stageconfig

import "testing"

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
			out := d.ToStages("qwen3_omni_pd")
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
