package stageconfig

import "testing"

func TestToStageArgs(t *testing.T) {
	preset := mustParse(t, `stage_args:
  - stage_id: 0
    stage_type: llm
    engine_args: {model_stage: thinker, worker_type: ar, max_num_seqs: 64}
    final_output: true
    final_output_type: text
    is_comprehension: true
    default_sampling_params: {temperature: 0.4}
  - stage_id: 1
    engine_args: {model_stage: talker}
    custom_process_input_func: m.thinker2talker
    final_output: true
    final_output_type: audio
`).Stages()
	src := `# header
pipeline: qwen3_omni_pd
model: Qwen/Qwen3-Omni
base_config: base.yaml
stages:
  # prefill
  - stage_id: 0 # p
    devices: "0"
    env: {A: flat}
    runtime: {env: {A: runtime}, max_batch_size: 2}
    max_num_seqs: 4 # batch
    engine_args: {max_num_seqs: 8, enforce_eager: true}
    model_stage: ignored
    default_sampling_params: {temperature: 0.9}
    output_connectors: {to_stage_1: mc}
  - stage_id: 1
    num_replicas: 2
    input_connectors: {from_stage_0: mc}
  - stage_id: 2
# how the stages talk
connectors:
  mc: {name: MooncakeConnector}
edges:
  - {from: 0, to: 1}
# the platforms
platforms: # none yet
  rocm: {}
`
	plan := []StageArgsPlan{
		{ID: 0, Role: Prefill, Topology: preset[0]},
		{ID: 1, Role: Decode, Inputs: []int{1}, Topology: preset[0]},
		{ID: 2, Inputs: []int{1}, Topology: preset[1]},
	}
	// The header sits on `pipeline:`, which is not written: it moves to
	// the next key.
	want := `# header
model: Qwen/Qwen3-Omni
stage_args:
  # prefill
  - stage_id: 0
    stage_type: llm
    is_prefill_only: true
    runtime:
      devices: "0"
      env: {A: runtime}
      max_batch_size: 2
    engine_args:
      model_stage: thinker
      worker_type: ar
      max_num_seqs: 4 # batch
      enforce_eager: true
    final_output: false
    is_comprehension: true
    default_sampling_params: {temperature: 0.9}
    output_connectors: {to_stage_1: mc}
  - stage_id: 1
    stage_type: llm
    is_decode_only: true
    runtime:
      num_replicas: 2
    engine_args:
      model_stage: thinker
      worker_type: ar
    engine_input_source: [1]
    final_output: true
    final_output_type: text
    is_comprehension: true
    default_sampling_params: {temperature: 0.4}
    input_connectors: {from_stage_0: mc}
  - stage_id: 2
    runtime: {}
    engine_args:
      model_stage: talker
    engine_input_source: [1]
    custom_process_input_func: m.thinker2talker
    final_output: true
    final_output_type: audio
runtime:
  enabled: true
  # how the stages talk
  connectors:
    mc: {name: MooncakeConnector}
  edges:
    - {from: 0, to: 1}

# the platforms
# none yet
`
	out, dropped := mustParse(t, src).ToStageArgs(plan)
	if out.Dialect != StageArgs {
		t.Errorf("dialect %q", out.Dialect)
	}
	if got := mustRender(t, out); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	wantDropped := []DroppedKey{{"pipeline", 2}, {"base_config", 4}, {"platforms", 26}}
	if !deepEqual(dropped, wantDropped) {
		t.Errorf("dropped = %+v, want %+v", dropped, wantDropped)
	}
	if _, err := Parse([]byte(mustRender(t, out))); err != nil {
		t.Errorf("the result does not parse: %v", err)
	}
}

// A prefill stage sends to its decode half: it takes none of its
// topology's input functions, which decode keeps.
func TestToStageArgsPrefillTakesNoInputFuncs(t *testing.T) {
	preset := mustParse(t, "stage_args:\n  - stage_id: 0\n    custom_process_input_func: m.a\n    sync_process_input_func: m.b\n    final_output: true\n").Stages()
	out, _ := mustParse(t, "stages:\n  - stage_id: 0\n  - stage_id: 1\n").ToStageArgs([]StageArgsPlan{
		{ID: 0, Role: Prefill, Topology: preset[0]},
		{ID: 1, Role: Decode, Inputs: []int{0}, Topology: preset[0]},
	})
	want := `stage_args:
  - stage_id: 0
    is_prefill_only: true
    runtime: {}
    engine_args: {}
    final_output: false
  - stage_id: 1
    is_decode_only: true
    runtime: {}
    engine_args: {}
    engine_input_source: [0]
    custom_process_input_func: m.a
    sync_process_input_func: m.b
    final_output: true
runtime:
  enabled: true
`
	if got := mustRender(t, out); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}
