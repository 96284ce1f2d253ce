package stageconfig

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestSplitStage(t *testing.T) {
	src := `stage_args:
  # the thinker
  - stage_id: 0 # first
    engine_args: *ea
  - stage_id: 1
    engine_input_source: [0]
`
	src = "common: &ea\n  model_stage: thinker\n" + src
	d := mustParse(t, src)
	before := mustRender(t, d)
	split := d.SplitStage(0)
	want := `common:
  model_stage: thinker
stage_args:
  # the thinker
  - stage_id: 0 # first
    engine_args:
      model_stage: thinker
  - stage_id: 0 # first
    engine_args:
      model_stage: thinker
  - stage_id: 1
    engine_input_source: [0]
`
	if got := mustRender(t, split); got != want {
		t.Errorf("split:\n%s\nwant:\n%s", got, want)
	}
	if got := mustRender(t, d); got != before {
		t.Errorf("the source document changed:\n%s", got)
	}
	// The halves are independent: an edit of one leaves the other alone.
	st := split.Stages()
	st[1].setEngine("model_stage", strNode("talker"))
	if st[0].ModelStage() != "thinker" || st[2].get("engine_args") != nil {
		t.Errorf("editing the decode half changed another stage:\n%s", mustRender(t, split))
	}
}

// TestStageEdits runs each edit on the first stage of src and compares the
// stage list after.
func TestStageEdits(t *testing.T) {
	for _, tc := range []struct {
		name, src string // src is the stage list, with its top-level key
		edit      func(Stage)
		want      string
	}{
		{"SetID keeps the key's place and comment", "stage_args:\n  - stage_type: llm\n    stage_id: 0 # id\n    final_output: true\n",
			func(s Stage) { s.SetID(4) }, "stage_args:\n  - stage_type: llm\n    stage_id: 4 # id\n    final_output: true\n"},
		{"SetID adds a missing id", "stages:\n  - devices: \"0\"\n",
			func(s Stage) { s.SetID(2) }, "stages:\n  - devices: \"0\"\n    stage_id: 2\n"},
		{"MarkPrefill after stage_type", "stage_args:\n  - stage_id: 0\n    stage_type: llm\n    runtime: {}\n",
			func(s Stage) { s.MarkPrefill() }, "stage_args:\n  - stage_id: 0\n    stage_type: llm\n    is_prefill_only: true\n    runtime: {}\n"},
		{"MarkDecode after stage_id", "stage_args:\n  - runtime: {}\n    stage_id: 1\n    final_output: true\n",
			func(s Stage) { s.MarkDecode() }, "stage_args:\n  - runtime: {}\n    stage_id: 1\n    is_decode_only: true\n    final_output: true\n"},
		{"MarkPrefill does nothing in stages", "stages:\n  - stage_id: 0\n",
			func(s Stage) { s.MarkPrefill(); s.MarkDecode() }, "stages:\n  - stage_id: 0\n"},
		{"SetNotFinal replaces in place, drops the type", "stage_args:\n  - stage_id: 0\n    final_output: true # out\n    final_output_type: text\n    is_comprehension: true\n",
			func(s Stage) { s.SetNotFinal() }, "stage_args:\n  - stage_id: 0\n    final_output: false # out\n    is_comprehension: true\n"},
		{"SetNotFinal adds after engine_input_source", "stage_args:\n  - stage_id: 1\n    engine_args: {}\n    engine_input_source: [0]\n    default_sampling_params: {}\n",
			func(s Stage) { s.SetNotFinal() }, "stage_args:\n  - stage_id: 1\n    engine_args: {}\n    engine_input_source: [0]\n    final_output: false\n    default_sampling_params: {}\n"},
		{"SetNotFinal in stages without final_output does nothing", "stages:\n  - stage_id: 0\n    final_output_type: text\n",
			func(s Stage) { s.SetNotFinal() }, "stages:\n  - stage_id: 0\n    final_output_type: text\n"},
		{"SetNotFinal in stages corrects a written final_output", "stages:\n  - stage_id: 0\n    final_output: true\n    final_output_type: text\n",
			func(s Stage) { s.SetNotFinal() }, "stages:\n  - stage_id: 0\n    final_output: false\n"},
		{"SetInputs keeps a block list's style and comment", "stage_args:\n  - stage_id: 2\n    # from the thinker\n    engine_input_source:\n      - 0\n    final_output: true\n",
			func(s Stage) { s.SetInputs([]int{1}) }, "stage_args:\n  - stage_id: 2\n    # from the thinker\n    engine_input_source:\n      - 1\n    final_output: true\n"},
		{"SetInputs keeps a flow list's line comment", "stage_args:\n  - stage_id: 2\n    engine_input_source: [0] # note\n",
			func(s Stage) { s.SetInputs([]int{1, 0}) }, "stage_args:\n  - stage_id: 2\n    engine_input_source: [1, 0] # note\n"},
		{"SetInputs adds after engine_args", "stage_args:\n  - stage_id: 1\n    engine_args: {}\n    final_output: true\n",
			func(s Stage) { s.SetInputs([]int{0}) }, "stage_args:\n  - stage_id: 1\n    engine_args: {}\n    engine_input_source: [0]\n    final_output: true\n"},
		{"SetInputs with none removes the key", "stage_args:\n  - stage_id: 0\n    engine_input_source: [1]\n    final_output: true\n",
			func(s Stage) { s.SetInputs(nil) }, "stage_args:\n  - stage_id: 0\n    final_output: true\n"},
		{"SetInputs with none adds nothing", "stage_args:\n  - stage_id: 0\n",
			func(s Stage) { s.SetInputs(nil) }, "stage_args:\n  - stage_id: 0\n"},
		{"SetInputs does nothing in stages", "stages:\n  - stage_id: 1\n",
			func(s Stage) { s.SetInputs([]int{0}) }, "stages:\n  - stage_id: 1\n"},
		{"Delete", "stage_args:\n  - stage_id: 0\n    is_comprehension: true\n    final_output: true\n",
			func(s Stage) {
				if !s.Delete("is_comprehension") || s.Delete("is_comprehension") {
					t.Error("Delete did not report what it removed")
				}
			}, "stage_args:\n  - stage_id: 0\n    final_output: true\n"},
		{"SetEngineInt and Float under engine_args", "stage_args:\n  - stage_id: 0\n    engine_args:\n      max_num_seqs: 1 # batch\n",
			func(s Stage) { s.SetEngineInt("max_num_seqs", 8); s.SetEngineFloat("gpu_memory_utilization", 0.5) },
			"stage_args:\n  - stage_id: 0\n    engine_args:\n      max_num_seqs: 8 # batch\n      gpu_memory_utilization: 0.5\n"},
		{"SetEngineInt and Float flat in stages", "stages:\n  - stage_id: 0\n    default_sampling_params: {}\n",
			func(s Stage) { s.SetEngineInt("max_num_seqs", 8); s.SetEngineFloat("gpu_memory_utilization", 1) },
			"stages:\n  - stage_id: 0\n    max_num_seqs: 8\n    gpu_memory_utilization: 1.0\n    default_sampling_params: {}\n"},
		{"SetKVTransfer keeps other keys", "stage_args:\n  - stage_id: 0\n    engine_args:\n      kv_transfer_config:\n        kv_buffer_size: 1e9 # size\n        kv_role: kv_both\n",
			func(s Stage) {
				if err := s.SetKVTransfer([]KV{{"kv_role", Quoted("kv_producer")}, {"kv_connector", "MooncakeConnector"}}); err != nil {
					t.Fatal(err)
				}
			}, "stage_args:\n  - stage_id: 0\n    engine_args:\n      kv_transfer_config:\n        kv_buffer_size: 1e9 # size\n        kv_role: \"kv_producer\"\n        kv_connector: MooncakeConnector\n"},
		{"SetKVTransfer creates it, flat in stages", "stages:\n  - stage_id: 0\n    kv_transfer_config: null\n",
			func(s Stage) {
				if err := s.SetKVTransfer([]KV{{"kv_role", "kv_consumer"}}); err != nil {
					t.Fatal(err)
				}
				if err := s.MergeKVExtra("mooncake_bootstrap_port", 25201); err != nil {
					t.Fatal(err)
				}
			}, "stages:\n  - stage_id: 0\n    kv_transfer_config:\n      kv_role: kv_consumer\n      kv_connector_extra_config:\n        mooncake_bootstrap_port: 25201\n"},
		{"MergeKVExtra merges into an existing extra config", "stage_args:\n  - engine_args:\n      kv_transfer_config:\n        kv_connector_extra_config:\n          a: {x: 1}\n          b: 2\n",
			func(s Stage) {
				if err := s.MergeKVExtra("a", map[string]any{"z": 2}); err != nil {
					t.Fatal(err)
				}
			}, "stage_args:\n  - engine_args:\n      kv_transfer_config:\n        kv_connector_extra_config:\n          a: {x: 1, z: 2}\n          b: 2\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustParse(t, tc.src)
			tc.edit(d.Stages()[0])
			if got := mustRender(t, d); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestSetKVTransferRefusesWhatCannotBeWritten(t *testing.T) {
	d := mustParse(t, "stage_args:\n  - stage_id: 0\n")
	err := d.Stages()[0].SetKVTransfer([]KV{{"kv_buffer_size", math.Inf(1)}})
	if err == nil || !strings.Contains(err.Error(), "not a finite number") {
		t.Errorf("err = %v, want a not-finite error", err)
	}
}

func TestNameConnector(t *testing.T) {
	for _, tc := range []struct {
		name, src, key, ref string
		was                 string
		replaced            bool
		want                string
	}{
		{"new mapping after engine_input_source", "stage_args:\n  - stage_id: 1\n    engine_input_source: [0]\n    final_output: true\n",
			"input_connectors", "from_stage_0", "", false,
			"stage_args:\n  - stage_id: 1\n    engine_input_source: [0]\n    input_connectors:\n      from_stage_0: mc\n    final_output: true\n"},
		{"new mapping after the flat settings' anchor in stages", "stages:\n  - stage_id: 0\n    runtime: {}\n    devices: \"0\"\n",
			"output_connectors", "to_stage_1", "", false,
			"stages:\n  - stage_id: 0\n    runtime: {}\n    output_connectors:\n      to_stage_1: mc\n    devices: \"0\"\n"},
		{"replaces a name, keeps its comment", "stages:\n  - stage_id: 1\n    input_connectors:\n      from_stage_0: old # was\n      from_stage_2: other\n",
			"input_connectors", "from_stage_0", "old", true,
			"stages:\n  - stage_id: 1\n    input_connectors:\n      from_stage_0: mc # was\n      from_stage_2: other\n"},
		{"replaces an inline definition", "stages:\n  - stage_id: 1\n    input_connectors:\n      from_stage_0: {name: x}\n",
			"input_connectors", "from_stage_0", "", true,
			"stages:\n  - stage_id: 1\n    input_connectors:\n      from_stage_0: mc\n"},
		{"adds to an existing mapping", "stages:\n  - stage_id: 1\n    input_connectors:\n      from_stage_0: a\n",
			"input_connectors", "from_stage_2", "", false,
			"stages:\n  - stage_id: 1\n    input_connectors:\n      from_stage_0: a\n      from_stage_2: mc\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustParse(t, tc.src)
			was, replaced := d.Stages()[0].NameConnector(tc.key, tc.ref, "mc")
			if was != tc.was || replaced != tc.replaced {
				t.Errorf("NameConnector = %q, %t; want %q, %t", was, replaced, tc.was, tc.replaced)
			}
			if got := mustRender(t, d); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestRenumberConnectorKeys(t *testing.T) {
	src := `stages:
  - stage_id: 0
    output_connectors:
      to_stage_1: a # to talker
      to_stage_x: b
  - stage_id: 1
    input_connectors:
      from_stage_0: a
      from_stage_1: c
    output_connectors: none
`
	d := mustParse(t, src)
	var calls []string
	// Stage 1 is split: what fed it (to_stage_1) keeps its id, every
	// other id is renumbered.
	d.RenumberConnectorKeys(1, func(old int) int {
		calls = append(calls, fmt.Sprint(old))
		return old + 10
	})
	want := `stages:
  - stage_id: 0
    output_connectors:
      to_stage_1: a # to talker
      to_stage_x: b
  - stage_id: 1
    input_connectors:
      from_stage_10: a
      from_stage_11: c
    output_connectors: none
`
	if got := mustRender(t, d); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if got := strings.Join(calls, ","); got != "1,0,1" {
		t.Errorf("newID called for %s, want the three numbered keys", got)
	}
}

func TestDocumentEdits(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		edit      func(*Document)
		want      string
	}{
		{"SetPipeline goes first when new, under the file's header", "# header\n\nbase: x\nstages:\n  - stage_id: 0\n",
			func(d *Document) { d.SetPipeline("qwen3_omni_pd") }, "# header\n\npipeline: qwen3_omni_pd\nbase: x\nstages:\n  - stage_id: 0\n"},
		{"SetPipeline leaves the first key's comment on it", "# the stages\nstages:\n  - stage_id: 0\n",
			func(d *Document) { d.SetPipeline("qwen3_omni_pd") }, "pipeline: qwen3_omni_pd\n# the stages\nstages:\n  - stage_id: 0\n"},
		{"SetPipeline replaces in place", "stages:\n  - stage_id: 0\npipeline: qwen3_omni # base\n",
			func(d *Document) { d.SetPipeline("qwen3_omni_pd") }, "stages:\n  - stage_id: 0\npipeline: qwen3_omni_pd # base\n"},
		{"SetTopBoolIfAbsent after the first anchor present", "pipeline: p\nstages: []\nedges: []\n",
			func(d *Document) { d.SetTopBoolIfAbsent("async_chunk", true, "missing", "stages", "pipeline") },
			"pipeline: p\nstages: []\nasync_chunk: true\nedges: []\n"},
		{"SetTopBoolIfAbsent leaves a set key", "async_chunk: false # off\nstages: []\n",
			func(d *Document) { d.SetTopBoolIfAbsent("async_chunk", true, "stages") }, "async_chunk: false # off\nstages: []\n"},
		{"SetTopBoolIfAbsent appends without anchors", "stages: []\n",
			func(d *Document) { d.SetTopBoolIfAbsent("async_chunk", false) }, "stages: []\nasync_chunk: false\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustParse(t, tc.src)
			tc.edit(d)
			if got := mustRender(t, d); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}
