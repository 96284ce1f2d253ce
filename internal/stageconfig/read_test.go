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
			got.hasFinal, got.final, got.prefill = s.get("final_output") != nil, s.Flag("final_output"), s.Flag("is_prefill_only")
			got.seqs, got.hasSeqs = s.EngineInt("max_num_seqs")
			got.mem, _ = s.EngineFloat("gpu_memory_utilization")
			got.model, _ = s.EngineString("model_stage")
			got.tp, _ = s.ParallelConfig().Int("tensor_parallel_size")
			got.env, _ = s.EnvVar("A")
			got.envs, _ = s.EnvVars()
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
			if got := d.HasTop("pipeline"); got != tc.hasPipe {
				t.Errorf("HasTop(pipeline) = %t, want %t", got, tc.hasPipe)
			}
			if names, defined := d.ConnectorNames(); !deepEqual(names, tc.names) || defined != tc.defined {
				t.Errorf("ConnectorNames() = %q, %t; want %q, %t", names, defined, tc.names, tc.defined)
			}
		})
	}
}

// TestConnectorClasses reads each defined connector's class where the
// dialect keeps the definitions, and nothing from the other place.
func TestConnectorClasses(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      map[string]string
	}{
		{"stages", "stages: []\nconnectors: {mc: {name: MooncakeTransferEngineConnector}, shm: {name: null}, odd: x}\nruntime: {connectors: {c: {name: C}}}\n",
			map[string]string{"mc": "MooncakeTransferEngineConnector", "shm": "", "odd": ""}},
		{"stage_args", "stage_args: []\nconnectors: {b: {name: B}}\nruntime: {connectors: {c: {name: C}}}\n", map[string]string{"c": "C"}},
		{"none", "stage_args: []\nruntime: {enabled: true}\n", map[string]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustParse(t, tc.src).ConnectorClasses(); !deepEqual(got, tc.want) {
				t.Errorf("ConnectorClasses() = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestSettingsView reads a kv_transfer_config through Settings, as the
// release checks do: present and null keys, nesting, MultiConnector's
// children, and a stage without the mapping.
func TestSettingsView(t *testing.T) {
	stages := mustParse(t, `stage_args:
  - stage_id: 0
    runtime: {max_batch_size: null}
    engine_args:
      kv_transfer_config:
        kv_connector: MultiConnector
        kv_buffer_size: 1e9
        kv_buffer_device: null
        kv_connector_extra_config:
          connectors:
            - {kv_connector: MooncakeConnector, kv_connector_extra_config: {mooncake_bootstrap_port: "25201"}}
            - {kv_connector: Mine, kv_connector_module_path: my.module}
  - stage_id: 1
    engine_args: {kv_transfer_config: MooncakeConnector}
`).Stages()
	kv := stages[0].KVTransferSettings()
	if !kv.IsMapping() {
		t.Fatal("kv_transfer_config is not read as a mapping")
	}
	if got, ok := kv.String("kv_connector"); got != "MultiConnector" || !ok {
		t.Errorf("String(kv_connector) = %q, %t", got, ok)
	}
	if got, ok := kv.String("kv_buffer_size"); got != "1e9" || !ok {
		t.Errorf("String(kv_buffer_size) = %q, %t; want the text as written", got, ok)
	}
	if _, ok := kv.String("kv_buffer_device"); ok || !kv.Has("kv_buffer_device") || kv.Has("kv_role") {
		t.Errorf("a null key: String ok = %t, Has = %t; an absent one: Has = %t", ok, kv.Has("kv_buffer_device"), kv.Has("kv_role"))
	}
	children := kv.Get("kv_connector_extra_config").Entries("connectors")
	if len(children) != 2 {
		t.Fatalf("%d children, want 2", len(children))
	}
	if port, ok := children[0].Get("kv_connector_extra_config").String("mooncake_bootstrap_port"); port != "25201" || !ok {
		t.Errorf("the first child's bootstrap port = %q, %t", port, ok)
	}
	if !children[1].Has("kv_connector_module_path") || children[0].Has("kv_connector_module_path") {
		t.Error("kv_connector_module_path is not read on the right child")
	}
	if got := kv.Get("kv_role").Entries("connectors"); got != nil {
		t.Errorf("entries under an absent key: %v", got)
	}

	scalar := stages[1].KVTransferSettings()
	if scalar.IsMapping() || scalar.Has("kv_connector") {
		t.Error("a scalar kv_transfer_config reads as a mapping")
	}
	if !stages[0].Sets("runtime", "max_batch_size") || stages[1].Sets("runtime", "max_batch_size") || stages[0].Sets("runtime", "devices") {
		t.Error("Sets does not tell a written path (null included) from an absent one")
	}
}
