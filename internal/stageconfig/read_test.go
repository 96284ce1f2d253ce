package stageconfig

import "testing"

// TestStageReads reads the same settings from a stage written in each
// dialect, where each dialect keeps them.
func TestStageReads(t *testing.T) {
	type reads struct {
		line                 int
		hasFinal, final      bool
		prefill              bool
		seqs                 int
		hasSeqs              bool
		mem                  float64
		model                string
		tp                   int
		env                  string
		envs                 map[string]string
		kv                   KVTransfer
		hasKV                bool
		hasEngineNull, hasNo bool
	}
	for _, tc := range []struct {
		name, src string
		want      reads
	}{
		{"stage_args", `stage_args:
  - stage_id: 0
    final_output: yes
    is_prefill_only: "true"
    runtime:
      env: {A: "1", B: 2, C: {x: 1}, D: null}
    env: {A: flat}
    max_num_seqs: 99
    engine_args:
      max_num_seqs: 0x10
      gpu_memory_utilization: 1
      model_stage: thinker
      quantization: null
      parallel_config: {tensor_parallel_size: 2}
      kv_transfer_config:
        kv_connector: MooncakeConnector
        kv_role: kv_producer
        kv_buffer_device: cuda
        kv_buffer_size: 1e9
        kv_connector_extra_config: {mooncake_bootstrap_port: 25201}
`, reads{line: 2, hasFinal: true, final: true, seqs: 16, hasSeqs: true, mem: 1, model: "thinker", tp: 2,
			env: "1", envs: map[string]string{"A": "1", "B": "2"}, hasKV: true, hasEngineNull: true,
			kv: KVTransfer{Connector: "MooncakeConnector", Role: "kv_producer", BufferDevice: "cuda", BufferSize: "1e9", BootstrapPort: 25201, HasBootstrapPort: true}}},
		{"stages", `stages:

  - stage_id: 0
    final_output: false
    is_prefill_only: true
    env: {A: flat}
    max_num_seqs: 4
    gpu_memory_utilization: 0.9
    quantization: null
    engine_args: {max_num_seqs: 8, model_stage: talker}
    parallel_config: {tensor_parallel_size: "2"}
    kv_transfer_config: {kv_role: kv_consumer, kv_connector_extra_config: {mooncake_bootstrap_port: "x"}}
`, reads{line: 3, hasFinal: true, prefill: true, seqs: 4, hasSeqs: true, mem: 0.9, model: "talker",
			env: "flat", envs: map[string]string{"A": "flat"}, hasKV: true, hasEngineNull: true,
			kv: KVTransfer{Role: "kv_consumer"}}},
		{"nothing set", "stages:\n  - stage_id: 0\n    kv_transfer_config: [x]\n",
			reads{line: 2, envs: map[string]string{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, tc.src).Stages()[0]
			var got reads
			got.line = s.Line()
			got.hasFinal, got.final, got.prefill = s.Get("final_output") != nil, s.Flag("final_output"), s.Flag("is_prefill_only")
			got.seqs, got.hasSeqs = s.EngineInt("max_num_seqs")
			got.mem, _ = s.EngineFloat("gpu_memory_utilization")
			got.model, _ = s.EngineString("model_stage")
			got.tp, _ = s.ParallelConfig().Int("tensor_parallel_size")
			got.env, _ = s.EnvVar("A")
			got.envs = s.EnvVars()
			got.kv, got.hasKV = s.KVTransfer()
			got.hasEngineNull, got.hasNo = s.HasEngine("quantization"), s.HasEngine("no_such_key")
			if !deepEqual(got, tc.want) {
				t.Errorf("reads:\n %+v\nwant:\n %+v", got, tc.want)
			}
			if _, ok := s.EngineString("quantization"); ok {
				t.Error("EngineString read a null as set")
			}
		})
	}
}

func TestConnectorRefs(t *testing.T) {
	s := mustParse(t, `stages:
  - stage_id: 1
    input_connectors:
      from_stage_0: mc
      from_stage_2:
        name: SharedMemoryConnector
      from_stage_3: null
    output_connectors: mc
`).Stages()[0]
	want := []ConnectorRef{
		{Key: "from_stage_0", Name: "mc", Line: 4},
		{Key: "from_stage_2", Line: 6, Inline: true},
		{Key: "from_stage_3", Line: 7, Inline: true},
	}
	if got := s.ConnectorRefs("input_connectors"); !deepEqual(got, want) {
		t.Errorf("input refs = %+v\nwant %+v", got, want)
	}
	if got := s.ConnectorRefs("output_connectors"); got != nil {
		t.Errorf("a scalar output_connectors gave refs %+v", got)
	}
}

func TestDocumentReads(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		pipeline  string
		hasPipe   bool
		names     []string
		defined   bool
	}{
		{"stages", "pipeline: qwen3_omni\nstages: []\nconnectors: {b: {}, a: {}}\nruntime: {connectors: {c: {}}}\n", "qwen3_omni", true, []string{"b", "a"}, true},
		{"stage_args", "stage_args: []\nconnectors: {b: {}}\nruntime: {connectors: {c: {}}}\n", "", false, []string{"c"}, true},
		{"empty connectors are defined", "stages: []\nconnectors: {}\npipeline: null\n", "", true, []string{}, true},
		{"no connectors", "stage_args: []\nruntime: {enabled: true}\n", "", false, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := mustParse(t, tc.src)
			if got, ok := d.TopString("pipeline"); got != tc.pipeline || ok != (tc.pipeline != "") {
				t.Errorf("TopString(pipeline) = %q, %t", got, ok)
			}
			if got := MapGet(d.Top(), "pipeline") != nil; got != tc.hasPipe {
				t.Errorf("pipeline set = %t, want %t", got, tc.hasPipe)
			}
			if names, defined := d.ConnectorNames(); !deepEqual(names, tc.names) || defined != tc.defined {
				t.Errorf("ConnectorNames() = %q, %t; want %q, %t", names, defined, tc.names, tc.defined)
			}
		})
	}
}
