package stageconfig

import (
	"fmt"
	"strings"
	"testing"
)

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
  - stage_id: 0 # p
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
	readFirst := "the stage also sets it where vllm-omni's deploy loader reads it first (vllm_omni/config/stage_config.py@001275f2 _parse_stage_deploy)"
	wantDropped := []DroppedKey{{"pipeline", 2, noSuchKey}, {"base_config", 4, noSuchKey},
		{"stages[0].env", 9, readFirst}, {"stages[0].engine_args.max_num_seqs", 12, readFirst}, {"platforms", 26, noSuchKey}}
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

const noSuchKey = "the stage_args dialect has no such key"

// TestToStageArgsReportsWhatItDrops: a stage's key that another spelling
// of the same setting stands for, where the deploy loader reads that one
// first, is not written, and is reported with its path and line; the
// comments of every key not written are kept.
func TestToStageArgsReportsWhatItDrops(t *testing.T) {
	for _, c := range []struct {
		name, stage string
		want        []string // Key@Line
	}{
		{"flat devices under runtime.devices", "devices: \"0\"  # flat\n    runtime: {devices: \"1\"}  # nested", []string{"stages[0].devices@3"}},
		{"runtime.devices over flat devices", "runtime: {devices: \"1\"}  # nested\n    devices: \"0\"  # flat", []string{"stages[0].devices@4"}},
		{"nested engine key under a flat one", "max_model_len: 10  # flat\n    engine_args: {max_model_len: 20}  # nested", []string{"stages[0].engine_args.max_model_len@4"}},
		{"flat engine key after a nested one", "engine_args: {max_model_len: 20}  # nested\n    max_model_len: 10  # flat", []string{"stages[0].engine_args.max_model_len@3"}},
		{"env in both", "env: {A: \"1\"}  # flat\n    runtime:\n      env: {A: \"2\"}  # nested", []string{"stages[0].env@3"}},
		{"a topology key, replaced by the preset's", "final_output: true  # flat\n    model_arch: X  # nested", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "stages:\n  - stage_id: 0\n    " + c.stage + "\n"
			out, dropped := mustParse(t, src).ToStageArgs([]StageArgsPlan{{ID: 0, Topology: mustParse(t, "stage_args:\n  - stage_id: 0\n    final_output: true\n").Stages()[0]}})
			var got []string
			for _, d := range dropped {
				got = append(got, fmt.Sprintf("%s@%d", d.Key, d.Line))
				if !strings.Contains(d.Why, "reads it first") {
					t.Errorf("%s: why %q", d.Key, d.Why)
				}
			}
			if !deepEqual(got, c.want) {
				t.Errorf("dropped %v, want %v", got, c.want)
			}
			text := mustRender(t, out)
			for _, comment := range []string{"# flat", "# nested"} {
				if !strings.Contains(text, comment) {
					t.Errorf("%s is lost:\n%s", comment, text)
				}
			}
		})
	}
}
