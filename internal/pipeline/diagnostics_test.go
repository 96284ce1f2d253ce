package pipeline

import (
	"math"
	"regexp"
	"strings"
	"testing"
)

// miniBase is a small valid stage_args config: thinker → talker → code2wav.
// The error cases below break one thing in it at a time.
const miniBase = `stage_args:
  - stage_id: 0
    engine_args: {model_stage: thinker, worker_type: ar, gpu_memory_utilization: 0.5}
    final_output: true
    final_output_type: text
  - stage_id: 1
    engine_args: {model_stage: talker, worker_type: ar, gpu_memory_utilization: 0.4}
    engine_input_source: [0]
  - stage_id: 2
    engine_args: {model_stage: code2wav, worker_type: generation, gpu_memory_utilization: 0.1}
    engine_input_source: [1]
    final_output: true
    final_output_type: audio
`

// miniBaseWith replaces one fragment of miniBase, failing loudly when the
// fragment is not there (so a case cannot silently test the valid base).
func miniBaseWith(t *testing.T, old, replacement string) string {
	t.Helper()
	if !strings.Contains(miniBase, old) {
		t.Fatalf("miniBase has no %q", old)
	}
	return strings.Replace(miniBase, old, replacement, 1)
}

// fixHint matches the words a Detail uses to tell the user what to do.
var fixHint = regexp.MustCompile(`(?i)\b(use|set|remove|give|list|choose|write|pass|raise|lower|move|swap|widen|make|add|fix|mark|define|replace|unreserve|keep|start|leave|run|put)\b`)

func TestPlanDiagnostics(t *testing.T) {
	m := seedModel
	tp := func(p, d int) (RoleSpec, RoleSpec) {
		return RoleSpec{TensorParallelSize: ptr(p)}, RoleSpec{TensorParallelSize: ptr(d)}
	}
	tests := []struct {
		name string
		spec func(t *testing.T) Spec
		code string
		path string
	}{
		// model, preset, base_config, format, config_path
		{"empty model", func(*testing.T) Spec { return Spec{} }, "model_empty", "model"},
		{"model with a space", func(*testing.T) Spec { return Spec{Model: "Qwen/Qwen3 Omni"} }, "model_invalid", "model"},
		{"model with three parts", func(*testing.T) Spec { return Spec{Model: "a/b/c", Preset: "qwen3_omni_moe"} }, "model_invalid", "model"},
		{"model path with a newline", func(*testing.T) Spec { return Spec{Model: "/models/qwen3_omni\n"} }, "model_control_character", "model"},
		{"model with no preset", func(*testing.T) Spec { return Spec{Model: "meta-llama/Llama-3-8B"} }, "preset_not_inferred", "model"},
		{"unknown preset", func(*testing.T) Spec { return Spec{Model: m, Preset: "qwen4"} }, "preset_unknown", "preset"},
		{"preset and base_config", func(*testing.T) Spec { return Spec{Model: m, Preset: "qwen3_omni_moe", BaseConfig: miniBase} }, "preset_and_base_config", "base_config"},
		{"base_config not YAML", func(*testing.T) Spec { return Spec{Model: m, BaseConfig: "stage_args: [\n"} }, "base_config_invalid", "base_config"},
		{"base_config in neither dialect", func(*testing.T) Spec { return Spec{Model: m, BaseConfig: "model: x\n"} }, "base_config_invalid", "base_config"},
		{"unknown format", func(*testing.T) Spec { return Spec{Model: m, Format: "json"} }, "format_unknown", "format"},
		{"stages base with no known topology written as stage_args", func(t *testing.T) Spec {
			return Spec{Model: "acme/omni-7b", Format: "stage_args", BaseConfig: readLocal(t, stagesQwen3), SplitStage: ptr(0)}
		}, "format_conversion_unsupported", "format"},
		{"stages output with no pipeline to name", func(*testing.T) Spec {
			return Spec{Model: "acme/omni-7b", Format: "stages", BaseConfig: miniBase}
		}, "release_none", "vllm_omni_version"},
		{"stages output on a release with no PD pipeline", func(*testing.T) Spec {
			return Spec{Model: m, Format: "stages", VLLMOmniVersion: "0.28.0"}
		}, "release_no_pd", "vllm_omni_version"},
		{"pipeline with stage_args output", func(*testing.T) Spec {
			return Spec{Model: m, Format: "stage_args", Pipeline: "qwen3_omni_moe_pd"}
		}, "pipeline_unused", "pipeline"},

		// vllm_omni_version
		{"malformed version", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "v0.24"} }, "release_malformed", "vllm_omni_version"},
		{"version before PD", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "0.14.0"} }, "release_before_pd", "vllm_omni_version"},
		{"version newer than the table", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "0.99"} }, "release_unknown_newer", "vllm_omni_version"},
		{"version not a known release", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "0.22.7"} }, "release_unknown", "vllm_omni_version"},
		{"stage_args on a release that refuses it", func(*testing.T) Spec { return Spec{Model: m, VLLMOmniVersion: "0.28"} }, "release_no_pd", "vllm_omni_version"},
		{"P2pNccl on a vLLM without it", func(*testing.T) Spec {
			return Spec{Model: m, VLLMOmniVersion: "0.24.0", Connector: ConnectorSpec{Name: "P2pNcclConnector", ExtraConfig: map[string]any{"proxy_ip": "10.0.0.9", "proxy_port": int64(30001)}}}
		}, "release_no_pd", "vllm_omni_version"},
		{"relative config_path", func(*testing.T) Spec { return Spec{Model: m, ConfigPath: "deploy.yaml"} }, "config_path_not_absolute", "config_path"},
		{"config_path with a tab", func(*testing.T) Spec { return Spec{Model: m, ConfigPath: "/etc/a\tb.yaml"} }, "config_path_control_character", "config_path"},
		{"config_path with a line separator", func(*testing.T) Spec { return Spec{Model: m, ConfigPath: "/etc/a\u2028b.yaml"} }, "config_path_control_character", "config_path"},
		{"model path with a paragraph separator", func(*testing.T) Spec { return Spec{Model: "/models/qwen3-omni\u2029x"} }, "model_control_character", "model"},
		{"P2pNccl proxy_ip null", func(*testing.T) Spec {
			return Spec{Model: m, VLLMOmniVersion: "0.22", Connector: ConnectorSpec{Name: "P2pNcclConnector", ExtraConfig: map[string]any{"proxy_ip": nil, "proxy_port": int64(30001)}}}
		}, "connector_extra_missing", "connector.extra_config"},

		// prefill / decode
		{"prefill TP 0", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{TensorParallelSize: ptr(0)}} }, "tensor_parallel_size_range", "prefill.tensor_parallel_size"},
		{"decode max_num_seqs 0", func(*testing.T) Spec { return Spec{Model: m, Decode: RoleSpec{MaxNumSeqs: ptr(0)}} }, "max_num_seqs_range", "decode.max_num_seqs"},
		{"prefill memory above 1", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{GPUMemoryUtilization: ptr(1.5)}} }, "gpu_memory_utilization_range", "prefill.gpu_memory_utilization"},
		{"decode memory 0", func(*testing.T) Spec { return Spec{Model: m, Decode: RoleSpec{GPUMemoryUtilization: ptr(0.0)}} }, "gpu_memory_utilization_range", "decode.gpu_memory_utilization"},
		{"negative device", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Devices: []int{-1}}} }, "device_negative", "prefill.devices[0]"},
		{"repeated device", func(*testing.T) Spec {
			return Spec{Model: m, Decode: RoleSpec{Devices: []int{1, 1}, TensorParallelSize: ptr(2)}, Prefill: RoleSpec{TensorParallelSize: ptr(2)}}
		}, "device_repeated", "decode.devices[1]"},
		{"empty device list", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Devices: []int{}}} }, "devices_empty", "prefill.devices"},
		{"bad host", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Host: "gpu node"}} }, "host_invalid", "prefill.host"},
		{"host a DNS name", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Host: "gpu-0.internal"}} }, "host_invalid", "prefill.host"},
		{"host with a port", func(*testing.T) Spec { return Spec{Model: m, Decode: RoleSpec{Host: "10.0.0.1:8080"}} }, "host_invalid", "decode.host"},
		{"host not an address", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Host: "999.999.999.999"}} }, "host_invalid", "prefill.host"},
		{"host the IPv4 wildcard", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Host: "0.0.0.0"}} }, "host_invalid", "prefill.host"},
		{"host the IPv6 wildcard", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Host: "::"}} }, "host_invalid", "prefill.host"},
		{"host zoned", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Host: "fe80::1%eth0"}} }, "host_invalid", "prefill.host"},
		{"override host a DNS name", func(*testing.T) Spec {
			return Spec{Model: m, StageOverrides: map[string]StageOverride{"talker": {Host: "talker.local"}}}
		}, "host_invalid", "stage_overrides.talker.host"},
		{"loopback across hosts, mapped spelling", func(*testing.T) Spec {
			return Spec{Model: m, Prefill: RoleSpec{Host: "::ffff:127.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}}
		}, "host_unreachable", "prefill.host"},
		{"loopback across hosts, IPv6", func(*testing.T) Spec {
			return Spec{Model: m, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "0:0:0:0:0:0:0:1"}}
		}, "host_unreachable", "decode.host"},

		{"override naming a model_stage two stages share", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "{model_stage: code2wav,", "{model_stage: talker,"),
				StageOverrides: map[string]StageOverride{"talker": {MaxNumSeqs: ptr(2)}}}
		}, "override_ambiguous", "stage_overrides.talker"},

		// systemd
		{"systemd user root", func(*testing.T) Spec { return Spec{Model: m, Service: ServiceSpec{User: "root"}} }, "systemd_user_invalid", "systemd.user"},
		{"systemd user not a name", func(*testing.T) Spec { return Spec{Model: m, Service: ServiceSpec{User: "vllm omni"}} }, "systemd_user_invalid", "systemd.user"},
		{"systemd vllm_path relative", func(*testing.T) Spec { return Spec{Model: m, Service: ServiceSpec{VLLMPath: "vllm"}} }, "vllm_path_not_absolute", "systemd.vllm_path"},
		{"systemd cache_dir with a newline", func(*testing.T) Spec { return Spec{Model: m, Service: ServiceSpec{CacheDir: "/srv/a\nb"}} }, "systemd_path_invalid", "systemd.cache_dir"},
		{"systemd unit_prefix with a slash", func(*testing.T) Spec { return Spec{Model: m, Service: ServiceSpec{UnitPrefix: "a/b"}} }, "systemd_unit_prefix_invalid", "systemd.unit_prefix"},
		{"systemd head wait too short", func(*testing.T) Spec { return Spec{Model: m, Service: ServiceSpec{HeadWaitSeconds: ptr(1)}} }, "systemd_head_wait_range", "systemd.head_wait_seconds"},
		{"managed key in engine_args", func(*testing.T) Spec {
			return Spec{Model: m, Prefill: RoleSpec{EngineArgs: map[string]any{"tensor_parallel_size": int64(2)}}}
		}, "engine_args_managed_key", "prefill.engine_args.tensor_parallel_size"},
		{"kv_transfer_config in engine_args", func(*testing.T) Spec {
			return Spec{Model: m, Decode: RoleSpec{EngineArgs: map[string]any{"kv_transfer_config": map[string]any{}}}}
		}, "engine_args_managed_key", "decode.engine_args.kv_transfer_config"},
		{"engine_args value not writable", func(*testing.T) Spec {
			return Spec{Model: m, Decode: RoleSpec{EngineArgs: map[string]any{"x": math.Inf(1)}}}
		}, "engine_args_value", "decode.engine_args.x"},
		{"Mooncake TP mismatch", func(*testing.T) Spec { p, d := tp(1, 2); return Spec{Model: m, Prefill: p, Decode: d} }, "tp_mismatch", "decode.tensor_parallel_size"},
		{"NIXL decode TP below prefill", func(*testing.T) Spec {
			p, d := tp(2, 1)
			return Spec{Model: m, Prefill: p, Decode: d, Connector: ConnectorSpec{Name: "NixlConnector"}}
		}, "tp_mismatch", "decode.tensor_parallel_size"},
		// vLLM alone would take it; vllm-omni's PD validator does not.
		{"NIXL decode TP above prefill", func(*testing.T) Spec {
			p, d := tp(1, 2)
			return Spec{Model: m, Prefill: p, Decode: d, Connector: ConnectorSpec{Name: "NixlConnector"}}
		}, "tp_mismatch", "decode.tensor_parallel_size"},
		{"MultiConnector child sets a role", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": []any{
				map[string]any{"kv_connector": "NixlConnector", "kv_role": "kv_both"}}}}}
		}, "multi_connector_child_managed_key", "connector.extra_config.connectors[0].kv_role"},
		{"MultiConnector child sets a bootstrap port", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": []any{
				map[string]any{"kv_connector": "MooncakeConnector", "kv_connector_extra_config": map[string]any{"mooncake_bootstrap_port": int64(9000)}}}}}}
		}, "multi_connector_child_managed_key", "connector.extra_config.connectors[0].kv_connector_extra_config.mooncake_bootstrap_port"},

		// gpus, split_stage
		{"gpus 0", func(*testing.T) Spec { return Spec{Model: m, GPUs: ptr(0)} }, "gpus_range", "gpus"},
		{"gpus too few", func(*testing.T) Spec { return Spec{Model: m, GPUs: ptr(2)} }, "gpus_exceeded", "gpus"},
		{"negative split_stage", func(*testing.T) Spec { return Spec{Model: m, SplitStage: ptr(-1)} }, "split_stage_range", "split_stage"},
		{"split_stage not in the base", func(*testing.T) Spec { return Spec{Model: m, SplitStage: ptr(7)} }, "split_stage_unknown", "split_stage"},
		{"split_stage a generation stage", func(*testing.T) Spec { return Spec{Model: m, SplitStage: ptr(2)} }, "split_stage_not_autoregressive", "split_stage"},
		{"split_stage a diffusion stage", func(t *testing.T) Spec {
			return Spec{Model: m, SplitStage: ptr(1), BaseConfig: miniBaseWith(t, "  - stage_id: 1\n", "  - stage_id: 1\n    stage_type: diffusion\n")}
		}, "split_stage_not_autoregressive", "split_stage"},
		{"nothing to split", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: strings.ReplaceAll(miniBase, "worker_type: ar", "worker_type: generation")}
		}, "split_stage_not_found", "split_stage"},

		// ports
		{"port_range.first 0", func(*testing.T) Spec { return Spec{Model: m, PortRange: &PortRange{First: 0, Last: 10}} }, "port_range_invalid", "port_range.first"},
		{"port_range.last too big", func(*testing.T) Spec { return Spec{Model: m, PortRange: &PortRange{First: 30000, Last: 70000}} }, "port_range_invalid", "port_range.last"},
		{"port_range inverted", func(*testing.T) Spec { return Spec{Model: m, PortRange: &PortRange{First: 30010, Last: 30000}} }, "port_range_inverted", "port_range"},
		{"reserved port 0", func(*testing.T) Spec { return Spec{Model: m, ReservedPorts: []int{0}} }, "reserved_port_invalid", "reserved_ports"},
		{"api_port too big", func(*testing.T) Spec { return Spec{Model: m, APIPort: ptr(65536)} }, "port_invalid", "api_port"},
		{"bootstrap port negative", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{BootstrapPort: ptr(-5)}} }, "port_invalid", "prefill.bootstrap_port"},
		{"api_port is a bootstrap port", func(*testing.T) Spec {
			return Spec{Model: m, APIPort: ptr(25300), Decode: RoleSpec{BootstrapPort: ptr(25300)}}
		}, "port_collision", "decode.bootstrap_port"},
		{"given port reserved", func(*testing.T) Spec {
			return Spec{Model: m, Prefill: RoleSpec{BootstrapPort: ptr(26000)}, ReservedPorts: []int{26000}}
		}, "port_reserved", "prefill.bootstrap_port"},
		{"no room in port_range", func(*testing.T) Spec { return Spec{Model: m, PortRange: &PortRange{First: 30000, Last: 30000}} }, "port_range_exhausted", "port_range"},
		{"bootstrap_port on a side with no port", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "LMCacheConnectorV1"}, Prefill: RoleSpec{BootstrapPort: ptr(26000)}}
		}, "bootstrap_port_unused", "prefill.bootstrap_port"},

		// connector
		{"unknown connector", func(*testing.T) Spec { return Spec{Model: m, Connector: ConnectorSpec{Name: "RedisConnector"}} }, "connector_unknown", "connector.name"},
		{"protocol on NIXL", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "NixlConnector", Protocol: "tcp"}}
		}, "connector_protocol_unsupported", "connector.protocol"},
		{"unknown protocol", func(*testing.T) Spec { return Spec{Model: m, Connector: ConnectorSpec{Protocol: "udp"}} }, "connector_protocol_unknown", "connector.protocol"},
		{"device_name over tcp", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Protocol: "tcp", DeviceName: "mlx5_0"}}
		}, "connector_device_name_unused", "connector.device_name"},
		{"managed extra_config key", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{ExtraConfig: map[string]any{"mooncake_bootstrap_port": int64(1)}}}
		}, "connector_extra_managed_key", "connector.extra_config.mooncake_bootstrap_port"},
		{"extra_config value not writable", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{ExtraConfig: map[string]any{"x": math.NaN()}}}
		}, "engine_args_value", "connector.extra_config.x"},
		{"kv_both on P2pNccl", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "P2pNcclConnector", KVBoth: true,
				ExtraConfig: map[string]any{"proxy_ip": "10.0.0.9", "proxy_port": int64(30001)}}}
		}, "connector_kv_both_unsupported", "connector.kv_both"},
		{"P2pNccl without its proxy", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "P2pNcclConnector"}}
		}, "connector_extra_missing", "connector.extra_config"},
		{"MultiConnector without children", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MultiConnector"}}
		}, "multi_connector_children", "connector.extra_config.connectors"},
		{"MultiConnector with an unknown child", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MultiConnector",
				ExtraConfig: map[string]any{"connectors": []any{map[string]any{"kv_connector": "Nope"}}}}}
		}, "multi_connector_children", "connector.extra_config.connectors[0].kv_connector"},

		// stage_overrides
		{"override of the split stage", func(*testing.T) Spec {
			return Spec{Model: m, StageOverrides: map[string]StageOverride{"thinker": {MaxNumSeqs: ptr(2)}}}
		}, "override_split_stage", "stage_overrides.thinker"},
		{"override of an unknown stage", func(*testing.T) Spec {
			return Spec{Model: m, StageOverrides: map[string]StageOverride{"vocoder": {}}}
		}, "override_unknown_stage", "stage_overrides.vocoder"},
		{"override TP not a number", func(*testing.T) Spec {
			return Spec{Model: m, StageOverrides: map[string]StageOverride{"talker": {EngineArgs: map[string]any{"tensor_parallel_size": "2"}}}}
		}, "tensor_parallel_size_range", "stage_overrides.talker.engine_args.tensor_parallel_size"},
		{"override devices of the wrong size", func(*testing.T) Spec {
			return Spec{Model: m, StageOverrides: map[string]StageOverride{"code2wav": {Devices: []int{2, 3}}}}
		}, "devices_world_size", "stage_overrides.code2wav.devices"},

		// placement
		{"P and D overlap", func(*testing.T) Spec {
			return Spec{Model: m, Prefill: RoleSpec{Devices: []int{1}}, Decode: RoleSpec{Devices: []int{1}}}
		}, "pd_devices_overlap", "decode.devices"},
		{"device count below TP", func(*testing.T) Spec {
			p, d := tp(2, 2)
			p.Devices = []int{0}
			return Spec{Model: m, Prefill: p, Decode: d}
		}, "devices_world_size", "prefill.devices"},
		{"memory over-subscribed", func(*testing.T) Spec {
			return Spec{Model: m, StageOverrides: map[string]StageOverride{"code2wav": {GPUMemoryUtilization: ptr(0.5)}}}
		}, "gpu_memory_oversubscribed", "stage_overrides.code2wav.gpu_memory_utilization"},

		// Parallel sizes too large to place: placement would build a device
		// list that long (a plan used to take seconds at 65536 and never
		// finish at 4194304).
		{"absurd prefill TP", func(*testing.T) Spec {
			p, d := tp(1<<22, 1<<22)
			return Spec{Model: m, Prefill: p, Decode: d}
		}, "world_size_range", "prefill.tensor_parallel_size"},
		{"absurd TP in the base config", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "{model_stage: thinker,", "{tensor_parallel_size: 100000000, model_stage: thinker,")}
		}, "world_size_range", "base_config"},
		{"absurd replicas of a stage", func(*testing.T) Spec {
			return Spec{Model: m, StageOverrides: map[string]StageOverride{"talker": {NumReplicas: ptr(1 << 30)}}}
		}, "world_size_range", "stage_overrides.talker"},

		// hosts
		{"one side has a host, the other none", func(*testing.T) Spec {
			return Spec{Model: m, Decode: RoleSpec{Host: "10.0.0.2"}}
		}, "host_missing", "prefill.host"},
		{"loopback across hosts", func(*testing.T) Spec {
			return Spec{Model: m, Prefill: RoleSpec{Host: "127.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}}
		}, "host_unreachable", "prefill.host"},

		// the base config's graph
		{"base already split", func(t *testing.T) Spec { return Spec{Model: m, BaseConfig: readLocal(t, legacyQwen3PD)} }, "base_already_split", "base_config"},
		{"duplicate stage ids", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "  - stage_id: 1\n", "  - stage_id: 0\n")}
		}, "stage_id_duplicate", "base_config"},
		{"missing stage id", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "  - stage_id: 2\n    engine_args", "  - engine_args")}
		}, "stage_id_missing", "base_config"},
		{"inputs not a list", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "engine_input_source: [1]", "engine_input_source: 1")}
		}, "stage_inputs_invalid", "base_config"},
		{"input from a missing stage", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "engine_input_source: [1]", "engine_input_source: [5]")}
		}, "input_unknown", "base_config"},
		{"stage reads itself", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "engine_input_source: [1]", "engine_input_source: [2]")}
		}, "input_self", "base_config"},
		{"cycle", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "final_output_type: text\n", "final_output_type: text\n    engine_input_source: [2]\n")}
		}, "graph_cycle", "base_config"},
		{"no entry stage", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "final_output_type: text\n", "final_output_type: text\n    engine_input_source: [2]\n")}
		}, "no_entry_stage", "base_config"},
		{"no final output", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: strings.ReplaceAll(miniBase, "final_output: true", "final_output: false")}
		}, "no_final_output", "base_config"},
		{"edges not a list", func(*testing.T) Spec { return Spec{Model: m, BaseConfig: miniBase + "runtime:\n  edges: {from: 0}\n"} }, "yaml_shape", "base_config"},
		{"edge without to", func(*testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBase + "runtime:\n  edges:\n    - from: 0\n"}
		}, "edges_invalid", "base_config"},
		{"edge not in the inputs", func(*testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBase + "runtime:\n  edges:\n    - {from: 0, to: 1}\n    - {from: 1, to: 2}\n    - {from: 0, to: 2}\n"}
		}, "edge_not_in_inputs", "base_config"},
		{"input without an edge", func(*testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBase + "runtime:\n  edges:\n    - {from: 0, to: 1}\n"}
		}, "edge_missing", "base_config"},
		{"undefined connector", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "engine_input_source: [0]", "engine_input_source: [0]\n    input_connectors: {from_stage_0: nope}") +
				"runtime:\n  connectors:\n    shm: {name: SharedMemoryConnector}\n"}
		}, "connector_undefined", "base_config"},
		{"two connectors on one edge", func(t *testing.T) Spec {
			b := miniBaseWith(t, "engine_input_source: [0]", "engine_input_source: [0]\n    input_connectors: {from_stage_0: a}")
			b = strings.Replace(b, "final_output_type: text\n", "final_output_type: text\n    output_connectors: {to_stage_1: b}\n", 1)
			return Spec{Model: m, BaseConfig: b + "runtime:\n  connectors:\n    a: {name: SharedMemoryConnector}\n    b: {name: MooncakeConnector}\n"}
		}, "connector_conflict", "base_config"},
	}
	if len(tests) < 40 {
		t.Fatalf("only %d cases", len(tests))
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, ds := Plan(tc.spec(t))
			if res != nil {
				t.Fatalf("Plan succeeded (warnings %v); want %s at %s", ds.Codes(), tc.code, tc.path)
			}
			var found *Diagnostic
			for i, d := range ds {
				if d.Code == tc.code && d.Path.String() == tc.path {
					found = &ds[i]
					break
				}
			}
			if found == nil {
				t.Fatalf("no %s at %q; got:\n%s", tc.code, tc.path, describeDiags(ds))
			}
			seen[tc.code] = true
			if found.Severity != SeverityError {
				t.Errorf("severity %v, want error", found.Severity)
			}
			if found.Summary == "" || found.Detail == "" {
				t.Errorf("empty summary or detail: %+v", *found)
			}
			if !fixHint.MatchString(found.Detail) {
				t.Errorf("detail %q does not say how to fix it", found.Detail)
			}
			for _, d := range ds {
				if d.Code == "" {
					t.Errorf("a diagnostic has no code: %+v", d)
				}
			}
		})
	}
	t.Logf("%d cases, %d distinct codes", len(tests), len(seen))
}

// TestPlanCollectsEveryProblem: one plan reports every independent problem
// it can see, so a user fixes them in one round.
func TestPlanCollectsEveryProblem(t *testing.T) {
	_, ds := Plan(Spec{
		Model:         seedModel,
		Format:        "toml",
		ConfigPath:    "relative.yaml",
		GPUs:          ptr(0),
		Prefill:       RoleSpec{TensorParallelSize: ptr(0), Devices: []int{-2}},
		Decode:        RoleSpec{MaxNumSeqs: ptr(-1), Host: "bad host"},
		PortRange:     &PortRange{First: 10, Last: 5},
		ReservedPorts: []int{70000},
		APIPort:       ptr(0),
		Connector:     ConnectorSpec{Name: "Nope"},
	})
	want := map[string]string{
		"format_unknown":             "format",
		"config_path_not_absolute":   "config_path",
		"gpus_range":                 "gpus",
		"tensor_parallel_size_range": "prefill.tensor_parallel_size",
		"device_negative":            "prefill.devices[0]",
		"max_num_seqs_range":         "decode.max_num_seqs",
		"host_invalid":               "decode.host",
		"port_range_inverted":        "port_range",
		"reserved_port_invalid":      "reserved_ports",
		"port_invalid":               "api_port",
		"connector_unknown":          "connector.name",
	}
	for code, path := range want {
		if !hasCode(ds, code, path) {
			t.Errorf("missing %s at %s", code, path)
		}
	}
	if len(ds.Errors()) < len(want) {
		t.Errorf("%d errors, want at least %d:\n%s", len(ds.Errors()), len(want), describeDiags(ds))
	}
	// Problems in the base config's graph are collected together too.
	bad := strings.Replace(miniBase, "engine_input_source: [1]", "engine_input_source: [9]", 1)
	bad = strings.ReplaceAll(bad, "final_output: true", "final_output: false")
	bad += "runtime:\n  edges:\n    - {from: 0, to: 2}\n"
	_, ds = Plan(Spec{Model: seedModel, BaseConfig: bad, Prefill: RoleSpec{MaxNumSeqs: ptr(0)}})
	for _, code := range []string{"input_unknown", "no_final_output", "edge_not_in_inputs", "edge_missing", "max_num_seqs_range"} {
		found := false
		for _, d := range ds {
			found = found || d.Code == code
		}
		if !found {
			t.Errorf("missing %s; got %v", code, ds.Codes())
		}
	}
}

func TestDiagnosticFormatting(t *testing.T) {
	p := AttrPath("stage_overrides", "talker").Attr("devices").Index(2)
	if got := p.String(); got != "stage_overrides.talker.devices[2]" {
		t.Errorf("Path.String() = %q", got)
	}
	// Attr and Index never write into a shared backing array: two paths
	// extended from one prefix stay distinct.
	base := AttrPath("a", "b")
	x, y := base.Attr("x"), base.Attr("y")
	if x.String() != "a.b.x" || y.String() != "a.b.y" {
		t.Errorf("paths alias each other: %s, %s", x, y)
	}
	d := Diagnostic{Severity: SeverityWarning, Code: "c", Path: AttrPath("gpus"), Summary: "s", Detail: "d"}
	if got := d.String(); got != "warning: gpus: s: d [c]" {
		t.Errorf("String() = %q", got)
	}
	ds := Diagnostics{{Severity: SeverityWarning, Code: "w"}, {Severity: SeverityError, Code: "e"}}
	if !ds.HasErrors() || len(ds.Errors()) != 1 || len(ds.Warnings()) != 1 || strings.Join(ds.Codes(), ",") != "w,e" {
		t.Errorf("Diagnostics helpers: %v", ds)
	}
	if (Diagnostics{{Severity: SeverityWarning}}).HasErrors() {
		t.Error("a warning is not an error")
	}
	if (Path{}).String() != "" || (Path{{Index: 0}}).String() != "[0]" {
		t.Error("empty and index-only paths")
	}
}
