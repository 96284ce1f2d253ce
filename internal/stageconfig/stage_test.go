package stageconfig

import (
	"strings"
	"testing"
)

// stage0 parses src and returns a view of its first stage.
func stage0(t *testing.T, src string) (*Document, Stage) {
	t.Helper()
	d := mustParse(t, src)
	return d, d.Stages()[0]
}

func TestStageIDAndNames(t *testing.T) {
	tests := []struct {
		name, src string
		id        int
		hasID     bool
		model, wt string
		stageType string
		describe  string
	}{
		{"stage_args", "stage_args:\n  - stage_id: 3\n    engine_args: {model_stage: talker, worker_type: ar}\n", 3, true, "talker", "ar", "llm", "stage 3 (talker)"},
		{"stages flat keys", "stages:\n  - stage_id: 1\n    model_stage: code2wav\n    worker_type: generation\n    stage_type: diffusion\n", 1, true, "code2wav", "generation", "diffusion", "stage 1 (code2wav)"},
		{"stages nested engine_args", "stages:\n  - stage_id: 2\n    engine_args: {model_stage: thinker}\n", 2, true, "thinker", "", "llm", "stage 2 (thinker)"},
		{"older worker_cls", "stage_args:\n  - stage_id: 0\n    engine_args: {worker_cls: vllm_omni.worker.gpu_ar_worker.GPUARWorker}\n", 0, true, "", "vllm_omni.worker.gpu_ar_worker.GPUARWorker", "llm", "stage 0"},
		{"no id", "stage_args:\n  - engine_args: {model_stage: thinker}\n", 0, false, "thinker", "", "llm", "stage #1 (thinker)"},
		{"string id", "stage_args:\n  - stage_id: \"0\"\n", 0, false, "", "", "llm", "stage #1"},
		{"float id", "stage_args:\n  - stage_id: 1.5\n", 0, false, "", "", "llm", "stage #1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, s := stage0(t, tc.src)
			id, ok := s.ID()
			if id != tc.id || ok != tc.hasID {
				t.Errorf("ID() = %d, %t; want %d, %t", id, ok, tc.id, tc.hasID)
			}
			if got := s.ModelStage(); got != tc.model {
				t.Errorf("ModelStage() = %q, want %q", got, tc.model)
			}
			if got := s.WorkerType(); got != tc.wt {
				t.Errorf("WorkerType() = %q, want %q", got, tc.wt)
			}
			if got := s.StageType(); got != tc.stageType {
				t.Errorf("StageType() = %q, want %q", got, tc.stageType)
			}
			if got := s.Describe(); got != tc.describe {
				t.Errorf("Describe() = %q, want %q", got, tc.describe)
			}
		})
	}
}

func TestStageEngine(t *testing.T) {
	// stage_args keeps engine settings under engine_args; a flat key of the
	// same name is a different (ignored) key and must not be read.
	_, s := stage0(t, "stage_args:\n  - stage_id: 0\n    max_num_seqs: 99\n    engine_args:\n      max_num_seqs: 4\n")
	if v, _ := scalarInt(s.engine("max_num_seqs")); v != 4 {
		t.Errorf("stage_args engine = %d, want 4 from engine_args", v)
	}
	// stages prefers the flat key and falls back to nested engine_args.
	_, s = stage0(t, "stages:\n  - stage_id: 0\n    max_num_seqs: 8\n    engine_args:\n      max_num_seqs: 4\n      max_model_len: 100\n")
	if v, _ := scalarInt(s.engine("max_num_seqs")); v != 8 {
		t.Errorf("stages engine = %d, want the flat 8", v)
	}
	if v, _ := scalarInt(s.engine("max_model_len")); v != 100 {
		t.Errorf("stages engine fallback = %d, want 100", v)
	}
	if s.engine("missing") != nil {
		t.Error("engine of a missing key must be nil")
	}
	if !isEngineKey("kv_transfer_config") || isEngineKey("devices") || isEngineKey("default_sampling_params") {
		t.Error("isEngineKey misclassifies reserved and engine keys")
	}
}

func TestStageSetEngine(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{
			"stage_args existing key keeps its place and comment",
			"stage_args:\n  - stage_id: 0\n    engine_args:\n      a: 1\n      tensor_parallel_size: 1 # tp\n      b: 2\n",
			"stage_args:\n  - stage_id: 0\n    engine_args:\n      a: 1\n      tensor_parallel_size: 2 # tp\n      b: 2\n",
		},
		{
			"stage_args without engine_args creates it after runtime",
			"stage_args:\n  - stage_id: 0\n    runtime:\n      devices: \"0\"\n    final_output: true\n",
			"stage_args:\n  - stage_id: 0\n    runtime:\n      devices: \"0\"\n    engine_args:\n      tensor_parallel_size: 2\n    final_output: true\n",
		},
		{
			"stages new key goes before default_sampling_params",
			"stages:\n  - stage_id: 0\n    devices: \"0\"\n    default_sampling_params:\n      seed: 42\n",
			"stages:\n  - stage_id: 0\n    devices: \"0\"\n    tensor_parallel_size: 2\n    default_sampling_params:\n      seed: 42\n",
		},
		{
			"stages key nested under engine_args is updated there",
			"stages:\n  - stage_id: 0\n    engine_args:\n      tensor_parallel_size: 1\n",
			"stages:\n  - stage_id: 0\n    engine_args:\n      tensor_parallel_size: 2\n",
		},
		{
			"stages flat key wins over nested",
			"stages:\n  - stage_id: 0\n    tensor_parallel_size: 1\n    engine_args:\n      tensor_parallel_size: 1\n",
			"stages:\n  - stage_id: 0\n    tensor_parallel_size: 2\n    engine_args:\n      tensor_parallel_size: 1\n",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, s := stage0(t, tc.src)
			s.setEngine("tensor_parallel_size", intNode(2))
			if got := mustRender(t, d); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			if v, _ := scalarInt(s.engine("tensor_parallel_size")); v != 2 {
				t.Errorf("engine reads %d after setEngine(2)", v)
			}
		})
	}
}

func TestStageMergeEngine(t *testing.T) {
	d, s := stage0(t, "stages:\n  - stage_id: 0\n    kv_transfer_config:\n      kv_connector: MooncakeConnector\n    default_sampling_params: {}\n")
	if err := s.MergeEngine("kv_transfer_config", map[string]any{"kv_buffer_size": int64(5)}); err != nil {
		t.Fatal(err)
	}
	if err := s.MergeEngine("max_model_len", int64(10)); err != nil {
		t.Fatal(err)
	}
	want := "stages:\n  - stage_id: 0\n    kv_transfer_config:\n      kv_connector: MooncakeConnector\n      kv_buffer_size: 5\n    max_model_len: 10\n    default_sampling_params: {}\n"
	if got := mustRender(t, d); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	d, s = stage0(t, "stage_args:\n  - stage_id: 0\n")
	if err := s.MergeEngine("hf_overrides", map[string]any{"x": int64(1)}); err != nil {
		t.Fatal(err)
	}
	if got := mustRender(t, d); got != "stage_args:\n  - stage_id: 0\n    engine_args:\n      hf_overrides:\n        x: 1\n" {
		t.Errorf("got:\n%s", got)
	}
}

func TestStageDevices(t *testing.T) {
	tests := []struct {
		name, src string
		want      []int
		set       bool
		errPart   string
	}{
		{"stage_args string", "stage_args:\n  - runtime: {devices: \"0,1\"}\n", []int{0, 1}, true, ""},
		{"stage_args spaces", "stage_args:\n  - runtime: {devices: \" 2 , 3 \"}\n", []int{2, 3}, true, ""},
		{"stage_args int", "stage_args:\n  - runtime: {devices: 4}\n", []int{4}, true, ""},
		{"stage_args list", "stage_args:\n  - runtime: {devices: [0, 5]}\n", []int{0, 5}, true, ""},
		{"stage_args flat devices are not read", "stage_args:\n  - devices: \"7\"\n", nil, false, ""},
		{"stages flat", "stages:\n  - devices: \"1\"\n", []int{1}, true, ""},
		{"stages runtime", "stages:\n  - runtime: {devices: \"6\"}\n", []int{6}, true, ""},
		{"stages flat wins", "stages:\n  - devices: \"1\"\n    runtime: {devices: \"6\"}\n", []int{1}, true, ""},
		{"none", "stage_args:\n  - stage_id: 0\n", nil, false, ""},
		{"empty", "stage_args:\n  - runtime: {devices: \"\"}\n", nil, true, "devices is empty"},
		{"not a number", "stage_args:\n  - runtime: {devices: \"0,gpu1\"}\n", nil, true, `device "gpu1" is not a GPU index`},
		{"negative", "stage_args:\n  - runtime: {devices: \"-1\"}\n", nil, true, `device "-1"`},
		{"mapping", "stage_args:\n  - runtime: {devices: {a: 1}}\n", nil, true, "comma-separated string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, s := stage0(t, tc.src)
			devs, ok, err := s.Devices()
			if ok != tc.set {
				t.Errorf("ok = %t, want %t", ok, tc.set)
			}
			if tc.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errPart) {
					t.Errorf("err = %v, want it to contain %q", err, tc.errPart)
				}
				if pe, isPE := err.(*ParseError); !isPE || pe.line == 0 {
					t.Errorf("err %v should be a ParseError with a line", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !deepEqual(devs, tc.want) && (len(devs) != 0 || len(tc.want) != 0) {
				t.Errorf("devices = %v, want %v", devs, tc.want)
			}
		})
	}
}

func TestStageSetDevices(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"stage_args replaces in place",
			"stage_args:\n  - stage_id: 0\n    runtime:\n      devices: \"0\" # gpu\n      max_batch_size: 1\n",
			"stage_args:\n  - stage_id: 0\n    runtime:\n      devices: \"2,3\" # gpu\n      max_batch_size: 1\n"},
		{"stage_args creates runtime after stage_type",
			"stage_args:\n  - stage_id: 0\n    stage_type: llm\n    engine_args: {}\n",
			"stage_args:\n  - stage_id: 0\n    stage_type: llm\n    runtime:\n      devices: \"2,3\"\n    engine_args: {}\n"},
		{"stages flat after stage_id",
			"stages:\n  - stage_id: 0\n    max_num_seqs: 1\n",
			"stages:\n  - stage_id: 0\n    devices: \"2,3\"\n    max_num_seqs: 1\n"},
		{"stages keeps runtime.devices where it is",
			"stages:\n  - stage_id: 0\n    runtime:\n      devices: \"0\"\n",
			"stages:\n  - stage_id: 0\n    runtime:\n      devices: \"2,3\"\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, s := stage0(t, tc.src)
			s.SetDevices([]int{2, 3})
			if got := mustRender(t, d); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			if devs, _, _ := s.Devices(); !deepEqual(devs, []int{2, 3}) {
				t.Errorf("Devices() after SetDevices = %v", devs)
			}
		})
	}
	if got := FormatDevices(nil); got != "" {
		t.Errorf("FormatDevices(nil) = %q", got)
	}
	if got := FormatDevices([]int{0, 10, 2}); got != "0,10,2" {
		t.Errorf("FormatDevices = %q", got)
	}
}

// TestStageSetMaxNumSeqs covers the legacy spelling: configs that set only
// runtime.max_batch_size must be updated there, not given a second,
// competing max_num_seqs.
func TestStageSetMaxNumSeqs(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"legacy only",
			"stage_args:\n  - runtime:\n      max_batch_size: 1\n    engine_args:\n      model_stage: thinker\n",
			"stage_args:\n  - runtime:\n      max_batch_size: 16\n    engine_args:\n      model_stage: thinker\n"},
		{"both spellings stay equal",
			"stage_args:\n  - runtime:\n      max_batch_size: 1\n    engine_args:\n      max_num_seqs: 1\n",
			"stage_args:\n  - runtime:\n      max_batch_size: 16\n    engine_args:\n      max_num_seqs: 16\n"},
		{"modern only",
			"stage_args:\n  - engine_args:\n      max_num_seqs: 64\n",
			"stage_args:\n  - engine_args:\n      max_num_seqs: 16\n"},
		{"neither: engine_args gains it",
			"stage_args:\n  - runtime:\n      devices: \"0\"\n",
			"stage_args:\n  - runtime:\n      devices: \"0\"\n    engine_args:\n      max_num_seqs: 16\n"},
		{"stages flat",
			"stages:\n  - stage_id: 0\n",
			"stages:\n  - stage_id: 0\n    max_num_seqs: 16\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, s := stage0(t, tc.src)
			s.SetMaxNumSeqs(16)
			if got := mustRender(t, d); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			if v, ok := s.maxNumSeqs(); !ok || v != 16 {
				t.Errorf("maxNumSeqs() = %d, %t after SetMaxNumSeqs(16)", v, ok)
			}
		})
	}
	_, s := stage0(t, "stage_args:\n  - stage_id: 0\n")
	if _, ok := s.maxNumSeqs(); ok {
		t.Error("maxNumSeqs() reports a value on a stage without one")
	}
}

func TestStageSetEnv(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"stage_args creates runtime.env",
			"stage_args:\n  - stage_id: 0\n    runtime:\n      devices: \"0\"\n",
			"stage_args:\n  - stage_id: 0\n    runtime:\n      devices: \"0\"\n      env:\n        VLLM_HOST_IP: \"10.0.0.1\"\n"},
		{"stage_args keeps existing entries",
			"stage_args:\n  - runtime:\n      env:\n        A: \"1\" # keep\n",
			"stage_args:\n  - runtime:\n      env:\n        A: \"1\" # keep\n        VLLM_HOST_IP: \"10.0.0.1\"\n"},
		{"stages flat env after devices",
			"stages:\n  - stage_id: 0\n    devices: \"0\"\n    max_num_seqs: 1\n",
			"stages:\n  - stage_id: 0\n    devices: \"0\"\n    env:\n      VLLM_HOST_IP: \"10.0.0.1\"\n    max_num_seqs: 1\n"},
		{"stages replaces a value",
			"stages:\n  - env:\n      VLLM_HOST_IP: \"127.0.0.1\"\n",
			"stages:\n  - env:\n      VLLM_HOST_IP: \"10.0.0.1\"\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, s := stage0(t, tc.src)
			s.SetEnv("VLLM_HOST_IP", "10.0.0.1")
			if got := mustRender(t, d); got != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
			if v, _ := scalarString(mapGet(s.env(), "VLLM_HOST_IP")); v != "10.0.0.1" {
				t.Errorf("env() reads %q", v)
			}
		})
	}
}

func TestStageInputsAndConnectors(t *testing.T) {
	tests := []struct {
		name, src string
		ids       []int
		present   bool
		errPart   string
	}{
		{"absent", "stage_args:\n  - stage_id: 0\n", nil, false, ""},
		{"null", "stage_args:\n  - engine_input_source: null\n", nil, true, ""},
		{"flow list", "stage_args:\n  - engine_input_source: [0, 2]\n", []int{0, 2}, true, ""},
		{"block list", "stage_args:\n  - engine_input_source:\n      - 1\n", []int{1}, true, ""},
		{"scalar", "stage_args:\n  - engine_input_source: 0\n", nil, true, "must be a list of stage ids"},
		{"non-integer entry", "stage_args:\n  - engine_input_source: [thinker]\n", nil, true, `"thinker" is not a stage id`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, s := stage0(t, tc.src)
			ids, ok, err := s.Inputs()
			if ok != tc.present {
				t.Errorf("present = %t, want %t", ok, tc.present)
			}
			if tc.errPart != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errPart) {
					t.Errorf("err = %v, want %q", err, tc.errPart)
				}
				return
			}
			if err != nil || len(ids) != len(tc.ids) || (len(ids) > 0 && !deepEqual(ids, tc.ids)) {
				t.Errorf("Inputs() = %v, %v; want %v", ids, err, tc.ids)
			}
		})
	}
	_, s := stage0(t, "stages:\n  - input_connectors: {from_stage_0: a, from_stage_12: b, from_stage_x: c, to_stage_3: d, from_stage_-1: e}\n")
	if got := s.ConnectorStages("input_connectors", "from_stage_"); !deepEqual(got, []int{0, 12}) {
		t.Errorf("ConnectorStages = %v, want [0 12]", got)
	}
}

func TestDocumentStages(t *testing.T) {
	d := mustParse(t, "x: &s {stage_id: 5}\nstages:\n  - *s\n  - stage_id: 6\n")
	ss := d.Stages()
	if len(ss) != 2 {
		t.Fatalf("%d stages", len(ss))
	}
	// An aliased stage is read through its alias.
	if id, ok := ss[0].ID(); !ok || id != 5 || ss[0].Index != 0 || ss[1].Index != 1 {
		t.Errorf("stage views: %+v", ss)
	}
	if d.stageList() == nil || d.top() == nil {
		t.Error("stageList/top nil")
	}
}

// Connector keys are read strictly, so a key that merely starts like one is
// left alone when stages are renumbered.
func TestConnectorStageID(t *testing.T) {
	for key, want := range map[string]int{"from_stage_0": 0, "from_stage_12": 12} {
		if got, ok := ConnectorStageID(key, "from_stage_"); !ok || got != want {
			t.Errorf("%s = %d, %v", key, got, ok)
		}
	}
	for _, key := range []string{"from_stage_1x", "from_stage_-1", "from_stage_", "to_stage_1", "stage_1"} {
		if got, ok := ConnectorStageID(key, "from_stage_"); ok {
			t.Errorf("%s read as %d", key, got)
		}
	}
}
