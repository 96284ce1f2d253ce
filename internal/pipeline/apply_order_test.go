package pipeline

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// A base config may list its stages in any order of their ids: apply
// gives each stage of the copy the planned stage of its own id, whatever
// its place in the list, so the thinker's copies become the PD pair and
// every other stage keeps its model_stage under its new id.
func TestApplyStagesOutOfIDOrder(t *testing.T) {
	base := func(order ...string) string {
		stages := map[string]string{
			"thinker": `  - stage_id: 0
    runtime:
      devices: "0"
    engine_args:
      model_stage: thinker
      worker_type: ar
    final_output: true
    final_output_type: text
`,
			"talker": `  - stage_id: 1
    runtime:
      devices: "1"
    engine_args:
      model_stage: talker
      worker_type: ar
      gpu_memory_utilization: 0.5
    engine_input_source: [0]
`,
			"code2wav": `  - stage_id: 2
    runtime:
      devices: "1"
    engine_args:
      model_stage: code2wav
      worker_type: generation
      gpu_memory_utilization: 0.1
    engine_input_source: [1]
    final_output: true
    final_output_type: audio
`,
		}
		var b strings.Builder
		b.WriteString("stage_args:\n")
		for _, name := range order {
			b.WriteString(stages[name])
		}
		return b.String()
	}
	for _, order := range [][]string{
		{"thinker", "code2wav", "talker"},
		{"talker", "thinker", "code2wav"},
	} {
		res, ds := Plan(Spec{Model: seedModel, BaseConfig: base(order...), Format: "stage_args"})
		if res == nil {
			t.Fatalf("%v: %s", order, describeDiags(ds))
		}
		var doc struct {
			StageArgs []struct {
				StageID    int            `yaml:"stage_id"`
				Prefill    bool           `yaml:"is_prefill_only"`
				Decode     bool           `yaml:"is_decode_only"`
				EngineArgs map[string]any `yaml:"engine_args"`
			} `yaml:"stage_args"`
		}
		if err := yaml.Unmarshal([]byte(res.ConfigYAML), &doc); err != nil {
			t.Fatal(err)
		}
		want := map[int]string{0: "thinker prefill", 1: "thinker decode", 2: "talker", 3: "code2wav"}
		for _, st := range doc.StageArgs {
			got, _ := st.EngineArgs["model_stage"].(string)
			if st.Prefill {
				got += " prefill"
			}
			if st.Decode {
				got += " decode"
			}
			if got != want[st.StageID] {
				t.Errorf("%v: stage %d is %q, want %q", order, st.StageID, got, want[st.StageID])
			}
		}
	}
}
