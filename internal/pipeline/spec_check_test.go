package pipeline

import (
	"math"
	"testing"
)

// checkSpec (and the role, port and systemd checks it runs) refuses inputs
// that are wrong on their own, before any base config is read.
func TestCheckSpecDiagnostics(t *testing.T) {
	m := seedModel
	runPlanDiagnostics(t, []planDiagCase{
		{"empty model", func(*testing.T) Spec { return Spec{} }, "model_empty", "model"},
		{"model with a space", func(*testing.T) Spec { return Spec{Model: "Qwen/Qwen3 Omni"} }, "model_invalid", "model"},
		{"model with three parts", func(*testing.T) Spec { return Spec{Model: "a/b/c", Preset: "qwen3_omni_moe"} }, "model_invalid", "model"},
		{"model path with a newline", func(*testing.T) Spec { return Spec{Model: "/models/qwen3_omni\n"} }, "model_control_character", "model"},
		{"preset and base_config", func(*testing.T) Spec { return Spec{Model: m, Preset: "qwen3_omni_moe", BaseConfig: miniBase} }, "preset_and_base_config", "base_config"},
		{"unknown format", func(*testing.T) Spec { return Spec{Model: m, Format: "json"} }, "format_unknown", "format"},
		{"relative config_path", func(*testing.T) Spec { return Spec{Model: m, ConfigPath: "deploy.yaml"} }, "config_path_not_absolute", "config_path"},
		{"config_path with a tab", func(*testing.T) Spec { return Spec{Model: m, ConfigPath: "/etc/a\tb.yaml"} }, "config_path_control_character", "config_path"},
		{"config_path with a line separator", func(*testing.T) Spec { return Spec{Model: m, ConfigPath: "/etc/a\u2028b.yaml"} }, "config_path_control_character", "config_path"},
		{"model path with a noncharacter", func(*testing.T) Spec { return Spec{Model: "/models/qwen3-omni\ufdd0"} }, "model_control_character", "model"},
		{"config_path with a noncharacter", func(*testing.T) Spec { return Spec{Model: m, ConfigPath: "/etc/a\U0010fffe.yaml"} }, "config_path_control_character", "config_path"},
		{"model path with a paragraph separator", func(*testing.T) Spec { return Spec{Model: "/models/qwen3-omni\u2029x"} }, "model_control_character", "model"},
		{"prefill TP 0", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{TensorParallelSize: ptr(0)}} }, "tensor_parallel_size_range", "prefill.tensor_parallel_size"},
		{"decode max_num_seqs 0", func(*testing.T) Spec { return Spec{Model: m, Decode: RoleSpec{MaxNumSeqs: ptr(0)}} }, "max_num_seqs_range", "decode.max_num_seqs"},
		{"prefill memory above 1", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{GPUMemoryUtilization: ptr(1.5)}} }, "gpu_memory_utilization_range", "prefill.gpu_memory_utilization"},
		{"decode memory 0", func(*testing.T) Spec { return Spec{Model: m, Decode: RoleSpec{GPUMemoryUtilization: ptr(0.0)}} }, "gpu_memory_utilization_range", "decode.gpu_memory_utilization"},
		{"negative device", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Devices: []int{-1}}} }, "device_negative", "prefill.devices[0]"},
		{"repeated device", func(*testing.T) Spec {
			return Spec{Model: m, Decode: RoleSpec{Devices: []int{1, 1}, TensorParallelSize: ptr(2)}, Prefill: RoleSpec{TensorParallelSize: ptr(2)}}
		}, "device_repeated", "decode.devices[1]"},
		{"empty device list", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Devices: []int{}}} }, "devices_empty", "prefill.devices"},
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
		{"gpus 0", func(*testing.T) Spec { return Spec{Model: m, GPUs: ptr(0)} }, "gpus_range", "gpus"},
		{"negative split_stage", func(*testing.T) Spec { return Spec{Model: m, SplitStage: ptr(-1)} }, "split_stage_range", "split_stage"},
		{"port_range.first 0", func(*testing.T) Spec { return Spec{Model: m, PortRange: &PortRange{First: 0, Last: 10}} }, "port_range_invalid", "port_range.first"},
		{"port_range.last too big", func(*testing.T) Spec { return Spec{Model: m, PortRange: &PortRange{First: 30000, Last: 70000}} }, "port_range_invalid", "port_range.last"},
		{"port_range inverted", func(*testing.T) Spec { return Spec{Model: m, PortRange: &PortRange{First: 30010, Last: 30000}} }, "port_range_inverted", "port_range"},
		{"reserved port 0", func(*testing.T) Spec { return Spec{Model: m, ReservedPorts: []int{0}} }, "reserved_port_invalid", "reserved_ports"},
		{"api_port too big", func(*testing.T) Spec { return Spec{Model: m, APIPort: ptr(65536)} }, "port_invalid", "api_port"},
		{"bootstrap port negative", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{BootstrapPort: ptr(-5)}} }, "port_invalid", "prefill.bootstrap_port"},
	})
}
