package releases

import (
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// A PD config the 0.24.0 row accepts; each case below breaks one rule.
const conformingPD = `stage_args:
  - stage_id: 0
    is_prefill_only: true
    runtime:
      devices: "0"
      env:
        VLLM_NIXL_SIDE_CHANNEL_PORT: "25201"
    engine_args:
      model_stage: thinker
      tensor_parallel_size: 1
      kv_transfer_config:
        kv_connector: NixlConnector
        kv_role: kv_producer
        kv_rank: 0
        kv_parallel_size: 2
    final_output: false
  - stage_id: 1
    is_decode_only: true
    runtime:
      devices: "1"
      env:
        VLLM_NIXL_SIDE_CHANNEL_PORT: "25202"
    engine_args:
      model_stage: thinker
      tensor_parallel_size: 1
      kv_transfer_config:
        kv_connector: NixlConnector
        kv_role: kv_consumer
        kv_rank: 1
        kv_parallel_size: 2
    engine_input_source: [0]
    final_output: true
  - stage_id: 2
    runtime:
      devices: "2"
    engine_args:
      model_stage: talker
    engine_input_source: [1]
    custom_process_input_func: m.thinker2talker
`

// The same pair over MooncakeConnector, which every release read fails at
// the first request (the handoff gate).
const mooncakePD = `stage_args:
  - stage_id: 0
    is_prefill_only: true
    runtime:
      devices: "0"
      env:
        VLLM_MOONCAKE_BOOTSTRAP_PORT: "25201"
    engine_args:
      model_stage: thinker
      tensor_parallel_size: 1
      kv_transfer_config:
        kv_connector: MooncakeConnector
        kv_role: kv_producer
        kv_rank: 0
        kv_parallel_size: 2
        kv_connector_extra_config:
          mooncake_bootstrap_port: 25201
    final_output: false
  - stage_id: 1
    is_decode_only: true
    runtime:
      devices: "1"
      env:
        VLLM_MOONCAKE_BOOTSTRAP_PORT: "25202"
    engine_args:
      model_stage: thinker
      tensor_parallel_size: 1
      kv_transfer_config:
        kv_connector: MooncakeConnector
        kv_role: kv_consumer
        kv_rank: 1
        kv_parallel_size: 2
        kv_connector_extra_config:
          mooncake_bootstrap_port: 25202
    engine_input_source: [0]
    final_output: true
  - stage_id: 2
    runtime:
      devices: "2"
    engine_args:
      model_stage: talker
    engine_input_source: [1]
    custom_process_input_func: m.thinker2talker
`

var serve = []string{"vllm", "serve", "Qwen/Qwen3-Omni-30B-A3B-Instruct", "--omni", "--port", "8091", "--stage-configs-path", "/etc/c.yaml"}

func release(t *testing.T, v string) Release {
	t.Helper()
	for _, r := range Table {
		if r.Version == v {
			return r
		}
	}
	t.Fatalf("no row %s", v)
	return Release{}
}

func deployment(t *testing.T, yaml string, argvs ...[]string) Deployment {
	t.Helper()
	doc, err := stageconfig.Parse([]byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if len(argvs) == 0 {
		argvs = [][]string{serve}
	}
	return Deployment{Doc: doc, Argvs: argvs}
}

// withEnvs gives the deployment's launches their process environments.
func withEnvs(d Deployment, envs ...map[string]string) Deployment {
	d.Envs = envs
	return d
}

func stageArgv(extra ...string) []string {
	return append(append([]string{}, serve...), extra...)
}

func TestConform(t *testing.T) {
	if vs := Conform(release(t, "0.24.0"), deployment(t, conformingPD)); len(vs) != 0 {
		t.Fatalf("the conforming config fails: %v", vs)
	}
	// Stage by stage, with each stage's variables in its process: what
	// the planner launches on a release that does not apply runtime.env.
	head := []string{"--omni-master-address", "127.0.0.1", "--omni-master-port", "25203"}
	staged := withEnvs(deployment(t, conformingPD,
		stageArgv(append([]string{"--stage-id", "0"}, head...)...), stageArgv(append([]string{"--stage-id", "1", "--headless"}, head...)...),
		stageArgv(append([]string{"--stage-id", "2", "--headless"}, head...)...)),
		map[string]string{"VLLM_NIXL_SIDE_CHANNEL_PORT": "25201"}, map[string]string{"VLLM_NIXL_SIDE_CHANNEL_PORT": "25202"}, map[string]string{})
	if vs := Conform(release(t, "0.24.0"), staged); len(vs) != 0 {
		t.Fatalf("the conforming config, launched stage by stage: %v", vs)
	}
	// A stage with replicas, each process told its own stage's count.
	replicated := withEnvs(deployment(t, strings.Replace(conformingPD, "      devices: \"2\"\n", "      devices: \"2,3\"\n      num_replicas: 2\n", 1),
		stageArgv(append([]string{"--stage-id", "0"}, head...)...), stageArgv(append([]string{"--stage-id", "1", "--headless"}, head...)...),
		stageArgv(append([]string{"--stage-id", "2", "--headless", "--omni-dp-size-local", "2"}, head...)...)),
		map[string]string{"VLLM_NIXL_SIDE_CHANNEL_PORT": "25201"}, map[string]string{"VLLM_NIXL_SIDE_CHANNEL_PORT": "25202"}, map[string]string{})
	if vs := Conform(release(t, "0.24.0"), replicated); len(vs) != 0 {
		t.Fatalf("stage 2's replicas, launched with --omni-dp-size-local 2: %v", vs)
	}
	// One process on a release that applies each stage's runtime.env.
	if vs := Conform(release(t, "0.22.0"), withEnvs(deployment(t, conformingPD), map[string]string{})); len(vs) != 0 {
		t.Fatalf("the conforming config in one process on 0.22.0: %v", vs)
	}
	edit := func(old, repl string) string {
		if !strings.Contains(conformingPD, old) {
			t.Fatalf("%q is not in the config", old)
		}
		return strings.Replace(conformingPD, old, repl, 1)
	}
	editMooncake := func(old, repl string) string {
		if !strings.Contains(mooncakePD, old) {
			t.Fatalf("%q is not in the config", old)
		}
		return strings.Replace(mooncakePD, old, repl, 1)
	}
	// multi makes prefill's connector a MultiConnector of these children.
	multi := func(children string) string {
		src := editMooncake("kv_connector: MooncakeConnector\n        kv_role: kv_producer", "kv_connector: MultiConnector\n        kv_role: kv_producer")
		at := "          mooncake_bootstrap_port: 25201\n"
		if !strings.Contains(src, at) {
			t.Fatalf("%q is not in the config", at)
		}
		return strings.Replace(src, at, at+"          connectors:\n"+children, 1)
	}
	t.Run("a connector from the user's own module is the user's to judge", func(t *testing.T) {
		own := strings.Replace(mooncakePD, "kv_connector: MooncakeConnector\n        kv_role: kv_producer",
			"kv_connector: MooncakeConnector\n        kv_connector_module_path: my_company.kv.patched_mooncake\n        kv_role: kv_producer", 1)
		for _, v := range Conform(release(t, "0.24.0"), deployment(t, own)) {
			if v.Rule == "handoff_gate" {
				t.Errorf("a class from the user's module is judged by the gate: %v", v)
			}
		}
	})
	t.Run("a MultiConnector child from its own module", func(t *testing.T) {
		d := deployment(t, multi("            - {kv_connector: MyConnector, kv_connector_module_path: my.connectors}\n"))
		for _, v := range Conform(release(t, "0.24.0"), d) {
			if v.Rule == "kv_connector_unknown" {
				t.Errorf("a child loaded from its own module is refused: %v", v)
			}
		}
	})
	master := []string{"--omni-master-address", "10.0.0.1", "--omni-master-port", "26000"}
	tests := []struct {
		name, release string
		d             Deployment
		rule          string
	}{
		{"the recipe's launch flag", "0.24.0", deployment(t, conformingPD, []string{"vllm", "serve", "m", "--omni", "--deploy-config", "/c.yaml"}), "config_flag"},
		{"stage_args on a release without its loader", "0.28.0", deployment(t, conformingPD), "dialect_unreadable"},
		{"no config flag", "0.24.0", deployment(t, conformingPD, []string{"vllm", "serve", "m", "--omni"}), "config_flag"},
		{"sync_process_input_func", "0.24.0", deployment(t, edit("custom_process_input_func", "sync_process_input_func")), "ignored_key"},
		{"runtime.max_batch_size", "0.24.0", deployment(t, edit(`devices: "2"`, "devices: \"2\"\n      max_batch_size: 4")), "ignored_key"},
		{"no model_stage", "0.24.0", deployment(t, edit("model_stage: talker", "worker_type: ar")), "model_stage"},
		{"a second prefill", "0.24.0", deployment(t, edit("  - stage_id: 2\n", "  - stage_id: 2\n    is_prefill_only: true\n")), "pd_pair"},
		{"decode with the producer role", "0.24.0", deployment(t, edit("kv_role: kv_consumer", "kv_role: kv_producer")), "kv_role"},
		{"decode does not read prefill", "0.24.0", deployment(t, edit("engine_input_source: [0]", "engine_input_source: []")), "decode_input"},
		{"different connectors", "0.24.0", deployment(t, edit("kv_connector: NixlConnector\n        kv_role: kv_consumer", "kv_connector: MooncakeConnector\n        kv_role: kv_consumer")), "kv_connector"},
		{"different buffers", "0.24.0", deployment(t, strings.Replace(edit("kv_role: kv_producer", "kv_role: kv_producer\n        kv_buffer_size: 1"), "kv_role: kv_consumer", "kv_role: kv_consumer\n        kv_buffer_size: 2", 1)), "kv_buffer"},
		{"NIXL with a larger decode TP", "0.24.0", deployment(t, edit("tensor_parallel_size: 1\n      kv_transfer_config:\n        kv_connector: NixlConnector\n        kv_role: kv_consumer", "tensor_parallel_size: 2\n      kv_transfer_config:\n        kv_connector: NixlConnector\n        kv_role: kv_consumer")), "tensor_parallel"},
		{"P2pNccl on vLLM 0.24", "0.24.0", deployment(t, strings.ReplaceAll(conformingPD, "NixlConnector", "P2pNcclConnector")), "kv_connector_unknown"},
		{"bootstrap env unset", "0.24.0", deployment(t, editMooncake("      env:\n        VLLM_MOONCAKE_BOOTSTRAP_PORT: \"25201\"\n", "")), "mooncake_bootstrap_env"},
		{"Mooncake returns no remote_request_id", "0.24.0", deployment(t, mooncakePD), "handoff_gate"},
		{"Mooncake on the newest release", NewestFinal().Version, deployment(t, mooncakePD), "handoff_gate"},
		{"Mooncake named by vLLM's own module path", "0.24.0", deployment(t, strings.Replace(mooncakePD, "kv_connector: MooncakeConnector\n        kv_role: kv_producer",
			"kv_connector: MooncakeConnector\n        kv_connector_module_path: vllm.distributed.kv_transfer.kv_connector.v1.mooncake_connector\n        kv_role: kv_producer", 1)), "handoff_gate"},
		{"P2pNccl returns no remote_request_id", "0.22.0", deployment(t, strings.ReplaceAll(conformingPD, "NixlConnector", "P2pNcclConnector")), "handoff_gate"},
		{"a MultiConnector without a NIXL child", "0.24.0", deployment(t, multi("            - {kv_connector: MooncakeConnector}\n")), "handoff_gate"},
		{"Qwen3-Omni's thinker2talker after #4986", "0.25.0rc1", deployment(t, edit("custom_process_input_func: m.thinker2talker", "custom_process_input_func: vllm_omni.model_executor.stage_input_processors.qwen3_omni.thinker2talker")), "processor_missing"},
		{"Qwen2.5-Omni's thinker2talker after #4531", "0.24.0", deployment(t, edit("custom_process_input_func: m.thinker2talker", "custom_process_input_func: vllm_omni.model_executor.stage_input_processors.qwen2_5_omni.thinker2talker")), "processor_missing"},
		{"a stage without final_output_type on 0.26.0rc1", "0.26.0rc1", deployment(t, conformingPD), "stage_key_required"},
		{"runtime.env in one process where it is not applied", "0.24.0", withEnvs(deployment(t, conformingPD), map[string]string{}), "stage_env_unapplied"},
		{"a headless stage without its variables", "0.24.0", withEnvs(deployment(t, conformingPD,
			stageArgv(append([]string{"--stage-id", "0"}, master...)...), stageArgv(append([]string{"--stage-id", "1", "--headless"}, master...)...),
			stageArgv(append([]string{"--stage-id", "2", "--headless"}, master...)...)),
			map[string]string{"VLLM_NIXL_SIDE_CHANNEL_PORT": "25201"}, map[string]string{}, map[string]string{}), "stage_env_unapplied"},
		{"a headless stage without its variables where the release applies them", "0.22.0", withEnvs(deployment(t, conformingPD,
			stageArgv(append([]string{"--stage-id", "0"}, master...)...), stageArgv(append([]string{"--stage-id", "1", "--headless"}, master...)...),
			stageArgv(append([]string{"--stage-id", "2", "--headless"}, master...)...)),
			map[string]string{}, map[string]string{}, map[string]string{}), "stage_env_unapplied"},
		{"edge across hosts without a connector", "0.24.0", deployment(t,
			strings.Replace(edit("VLLM_NIXL_SIDE_CHANNEL_PORT: \"25201\"", "VLLM_NIXL_SIDE_CHANNEL_PORT: \"25201\"\n        VLLM_HOST_IP: 10.0.0.1"), "VLLM_NIXL_SIDE_CHANNEL_PORT: \"25202\"", "VLLM_NIXL_SIDE_CHANNEL_PORT: \"25202\"\n        VLLM_HOST_IP: 10.0.0.2", 1),
			stageArgv(append([]string{"--stage-id", "0"}, master...)...), stageArgv(append([]string{"--stage-id", "1", "--headless"}, master...)...),
			stageArgv(append([]string{"--stage-id", "2", "--headless"}, master...)...)), "cross_host_edge"},
		{"replica address on a release without it", "0.21.0rc1", deployment(t, conformingPD,
			stageArgv(append([]string{"--stage-id", "0"}, master...)...), stageArgv(append([]string{"--stage-id", "1", "--headless", "--omni-replica-address", "10.0.0.2"}, master...)...),
			stageArgv(append([]string{"--stage-id", "2", "--headless"}, master...)...)), "cli_flag"},
		{"stage id without the master flags", "0.24.0", deployment(t, conformingPD, stageArgv("--stage-id", "0")), "cli_flag"},
		// A stage's replicas in a stage-based launch are its process's.
		{"replicas the process does not start", "0.24.0", deployment(t, edit("      devices: \"2\"\n", "      devices: \"2,3\"\n      num_replicas: 2\n"),
			stageArgv(append([]string{"--stage-id", "0"}, master...)...), stageArgv(append([]string{"--stage-id", "1", "--headless"}, master...)...),
			stageArgv(append([]string{"--stage-id", "2", "--headless"}, master...)...)), "cli_flag"},
		{"a replica count the config does not have", "0.24.0", deployment(t, conformingPD,
			stageArgv(append([]string{"--stage-id", "0"}, master...)...), stageArgv(append([]string{"--stage-id", "1", "--headless"}, master...)...),
			stageArgv(append([]string{"--stage-id", "2", "--headless", "--omni-dp-size-local", "2"}, master...)...)), "cli_flag"},
		{"replicas in a stage-based launch before the flag", "0.21.0rc1", deployment(t, edit("      devices: \"2\"\n", "      devices: \"2,3\"\n      num_replicas: 2\n"),
			stageArgv(append([]string{"--stage-id", "0"}, master...)...), stageArgv(append([]string{"--stage-id", "1", "--headless"}, master...)...),
			stageArgv(append([]string{"--stage-id", "2", "--headless"}, master...)...)), "cli_flag"},
		{"a stage launched twice", "0.24.0", deployment(t, conformingPD,
			stageArgv(append([]string{"--stage-id", "0"}, master...)...), stageArgv(append([]string{"--stage-id", "1", "--headless"}, master...)...),
			stageArgv(append([]string{"--stage-id", "1", "--headless"}, master...)...)), "launches"},
		{"two heads", "0.24.0", deployment(t, conformingPD,
			stageArgv(append([]string{"--stage-id", "0"}, master...)...), stageArgv(append([]string{"--stage-id", "1"}, master...)...),
			stageArgv(append([]string{"--stage-id", "2", "--headless"}, master...)...)), "launches"},
		{"a shell around the launch", "0.24.0", deployment(t, conformingPD, []string{"/bin/sh", "-c", "vllm serve m --omni & wait"}), "command"},
		{"kv_transfer_config not a mapping", "0.24.0", deployment(t, edit("      kv_transfer_config:\n        kv_connector: NixlConnector\n        kv_role: kv_producer",
			"      kv_transfer_config: NixlConnector\n      kv_was:\n        kv_connector: NixlConnector\n        kv_role: kv_producer")), "kv_transfer_config"},
		{"a MultiConnector child vLLM lacks", "0.24.0", deployment(t, multi("            - {kv_connector: MooncakeConnector}\n            - {kv_connector: P2pNcclConnector}\n")), "kv_connector_unknown"},
		{"prefill not at stage 0", "0.24.0", deployment(t, strings.Replace(strings.Replace(strings.Replace(conformingPD, "stage_id: 0", "stage_id: 5", 1), "engine_input_source: [0]", "engine_input_source: [5]", 1), "    final_output: false", "    final_output: false\n    engine_input_source: [2]", 1)), "prefill_entry"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vs := Conform(release(t, tc.release), tc.d)
			for _, v := range vs {
				if v.Rule == tc.rule {
					return
				}
			}
			t.Errorf("want %s, got %v", tc.rule, vs)
		})
	}
}

func TestConform_StagesDialect(t *testing.T) {
	const file = `pipeline: qwen3_omni_moe_pd
async_chunk: false
stages:
  - stage_id: 0
    tensor_parallel_size: 1
    env:
      VLLM_MOONCAKE_BOOTSTRAP_PORT: "25201"
    kv_transfer_config: {kv_connector: MooncakeConnector, kv_role: kv_producer, kv_rank: 0, kv_connector_extra_config: {mooncake_bootstrap_port: 25201}}
  - stage_id: 1
    tensor_parallel_size: 1
    env:
      VLLM_MOONCAKE_BOOTSTRAP_PORT: "25202"
    kv_transfer_config: {kv_connector: MooncakeConnector, kv_role: kv_consumer, kv_rank: 1, kv_connector_extra_config: {mooncake_bootstrap_port: 25202}}
`
	argv := []string{"vllm", "serve", "m", "--omni", "--deploy-config", "/c.yaml"}
	d := deployment(t, file, argv)
	r := release(t, "0.28.0")
	if vs := Conform(r, d); len(vs) != 1 || vs[0].Rule != "pipeline_unregistered" {
		t.Errorf("no release registers qwen3_omni_moe_pd: want pipeline_unregistered alone, got %v", vs)
	}
	d.UserPipeline = true
	if vs := Conform(r, d); len(vs) != 0 {
		t.Errorf("with the user's registration: %v", vs)
	}
	d = deployment(t, strings.Replace(file, "async_chunk: false\n", "", 1), argv)
	d.UserPipeline = true
	if vs := Conform(r, d); len(vs) != 1 || vs[0].Rule != "async_chunk_implicit" {
		t.Errorf("want async_chunk_implicit, got %v", vs)
	}
}

// TestConform_StagesCrossHost: in a stages file the edges are the
// top-level list, and an edge between hosts needs one connector, named at
// both ends and defined with a class that reaches another host.
func TestConform_StagesCrossHost(t *testing.T) {
	const file = `pipeline: mine
async_chunk: false
connectors:
  mc: {name: MooncakeTransferEngineConnector}
  shm: {name: SharedMemoryConnector}
edges:
  - {from: 0, to: 1}
stages:
  - stage_id: 0
    env: {VLLM_HOST_IP: 10.0.0.1}
    output_connectors: {to_stage_1: mc}
  - stage_id: 1
    env: {VLLM_HOST_IP: 10.0.0.2}
    input_connectors: {from_stage_0: mc}
`
	argv := []string{"vllm", "serve", "m", "--omni", "--deploy-config", "/c.yaml"}
	crossHost := func(src string) []Violation {
		d := deployment(t, src, argv)
		d.UserPipeline = true
		var out []Violation
		for _, v := range Conform(release(t, "0.28.0"), d) {
			if v.Rule == "cross_host_edge" {
				out = append(out, v)
			}
		}
		return out
	}
	if vs := crossHost(file); len(vs) != 0 {
		t.Fatalf("the conforming file: %v", vs)
	}
	for name, src := range map[string]string{
		"the ends name different connectors": strings.Replace(file, "from_stage_0: mc", "from_stage_0: shm", 1),
		"a connector that stays on the host": strings.ReplaceAll(file, ": mc}", ": shm}"),
		"no connector at one end":            strings.Replace(file, "input_connectors: {from_stage_0: mc}", "input_connectors: {from_stage_9: mc}", 1),
	} {
		if vs := crossHost(src); len(vs) != 1 {
			t.Errorf("%s: want one cross_host_edge, got %v", name, vs)
		}
	}
	if vs := crossHost(strings.Replace(file, "  - {from: 0, to: 1}\n", "", 1)); len(vs) != 0 {
		t.Errorf("without the edge, nothing crosses hosts: %v", vs)
	}
	// Edges written as a mapping are no edges (the config checks refuse
	// them: edges must be a list), even where its values look like edges.
	mapped := strings.Replace(strings.Replace(file, "  - {from: 0, to: 1}\n", "  e: {from: 0, to: 1}\n", 1), "from_stage_0: mc", "from_stage_0: shm", 1)
	if vs := crossHost(mapped); len(vs) != 0 {
		t.Errorf("edges written as a mapping were read: %v", vs)
	}
}
