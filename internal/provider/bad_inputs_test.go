package provider

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

// The catalogue of bad inputs: every attribute, alone and in contradiction
// with others, plus hostile strings and adversarial YAML in base_config, run
// through Terraform exactly as a user would meet them. Each case is one
// configuration that declares the data source and the resource with the same
// body, so both entities must reject it; the error must name the attribute
// (or say base_config and a line) and say how to fix it.
//
// A case states what the message must contain, in the order Terraform prints
// it: the attribute (the source line of a top-level attribute, or the path
// spelled out at the start of a nested one's detail), then words of the fix,
// then the engine's stable code in brackets when the engine found it.

type badInput struct {
	name string
	// body holds the attribute lines of both blocks. model = seedModel is
	// added unless a line sets model.
	body []string
	// locals, when set, is the body of a locals block in the same file.
	locals string
	// resourceOnly declares only the resource (for triggers).
	resourceOnly bool

	attr string // the attribute the message names
	fix  string // words of the fix (a Go regexp; spaces match any wrapping)
	code string // the engine's code, "" for checks made by the schema
}

// Base configs for the base_config cases, each a small variation on one
// sound two-stage config. They are written with <<EOT, so no `${`.
const (
	goodBase = `stage_args:
  - stage_id: 0
    stage_type: llm
    engine_args:
      model_stage: thinker
      worker_type: ar
  - stage_id: 1
    stage_type: llm
    engine_args:
      model_stage: talker
      worker_type: ar
    engine_input_source: [0]
    final_output: true
    final_output_type: audio
`
	cycleBase = `stage_args:
  - stage_id: 0
    engine_args:
      model_stage: thinker
  - stage_id: 1
    engine_args:
      model_stage: talker
    engine_input_source: [0, 2]
  - stage_id: 2
    engine_args:
      model_stage: code2wav
    engine_input_source: [1]
    final_output: true
`
	splitBase = `stage_args:
  - stage_id: 0
    stage_type: llm
    is_prefill_only: true
    engine_args:
      model_stage: thinker
      kv_transfer_config: {kv_connector: MooncakeConnector, kv_role: kv_producer}
  - stage_id: 1
    stage_type: llm
    is_decode_only: true
    engine_args:
      model_stage: thinker
      kv_transfer_config: {kv_connector: MooncakeConnector, kv_role: kv_consumer}
    engine_input_source: [0]
    final_output: true
`
	stagesBase = `pipeline: qwen3_omni_moe
stages:
  - stage_id: 0
    max_num_seqs: 8
  - stage_id: 1
    max_num_seqs: 8
`
)

// baseConfig writes YAML as the base_config attribute, in an HCL heredoc.
func baseConfig(yamlText string) string {
	return "base_config = <<EOT\n" + yamlText + "\nEOT"
}

func badInputs() []badInput {
	newer, _ := releases.Beyond()
	// Nested attributes: the engine spells the path at the start of its
	// detail, the framework's validators write "Attribute <path>".
	return []badInput{
		// --- model ---
		{name: "model empty", body: []string{`model = ""`},
			attr: `model`, fix: `at least 1`},
		{name: "model leading dash", body: []string{`model = "--trust-remote-code"`},
			attr: `model`, fix: `org/name`, code: "model_invalid"},
		{name: "model with spaces", body: []string{`model = "Qwen/Qwen3 Omni"`},
			attr: `model`, fix: `org/name`, code: "model_invalid"},
		{name: "model relative path", body: []string{`model = "./models/qwen3-omni"`},
			attr: `model`, fix: `absolute local path`, code: "model_invalid"},
		{name: "model parent path", body: []string{`model = "../qwen3-omni"`},
			attr: `model`, fix: `absolute local path`, code: "model_invalid"},
		{name: "model trailing dot", body: []string{`model = "Qwen/Qwen3-Omni."`},
			attr: `model`, fix: `the name ends with "\."`, code: "model_invalid"},
		{name: "model .git suffix", body: []string{`model = "Qwen/Qwen3-Omni.git"`},
			attr: `model`, fix: `it ends with "\.git"`, code: "model_invalid"},
		{name: "model double dash", body: []string{`model = "Qwen/Qwen3--Omni"`},
			attr: `model`, fix: `it holds "--"`, code: "model_invalid"},
		{name: "model command substitution", body: []string{`model = "Qwen/$(reboot)"`},
			attr: `model`, fix: `org/name`, code: "model_invalid"},
		{name: "model path with newline", body: []string{`model = "/models/qwen3-omni\nreboot"`},
			attr: `model`, fix: `remove newlines`, code: "model_control_character"},
		{name: "model path with NUL", body: []string{`model = "/models/qwen3-omni\u0000"`},
			attr: `model`, fix: `control characters`, code: "model_control_character"},
		{name: "model path with bidi override", body: []string{`model = "/models/qwen3-omni\u202e"`},
			attr: `model`, fix: `invisible formatting characters`, code: "model_control_character"},
		{name: "model without preset", body: []string{`model = "meta-llama/Llama-3-8B"`},
			attr: `model`, fix: `Set preset to one of qwen2_5_omni, qwen3_omni_moe, qwen3_omni_moe_thinker_only`, code: "preset_not_inferred"},
		{name: "model of a known family that no preset knows", body: []string{`model = "Qwen/Qwen3-Omni"`},
			attr: `model`, fix: `Qwen/Qwen3-Omni-30B-A3B-Captioner .*Set preset to the pipeline this model has`, code: "preset_variant_unknown"},
		{name: "model a local path that no preset knows", body: []string{`model = "/models/Qwen3-Omni-30B-A3B-Instruct-AWQ"`},
			attr: `model`, fix: `A local path is matched by its last element`, code: "preset_variant_unknown"},
		{name: "model without audio output given the talker preset", body: []string{`model = "Qwen/Qwen3-Omni-30B-A3B-Thinking"`, `preset = "qwen3_omni_moe"`},
			attr: `preset`, fix: `also runs talker and code2wav.*Set preset = "qwen3_omni_moe_thinker_only"`, code: "preset_variant_mismatch"},

		// --- preset and base_config ---
		{name: "preset unknown", body: []string{`preset = "llama"`},
			attr: `preset`, fix: `Use one of qwen2_5_omni, qwen3_omni_moe, qwen3_omni_moe_thinker_only`, code: "preset_unknown"},
		{name: "preset empty", body: []string{`preset = ""`},
			attr: `preset`, fix: `at least 1`},
		{name: "preset and base_config", body: []string{`preset = "qwen3_omni_moe"`, baseConfig(goodBase)},
			attr: `base_config`, fix: `cannot be specified when .*preset.* is specified`},
		{name: "base_config empty", body: []string{`base_config = ""`},
			attr: `base_config`, fix: `at least 1`},

		// --- format and pipeline ---
		{name: "format unknown", body: []string{`format = "json"`},
			attr: `format`, fix: `value must be one of`},
		{name: "format stages to stage_args without a known topology", body: []string{`model = "acme/omni-7b"`, `format = "stage_args"`, baseConfig(strings.Replace(stagesBase, "pipeline: qwen3_omni_moe", "pipeline: acme_omni", 1))},
			attr: `format`, fix: `set format = "stages"`, code: "format_conversion_unsupported"},
		{name: "pipeline key invalid", body: []string{`format = "stages"`, `pipeline = "qwen; reboot"`},
			attr: `pipeline`, fix: `must be a pipeline key`},
		{name: "stages output with no registered PD pipeline", body: []string{`model = "acme/omni-7b"`, `format = "stages"`, baseConfig(goodBase)},
			attr: `vllm_omni_version`, fix: `to the release they run`, code: "release_none"},
		{name: "pipeline with stage_args output", body: []string{`format = "stage_args"`, `pipeline = "qwen3_omni_moe_pd"`},
			attr: `pipeline`, fix: `remove pipeline`, code: "pipeline_unused"},

		// --- vllm_omni_version ---
		{name: "version malformed", body: []string{`vllm_omni_version = "latest"`},
			attr: `vllm_omni_version`, fix: `Set vllm_omni_version to a release that runs this plan: 0.20.0, 0.21.0rc1, 0.22.0, 0.23.0rc1, 0.24.0\.`, code: "release_malformed"},
		{name: "version before PD", body: []string{`vllm_omni_version = "0.18.0"`},
			attr: `vllm_omni_version`, fix: `the first release with prefill-decode`, code: "release_before_pd"},
		{name: "version the table no longer lists", body: []string{`vllm_omni_version = "0.19.0rc1"`},
			attr: `vllm_omni_version`, fix: `0.19.0rc1 is older than 0.20.0, the first release with prefill-decode`, code: "release_before_pd"},
		{name: "version whose Qwen3-Omni processors are gone", body: []string{`vllm_omni_version = "0.25.0rc1"`},
			attr: `vllm_omni_version`, fix: `it has no input processor \S+\.qwen3_omni\.thinker2talker`, code: "release_no_pd"},
		{name: "version newer than the table", body: []string{`vllm_omni_version = "` + newer + `"`},
			attr: `vllm_omni_version`, fix: `newest release this provider's table describes`, code: "release_unknown_newer"},
		{name: "version that cannot run the recipe", body: []string{`vllm_omni_version = "0.28.0"`},
			attr: `vllm_omni_version`, fix: `Ask for the thinker alone`, code: "pd_thinker_only"},
		{name: "P2pNccl on a release whose vLLM lost it", body: []string{`vllm_omni_version = "0.24.0"`, `connector = { name = "P2pNcclConnector", extra_config = { proxy_ip = "10.0.0.9", proxy_port = 30001 } }`},
			attr: `vllm_omni_version`, fix: `it cannot load P2pNcclConnector`, code: "release_no_pd"},
		{name: "split a stage that is not stage 0", body: []string{`split_stage = 1`},
			attr: `split_stage`, fix: `split stage 0`, code: "split_not_entry"},
		{name: "stages output on a release without a PD pipeline", body: []string{`format = "stages"`, `vllm_omni_version = "0.22.0"`},
			attr: `vllm_omni_version`, fix: `registers no PD pipeline for qwen3_omni_moe`, code: "release_no_pd"},
		{name: "P2pNccl proxy_ip null", body: []string{`vllm_omni_version = "0.22"`, `connector = { name = "P2pNcclConnector", extra_config = { proxy_ip = null, proxy_port = 30001 } }`},
			attr: `connector.extra_config`, fix: `needs extra_config.proxy_ip`, code: "connector_extra_missing"},
		{name: "config_path with U+2028", body: []string{"config_path = \"/etc/omni/a\u2028b.yaml\""},
			attr: `config_path`, fix: `remove newlines`, code: "config_path_control_character"},
		{name: "version empty", body: []string{`vllm_omni_version = ""`},
			attr: `vllm_omni_version`, fix: `at least 1`},
		{name: "NIXL with a larger decode TP", body: []string{`connector = { name = "NixlConnector" }`, `decode = { tensor_parallel_size = 2 }`},
			attr: `decode.tensor_parallel_size`, fix: `with every connector, NixlConnector too`, code: "tp_mismatch"},
		{name: "MultiConnector child with a role", body: []string{`connector = { name = "MultiConnector", extra_config = { connectors = [{ kv_connector = "NixlConnector", kv_rank = 3 }] } }`},
			attr: `connector.extra_config.connectors\[0\].kv_rank`, fix: `remove it from the child`, code: "multi_connector_child_managed_key"},

		// --- split_stage ---
		{name: "split_stage negative", body: []string{`split_stage = -1`},
			attr: `split_stage`, fix: `at least 0`},
		{name: "split_stage unknown", body: []string{`split_stage = 9`},
			attr: `split_stage`, fix: `base config has stages 0, 1, 2`, code: "split_stage_unknown"},
		{name: "split_stage not autoregressive", body: []string{`split_stage = 2`},
			attr: `split_stage`, fix: `autoregressive`, code: "split_stage_not_autoregressive"},

		// --- prefill and decode: types and ranges ---
		{name: "prefill not an object", body: []string{`prefill = "fast"`},
			attr: `prefill`, fix: `object required`},
		{name: "devices not a list", body: []string{`prefill = { devices = 0 }`},
			attr: `prefill`, fix: `list of number required`},
		{name: "devices empty", body: []string{`prefill = { devices = [] }`},
			attr: `prefill.devices`, fix: `at least 1`},
		{name: "devices negative", body: []string{`prefill = { devices = [-1] }`},
			attr: `prefill.devices\[0\]`, fix: `at least 0`},
		{name: "devices duplicate", body: []string{`decode = { devices = [1, 1] }`},
			attr: `decode.devices`, fix: `lists GPU 1 a second time; list each GPU once`},
		{name: "devices fractional", body: []string{`decode = { devices = [1.5] }`},
			attr: `decode.devices\[0\]`, fix: `must be a whole number, got: 1.5`},
		{name: "devices beyond any index", body: []string{`decode = { devices = [1e30] }`},
			attr: `decode.devices\[0\]`, fix: `between 0 and 2147483647, got: 1e\+30`},
		{name: "tensor_parallel_size zero", body: []string{`decode = { tensor_parallel_size = 0 }`},
			attr: `decode.tensor_parallel_size`, fix: `at least 1`},
		{name: "tensor_parallel_size fractional", body: []string{`prefill = { tensor_parallel_size = 3 / 2 }`},
			attr: `prefill.tensor_parallel_size`, fix: `must be a whole number, got: 1.5`},
		{name: "tensor_parallel_size absurd", body: []string{`prefill = { tensor_parallel_size = 100000 }`, `decode = { tensor_parallel_size = 100000 }`},
			attr: `prefill.tensor_parallel_size`, fix: `use at most 1024`, code: "world_size_range"},
		{name: "max_num_seqs zero", body: []string{`prefill = { max_num_seqs = 0 }`},
			attr: `prefill.max_num_seqs`, fix: `at least 1`},
		{name: "gpu_memory_utilization 1.5", body: []string{`prefill = { gpu_memory_utilization = 1.5 }`},
			attr: `prefill.gpu_memory_utilization`, fix: `at most 1.*0\.9`},
		{name: "gpu_memory_utilization zero", body: []string{`decode = { gpu_memory_utilization = 0 }`},
			attr: `decode.gpu_memory_utilization`, fix: `greater than 0`},
		{name: "bootstrap_port zero", body: []string{`prefill = { bootstrap_port = 0 }`},
			attr: `prefill.bootstrap_port`, fix: `between 1 and 65535`},
		{name: "bootstrap_port 70000", body: []string{`decode = { bootstrap_port = 70000 }`},
			attr: `decode.bootstrap_port`, fix: `between 1 and 65535`},
		{name: "engine_args not an object", body: []string{`prefill = { engine_args = "enforce_eager" }`},
			attr: `prefill.engine_args`, fix: `must be an object, such as \{ key = value \}`},

		// --- prefill and decode: contradictions ---
		{name: "tp mismatch for the default connector", body: []string{`prefill = { tensor_parallel_size = 2 }`, `decode = { tensor_parallel_size = 1 }`},
			attr: `decode.tensor_parallel_size`, fix: `set both to the same value`, code: "tp_mismatch"},
		{name: "NIXL decode tp below prefill", body: []string{`connector = { name = "NixlConnector" }`, `prefill = { tensor_parallel_size = 2 }`, `decode = { tensor_parallel_size = 1 }`},
			attr: `decode.tensor_parallel_size`, fix: `with every connector, NixlConnector too`, code: "tp_mismatch"},
		{name: "prefill and decode share devices", body: []string{`prefill = { devices = [0] }`, `decode = { devices = [0] }`},
			attr: `decode.devices`, fix: `give each side its own GPUs`, code: "pd_devices_overlap"},
		{name: "devices count differs from tp", body: []string{`prefill = { devices = [0], tensor_parallel_size = 2 }`, `decode = { tensor_parallel_size = 2 }`},
			attr: `prefill.devices`, fix: `list 2 device\(s\) or change the parallel sizes`, code: "devices_world_size"},
		{name: "engine_args sets tensor_parallel_size", body: []string{`prefill = { engine_args = { tensor_parallel_size = 2 } }`},
			attr: `prefill.engine_args.tensor_parallel_size`, fix: `set tensor_parallel_size instead of engine_args.tensor_parallel_size`, code: "engine_args_managed_key"},
		{name: "engine_args sets max_num_seqs", body: []string{`decode = { engine_args = { max_num_seqs = 8 } }`},
			attr: `decode.engine_args.max_num_seqs`, fix: `set max_num_seqs instead`, code: "engine_args_managed_key"},
		{name: "engine_args sets kv_transfer_config", body: []string{`decode = { engine_args = { kv_transfer_config = { kv_role = "kv_both" } } }`},
			attr: `decode.engine_args.kv_transfer_config`, fix: `set the connector attribute instead`, code: "engine_args_managed_key"},

		// --- hosts ---
		{name: "host with shell metacharacters", body: []string{`prefill = { host = "10.0.0.1;reboot" }`},
			attr: `prefill.host`, fix: `it is not an IP address`, code: "host_invalid"},
		{name: "host with command substitution", body: []string{`decode = { host = "$(reboot)" }`},
			attr: `decode.host`, fix: `it is not an IP address`, code: "host_invalid"},
		{name: "host a DNS name", body: []string{`prefill = { host = "gpu-0.internal" }`},
			attr: `prefill.host`, fix: `pass that instead of a DNS name`, code: "host_invalid"},
		{name: "host with a port", body: []string{`prefill = { host = "10.0.0.1:8080" }`},
			attr: `prefill.host`, fix: `pass the address alone`, code: "host_invalid"},
		{name: "host out of range", body: []string{`decode = { host = "999.999.999.999" }`},
			attr: `decode.host`, fix: `pass one such as 10.0.0.1`, code: "host_invalid"},
		{name: "host the wildcard", body: []string{`prefill = { host = "0.0.0.0" }`},
			attr: `prefill.host`, fix: `pass the machine's own address`, code: "host_invalid"},
		{name: "host the IPv6 wildcard", body: []string{`prefill = { host = "::" }`},
			attr: `prefill.host`, fix: `pass the machine's own address`, code: "host_invalid"},
		{name: "IPv6 across hosts", body: []string{`prefill = { host = "fd00::1" }`, `decode = { host = "10.0.0.2" }`},
			attr: `prefill.host`, fix: `use the machine's private IPv4 address`, code: "host_ipv6_unsupported"},
		{name: "loopback across hosts, mapped", body: []string{`prefill = { host = "::ffff:127.0.0.1" }`, `decode = { host = "10.0.0.2" }`},
			attr: `prefill.host`, fix: `use the address other hosts reach it at`, code: "host_unreachable"},
		{name: "systemd user root", body: []string{`systemd = { user = "root" }`},
			attr: `systemd.user`, fix: `use a system account`, code: "systemd_user_invalid"},
		{name: "systemd user nobody", body: []string{`systemd = { user = "nobody" }`},
			attr: `systemd.user`, fix: `account created for the processes`, code: "systemd_user_invalid"},
		{name: "systemd cache_dir the root", body: []string{`systemd = { cache_dir = "/" }`},
			attr: `systemd.cache_dir`, fix: `a directory of its own`, code: "cache_dir_system"},
		{name: "systemd vllm_path relative", body: []string{`systemd = { vllm_path = "bin/vllm" }`},
			attr: `systemd.vllm_path`, fix: `write the full path`, code: "vllm_path_not_absolute"},
		{name: "systemd head wait fractional", body: []string{`systemd = { head_wait_seconds = 30.5 }`},
			attr: `systemd.head_wait_seconds`, fix: `whole number`},
		{name: "host empty", body: []string{`decode = { host = "" }`},
			attr: `decode.host`, fix: `at least 1`},
		{name: "multi-host with loopback", body: []string{`prefill = { host = "127.0.0.1" }`, `decode = { host = "10.0.0.2" }`},
			attr: `prefill.host`, fix: `use the address other hosts reach it at`, code: "host_unreachable"},
		{name: "multi-host with a stage without host", body: []string{`stage_overrides = { talker = { host = "10.0.0.3" } }`},
			attr: `prefill.host`, fix: `set its host`, code: "host_missing"},

		// --- gpus ---
		{name: "gpus zero", body: []string{`gpus = 0`},
			attr: `gpus`, fix: `at least 1`},
		{name: "gpus fractional", body: []string{`gpus = 9 / 2`},
			attr: `gpus`, fix: `must be a whole number, got: 4.5`},
		{name: "gpus too few", body: []string{`gpus = 2`},
			attr: `gpus`, fix: `Raise gpus`, code: "gpus_exceeded"},
		{name: "devices beyond gpus", body: []string{`gpus = 4`, `decode = { devices = [5] }`},
			attr: `decode.devices`, fix: `list devices that exist`, code: "gpus_exceeded"},

		// --- ports ---
		{name: "api_port zero", body: []string{`api_port = 0`},
			attr: `api_port`, fix: `between 1 and 65535`},
		{name: "api_port 70000", body: []string{`api_port = 70000`},
			attr: `api_port`, fix: `between 1 and 65535`},
		{name: "api_port fractional", body: []string{`api_port = 8091.5`},
			attr: `api_port`, fix: `must be a whole number, got: 8091.5`},
		{name: "api_port beyond int64", body: []string{`api_port = 1e30`},
			attr: `api_port`, fix: `between 1 and 65535`},
		{name: "api_port a string", body: []string{`api_port = "http"`},
			attr: `api_port`, fix: `a number is required`},
		{name: "api_port equals a bootstrap port", body: []string{`api_port = 25201`, `prefill = { bootstrap_port = 25201 }`},
			attr: `prefill.bootstrap_port`, fix: `choose another port`, code: "port_collision"},
		{name: "bootstrap ports equal", body: []string{`prefill = { bootstrap_port = 26000 }`, `decode = { bootstrap_port = 26000 }`},
			attr: `decode.bootstrap_port`, fix: `choose another port`, code: "port_collision"},
		{name: "api_port reserved", body: []string{`api_port = 9000`, `reserved_ports = [22, 9000]`},
			attr: `api_port`, fix: `choose another port or unreserve it`, code: "port_reserved"},
		{name: "api_port 50051", body: []string{`api_port = 50051`},
			attr: `api_port`, fix: `choose another port`, code: "port_collision"},
		{name: "bootstrap_port 50051", body: []string{`decode = { bootstrap_port = 50051 }`},
			attr: `decode.bootstrap_port`, fix: `choose another port`, code: "port_collision"},
		// LMCacheConnectorV1, whose prefill side listens on no port, fails
		// the handoff gate before its ports are planned, so a
		// bootstrap_port with it meets that error.
		{name: "bootstrap_port on a connector without one", body: []string{`connector = { name = "LMCacheConnectorV1" }`, `prefill = { bootstrap_port = 26000 }`},
			attr: `connector.name`, fix: `LMCacheConnectorV1 returns no remote_request_id. Use NixlConnector`, code: "connector_handoff_gate"},
		{name: "port_range first above last", body: []string{`port_range = { first = 30000, last = 29000 }`},
			attr: `port_range.last`, fix: `\(29000\) is below port_range.first \(30000\).*swap them`},
		{name: "port_range first zero", body: []string{`port_range = { first = 0, last = 100 }`},
			attr: `port_range.first`, fix: `between 1 and 65535`},
		{name: "port_range last 70000", body: []string{`port_range = { first = 30000, last = 70000 }`},
			attr: `port_range.last`, fix: `between 1 and 65535`},
		{name: "port_range missing last", body: []string{`port_range = { first = 30000 }`},
			attr: `port_range`, fix: `attribute "last" is required`},
		{name: "port_range exhausted by reserved_ports", body: []string{`port_range = { first = 25201, last = 25202 }`, `reserved_ports = [25201]`},
			attr: `port_range`, fix: `widen port_range`, code: "port_range_exhausted"},
		{name: "reserved port zero", body: []string{`reserved_ports = [22, 0]`},
			attr: `reserved_ports`, fix: `between 1 and 65535, got: 0`},
		{name: "reserved port fractional", body: []string{`reserved_ports = [8080.5]`},
			attr: `reserved_ports`, fix: `must be a whole number, got: 8080.5`},

		// --- connector ---
		{name: "connector unknown", body: []string{`connector = { name = "FooConnector" }`},
			attr: `connector.name`, fix: `"FooConnector" is not a connector this provider wires; use one of`, code: "connector_unknown"},
		{name: "connector name empty", body: []string{`connector = { name = "" }`},
			attr: `connector.name`, fix: `at least 1`},
		{name: "protocol unknown", body: []string{`connector = { protocol = "udp" }`},
			attr: `connector.protocol`, fix: `value must be one of: \["tcp" "rdma"\]`},
		{name: "protocol with NixlConnector", body: []string{`connector = { name = "NixlConnector", protocol = "tcp" }`},
			attr: `connector.protocol`, fix: `NixlConnector chooses its transport itself; remove protocol`, code: "connector_protocol_unsupported"},
		{name: "protocol with the default connector", body: []string{`connector = { protocol = "rdma" }`},
			attr: `connector.protocol`, fix: `NixlConnector chooses its transport itself; remove protocol`, code: "connector_protocol_unsupported"},
		{name: "protocol with a MultiConnector without a Mooncake child", body: []string{`connector = { name = "MultiConnector", protocol = "rdma", extra_config = { connectors = [{ kv_connector = "NixlConnector" }] } }`},
			attr: `connector.protocol`, fix: `MultiConnector chooses its transport itself; remove protocol`, code: "connector_protocol_unsupported"},
		{name: "protocol unknown with a Mooncake child", body: []string{`connector = { name = "MultiConnector", protocol = "RDMA", extra_config = { connectors = [{ kv_connector = "NixlConnector" }, { kv_connector = "MooncakeConnector" }] } }`},
			attr: `connector.protocol`, fix: `value must be one of: \["tcp" "rdma"\]`},
		{name: "device_name over tcp with a Mooncake child", body: []string{`connector = { name = "MultiConnector", protocol = "tcp", device_name = "mlx5_0", extra_config = { connectors = [{ kv_connector = "NixlConnector" }, { kv_connector = "MooncakeConnector" }] } }`},
			attr: `connector.device_name`, fix: `set protocol = "rdma"`, code: "connector_device_name_unused"},
		{name: "device_name without rdma", body: []string{`connector = { device_name = "mlx5_0" }`},
			attr: `connector.device_name`, fix: `set protocol = "rdma"`, code: "connector_device_name_unused"},
		// protocol and device_name are accepted with MooncakeConnector, which
		// fails the handoff gate on every release (a MultiConnector with a
		// NixlConnector and a Mooncake child takes them).
		{name: "Mooncake over rdma", body: []string{`connector = { name = "MooncakeConnector", protocol = "rdma", device_name = "mlx5_0" }`},
			attr: `connector.name`, fix: `MooncakeConnector returns no remote_request_id. Use NixlConnector \(the default\), or MultiConnector with a NixlConnector child`, code: "connector_handoff_gate"},
		{name: "MooncakeConnector, the recipe's", body: []string{`connector = { name = "MooncakeConnector" }`},
			attr: `connector.name`, fix: `vllm-omni 0.24.0's orchestrator sends a request on to decode only when prefill's kv_transfer_params carry remote_request_id.*MooncakeConnector returns no remote_request_id`, code: "connector_handoff_gate"},
		{name: "P2pNccl on a release whose vLLM has it", body: []string{`vllm_omni_version = "0.22"`, `connector = { name = "P2pNcclConnector", extra_config = { proxy_ip = "10.0.0.9", proxy_port = 30001 } }`},
			attr: `connector.name`, fix: `vllm-omni 0.22.0's orchestrator .* P2pNcclConnector returns no remote_request_id`, code: "connector_handoff_gate"},
		{name: "MultiConnector without a NIXL child", body: []string{`connector = { name = "MultiConnector", extra_config = { connectors = [{ kv_connector = "MooncakeConnector" }, { kv_connector = "LMCacheConnectorV1" }] } }`},
			attr: `connector.name`, fix: `no child of this MultiConnector \(MooncakeConnector, LMCacheConnectorV1\) returns remote_request_id`, code: "connector_handoff_gate"},
		{name: "NIXL replicas of the PD pair", body: []string{baseConfig(strings.Replace(goodBase, "    stage_type: llm\n", "    stage_type: llm\n    runtime:\n      num_replicas: 2\n", 1))},
			attr: `base_config`, fix: `the prefill stage runs 2 replicas \(num_replicas on the base config's split stage\).*set the split stage's num_replicas to 1`, code: "nixl_replicas_one_port"},
		{name: "a P2pNccl child's proxy on the API port", body: []string{`vllm_omni_version = "0.22"`, `connector = { name = "MultiConnector", extra_config = { connectors = [{ kv_connector = "NixlConnector" }, { kv_connector = "P2pNcclConnector", kv_connector_extra_config = { proxy_ip = "127.0.0.1", proxy_port = 8091 } }] } }`},
			attr: `connector.extra_config.connectors\[1\].kv_connector_extra_config.proxy_port`, fix: `port 8091 is both api and p2p_nccl_proxy; choose another port`, code: "port_collision"},
		{name: "a P2pNccl child's proxy_port out of range", body: []string{`vllm_omni_version = "0.22"`, `connector = { name = "MultiConnector", extra_config = { connectors = [{ kv_connector = "NixlConnector" }, { kv_connector = "P2pNcclConnector", kv_connector_extra_config = { proxy_ip = "10.0.0.9", proxy_port = 70000 } }] } }`},
			attr: `connector.extra_config.connectors\[1\].kv_connector_extra_config.proxy_port`, fix: `give the port the proxy listens on, 1-65535`, code: "connector_proxy_invalid"},
		{name: "kv_both with P2pNccl", body: []string{`connector = { name = "P2pNcclConnector", kv_both = true, extra_config = { proxy_ip = "10.0.0.9", proxy_port = 30001 } }`},
			attr: `connector.kv_both`, fix: `remove kv_both`, code: "connector_kv_both_unsupported"},
		{name: "P2pNccl without proxy_ip", body: []string{`connector = { name = "P2pNcclConnector", extra_config = { proxy_port = 30001 } }`},
			attr: `connector.extra_config`, fix: `needs extra_config.proxy_ip`, code: "connector_extra_missing"},
		{name: "MultiConnector without children", body: []string{`connector = { name = "MultiConnector" }`},
			attr: `connector.extra_config.connectors`, fix: `list them in extra_config.connectors`, code: "multi_connector_children"},
		{name: "MultiConnector with an unknown child", body: []string{`connector = { name = "MultiConnector", extra_config = { connectors = [{ kv_connector = "FooConnector" }] } }`},
			attr: `connector.extra_config.connectors\[0\].kv_connector`, fix: `set each child.s kv_connector to one of`, code: "multi_connector_children"},
		{name: "MultiConnector children not a list", body: []string{`connector = { name = "MultiConnector", extra_config = { connectors = "NixlConnector" } }`},
			attr: `connector.extra_config.connectors`, fix: `list them in extra_config.connectors`, code: "multi_connector_children"},
		{name: "extra_config sets mooncake_bootstrap_port", body: []string{`connector = { extra_config = { mooncake_bootstrap_port = 26000 } }`},
			attr: `connector.extra_config.mooncake_bootstrap_port`, fix: `set prefill.bootstrap_port and decode.bootstrap_port instead`, code: "connector_extra_managed_key"},
		{name: "extra_config not an object", body: []string{`connector = { extra_config = ["proxy_ip"] }`},
			attr: `connector.extra_config`, fix: `must be an object`},
		{name: "kv_both not a bool", body: []string{`connector = { kv_both = "maybe" }`},
			attr: `connector`, fix: `a bool is required`},

		// --- stage_overrides ---
		{name: "stage_overrides not an object", body: []string{`stage_overrides = ["talker"]`},
			attr: `stage_overrides`, fix: `must be an object`},
		{name: "stage_overrides unknown stage", body: []string{`stage_overrides = { vocoder = { max_num_seqs = 8 } }`},
			attr: `stage_overrides.vocoder`, fix: `talker, code2wav`, code: "override_unknown_stage"},
		{name: "stage_overrides unknown setting", body: []string{`stage_overrides = { talker = { max_num_seq = 8 } }`},
			attr: `stage_overrides.talker.max_num_seq`, fix: `use devices, max_num_seqs`, code: "stage_overrides_unknown_key"},
		{name: "stage_overrides for the thinker", body: []string{`stage_overrides = { thinker = { max_num_seqs = 8 } }`},
			attr: `stage_overrides.thinker`, fix: `move these settings to the prefill and decode attributes`, code: "override_split_stage"},
		{name: "stage_overrides for decode", body: []string{`stage_overrides = { decode = { max_num_seqs = 8 } }`},
			attr: `stage_overrides.decode`, fix: `move these settings to the prefill and decode attributes`, code: "override_split_stage"},
		{name: "stage_overrides entry not an object", body: []string{`stage_overrides = { talker = 8 }`},
			attr: `stage_overrides.talker`, fix: `write talker = \{ max_num_seqs = 8 \}`, code: "stage_overrides_shape"},
		{name: "stage_overrides devices a string", body: []string{`stage_overrides = { talker = { devices = "2" } }`},
			attr: `stage_overrides.talker.devices`, fix: `write devices = \[2\]`, code: "stage_overrides_type"},
		{name: "stage_overrides devices negative", body: []string{`stage_overrides = { talker = { devices = [-2] } }`},
			attr: `stage_overrides.talker.devices\[0\]`, fix: `GPU indices start at 0`, code: "device_negative"},
		{name: "stage_overrides max_num_seqs a string", body: []string{`stage_overrides = { talker = { max_num_seqs = "many" } }`},
			attr: `stage_overrides.talker.max_num_seqs`, fix: `write a whole number`, code: "stage_overrides_type"},
		{name: "stage_overrides max_num_seqs fractional", body: []string{`stage_overrides = { code2wav = { max_num_seqs = 1.5 } }`},
			attr: `stage_overrides.code2wav.max_num_seqs`, fix: `write a whole number`, code: "stage_overrides_type"},
		{name: "stage_overrides gpu_memory_utilization 2", body: []string{`stage_overrides = { talker = { gpu_memory_utilization = 2 } }`},
			attr: `stage_overrides.talker.gpu_memory_utilization`, fix: `such as 0.9`, code: "gpu_memory_utilization_range"},
		{name: "stage_overrides num_replicas zero", body: []string{`stage_overrides = { talker = { num_replicas = 0 } }`},
			attr: `stage_overrides.talker.num_replicas`, fix: `set 1 or more`, code: "num_replicas_range"},
		{name: "stage_overrides host a number", body: []string{`stage_overrides = { talker = { host = 5 } }`},
			attr: `stage_overrides.talker.host`, fix: `write an address`, code: "stage_overrides_type"},
		{name: "stage_overrides engine_args a string", body: []string{`stage_overrides = { talker = { engine_args = "eager" } }`},
			attr: `stage_overrides.talker.engine_args`, fix: `write an object`, code: "stage_overrides_type"},
		{name: "stage_overrides engine_args sets max_num_seqs", body: []string{`stage_overrides = { talker = { engine_args = { max_num_seqs = 8 } } }`},
			attr: `stage_overrides.talker.engine_args.max_num_seqs`, fix: `set max_num_seqs instead`, code: "engine_args_managed_key"},
		{name: "stage_overrides tensor_parallel_size zero", body: []string{`stage_overrides = { talker = { engine_args = { tensor_parallel_size = 0 } } }`},
			attr: `stage_overrides.talker.engine_args.tensor_parallel_size`, fix: `set a whole number`, code: "tensor_parallel_size_range"},
		{name: "stage_overrides memory oversubscribed", body: []string{`stage_overrides = { talker = { gpu_memory_utilization = 0.6 }, code2wav = { gpu_memory_utilization = 0.5 } }`},
			attr: `stage_overrides.code2wav.gpu_memory_utilization`, fix: `lower gpu_memory_utilization so the sum is at most 1.0`, code: "gpu_memory_oversubscribed"},

		// --- config_path ---
		{name: "config_path relative", body: []string{`config_path = "deploy.yaml"`},
			attr: `config_path`, fix: `write the full path on the host`, code: "config_path_not_absolute"},
		{name: "config_path with newline", body: []string{`config_path = "/etc/omni/deploy.yaml\nreboot"`},
			attr: `config_path`, fix: `remove newlines`, code: "config_path_control_character"},
		{name: "config_path empty", body: []string{`config_path = ""`},
			attr: `config_path`, fix: `at least 1`},
		{name: "config_path the environment file", body: []string{`config_path = "/etc/vllm-omni/vllm-omni.env"`},
			attr: `config_path`, fix: `is also systemd.environment_file .* give config_path a file of its own`, code: "path_collision"},
		{name: "config_path the template unit", body: []string{`config_path = "/etc/systemd/system/vllm-omni-stage@.service"`},
			attr: `config_path`, fix: `is the template unit the plan writes .* give config_path a file of its own`, code: "path_collision"},
		{name: "config_path a directory", body: []string{`config_path = "/etc/vllm-omni/"`},
			attr: `config_path`, fix: `names a directory; write the path`, code: "path_not_a_file"},
		{name: "cache_dir holding the check script", body: []string{`systemd = { cache_dir = "/usr/local/lib/vllm-omni" }`},
			attr: `systemd.cache_dir`, fix: `holds check_script_path .*/pd-check.py.* give systemd.cache_dir a directory of its own`, code: "path_collision"},

		// --- triggers (resource only) ---
		{name: "triggers not a map of strings", resourceOnly: true, body: []string{`triggers = { rev = ["1"] }`},
			attr: `triggers`, fix: `string required`},

		// --- base_config: malformed and adversarial YAML ---
		{name: "base_config not YAML", body: []string{baseConfig("stage_args: [unclosed")},
			attr: `base_config`, fix: `line 1.*Pass a vllm-omni stage config`, code: "base_config_invalid"},
		{name: "base_config neither dialect", body: []string{baseConfig("stagez:\n  - stage_id: 0")},
			attr: `base_config`, fix: `line 1.*neither .stage_args:. nor .stages:.`, code: "base_config_invalid"},
		{name: "base_config both dialects", body: []string{baseConfig(goodBase + "stages: []")},
			attr: `base_config`, fix: `line \d+.*keep one list`, code: "base_config_invalid"},
		{name: "base_config a list", body: []string{baseConfig("- stage_id: 0")},
			attr: `base_config`, fix: `line 1.*expected a mapping`, code: "base_config_invalid"},
		{name: "base_config stage_args not a list", body: []string{baseConfig("stage_args: 5")},
			attr: `base_config`, fix: `line 1.*must be a list of stages`, code: "base_config_invalid"},
		{name: "base_config empty document", body: []string{baseConfig("# nothing here")},
			attr: `base_config`, fix: `line 1.*the document is empty`, code: "base_config_invalid"},
		{name: "base_config duplicate keys", body: []string{baseConfig(strings.Replace(goodBase, "    stage_type: llm\n", "    stage_type: llm\n    stage_id: 5\n", 1))},
			attr: `base_config`, fix: `line 4, column 5: key "stage_id" appears twice.*remove the other`, code: "base_config_invalid"},
		// 1000 × 301 numbers, as one join of 1000 strings: a flatten() of
		// 300000 one-element strings is too slow for Terraform itself.
		{name: "base_config too many nodes", body: []string{`base_config = "stage_args: [${join(",", [for i in range(1000) : "` + strings.Repeat("1,", 300) + `1"])}]"`},
			attr: `base_config`, fix: `line 1, column \d+: the document has more than 200000 nodes`, code: "base_config_invalid"},
		{name: "base_config deep nesting", body: []string{`base_config = "stage_args: ${join("", [for i in range(70) : "["])}${join("", [for i in range(70) : "]"])}"`},
			attr: `base_config`, fix: `line 1.*nests more than 64 levels`, code: "base_config_invalid"},
		{name: "base_config over 1 MiB", body: []string{`base_config = "${local.stage_args}# ${join("", [for i in range(1024) : format("%01025d", i)])}"`},
			locals: "stage_args = <<EOT\n" + goodBase + "EOT",
			attr:   `base_config`, fix: `the limit is 1048576 bytes \(1 MiB\)`, code: "base_config_invalid"},
		{name: "base_config alias bomb", body: []string{baseConfig(aliasBomb)},
			attr: `base_config`, fix: `line \d+.*more than 200000 nodes once its aliases are expanded`, code: "base_config_invalid"},
		{name: "base_config alias cycle", body: []string{baseConfig("stage_args: &loop\n  - *loop")},
			attr: `base_config`, fix: `line 2.*makes the document infinite`, code: "base_config_invalid"},
		{name: "base_config unknown alias", body: []string{baseConfig("stage_args:\n  - *nowhere")},
			attr: `base_config`, fix: `line 2: unknown anchor 'nowhere'`, code: "base_config_invalid"},
		{name: "base_config multiple documents", body: []string{baseConfig(goodBase + "---\n" + goodBase)},
			attr: `base_config`, fix: `line 15.*a second YAML document starts here`, code: "base_config_invalid"},
		{name: "base_config already split", body: []string{baseConfig(splitBase)},
			attr: `base_config`, fix: `Pass the config before the split`, code: "base_already_split"},
		{name: "base_config half split", body: []string{baseConfig(strings.Replace(goodBase, "    stage_type: llm\n", "    stage_type: llm\n    is_prefill_only: true\n", 1))},
			attr: `base_config`, fix: `Pass the config before the split`, code: "base_already_split"},
		{name: "base_config tensor_parallel_size negative", body: []string{baseConfig(strings.Replace(goodBase, "      model_stage: thinker\n", "      model_stage: thinker\n      tensor_parallel_size: -1\n", 1))},
			attr: `base_config`, fix: `has tensor_parallel_size -1; set each of them to 1 or more`, code: "world_size_range"},
		{name: "base_config cycle", body: []string{baseConfig(cycleBase)},
			attr: `base_config`, fix: `stages 1 → 2 → 1 feed each other`, code: "graph_cycle"},
		{name: "base_config dangling input", body: []string{baseConfig(strings.Replace(goodBase, "[0]", "[7]", 1))},
			attr: `base_config`, fix: `reads from stage 7.*fix engine_input_source`, code: "input_unknown"},
		{name: "base_config no final output", body: []string{baseConfig(strings.Replace(goodBase, "final_output: true", "final_output: false", 1))},
			attr: `base_config`, fix: `set .final_output: true.`, code: "no_final_output"},
		{name: "base_config edges differ from inputs", body: []string{baseConfig(goodBase + "runtime:\n  edges:\n    - from: 1\n      to: 0\n")},
			attr: `base_config`, fix: `make the edges and the inputs describe the same graph`, code: "edge_not_in_inputs"},
		{name: "base_config stage without id", body: []string{baseConfig(strings.Replace(goodBase, "  - stage_id: 1\n    stage_type", "  - stage_type", 1))},
			attr: `base_config`, fix: `line \d+.*needs a whole-number stage_id`, code: "stage_id_missing"},
		{name: "base_config duplicate stage ids", body: []string{baseConfig(strings.Replace(goodBase, "stage_id: 1", "stage_id: 0", 1))},
			attr: `base_config`, fix: `give each stage its own id`, code: "stage_id_duplicate"},
		{name: "MultiConnector children as class names", body: []string{`connector = { name = "MultiConnector", extra_config = { connectors = ["NixlConnector", "MooncakeConnector"] } }`},
			attr: `connector.extra_config.connectors\[0\]`, fix: `this entry is the string "NixlConnector"; write it as \{ kv_connector = "NixlConnector" \}`, code: "multi_connector_children"},
	}
}

// aliasBomb is the "billion laughs" document: nine levels of ten aliases
// each stand for 10^9 strings in a few hundred bytes.
var aliasBomb = func() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		refs := strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*a%d, ", i-1), 10), ", ")
		fmt.Fprintf(&b, "a%d: &a%d [%s]\n", i, i, refs)
	}
	b.WriteString(goodBase)
	return b.String()
}()

// config renders the case as one Terraform configuration.
func (c badInput) config() string {
	body := c.body
	hasModel := false
	for _, l := range body {
		if strings.HasPrefix(strings.TrimSpace(l), "model ") {
			hasModel = true
		}
	}
	if !hasModel {
		body = append([]string{`model = "` + seedModel + `"`}, body...)
	}
	lines := strings.Join(body, "\n  ")
	var b strings.Builder
	if c.locals != "" {
		b.WriteString("locals {\n  " + c.locals + "\n}\n\n")
	}
	if !c.resourceOnly {
		b.WriteString("data \"omni_pd_pipeline\" \"test\" {\n  " + lines + "\n}\n\n")
	}
	b.WriteString("resource \"omni_pd_pipeline\" \"test\" {\n  " + lines + "\n}\n")
	return b.String()
}

// messageRE is what the error output must contain: attribute, fix and code
// in that order, once per entity.
func (c badInput) messageRE() *regexp.Regexp {
	one := loose(c.attr) + `.*` + loose(c.fix)
	if c.code != "" {
		one += `.*\[` + regexp.QuoteMeta(c.code) + `\]`
	}
	if c.resourceOnly {
		return regexp.MustCompile(`(?s)` + one)
	}
	return regexp.MustCompile(`(?s)` + one + `.*` + one)
}

// loose lets the spaces of a pattern match any whitespace, since Terraform
// wraps long diagnostic lines.
func loose(pattern string) string {
	return strings.Join(strings.Fields(pattern), `\s+`)
}

func TestAccPDPipeline_BadInputs(t *testing.T) {
	cases := badInputs()
	if len(cases) < 60 {
		t.Fatalf("the catalogue has %d cases; keep at least 60", len(cases))
	}
	runBadInputs(t, cases)
}

// Case names are unique across every table of bad inputs, so a failure
// names one case.
func TestBadInputs_NamesUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range slices.Concat(badInputs(), hostileInputs(), badYAMLInputs(t)) {
		if seen[c.name] {
			t.Errorf("case %q is listed twice", c.name)
		}
		seen[c.name] = true
	}
}

// runBadInputs plans each case through Terraform, in parallel, and expects
// its message (messageRE) from every entity it declares.
func runBadInputs(t *testing.T, cases []badInput) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			accTest(t, resource.TestStep{
				Config:      c.config(),
				ExpectError: showRE(c.messageRE()),
			})
			t.Logf("%s: rejected in %v", c.name, time.Since(start).Round(time.Millisecond))
		})
	}
}

// Terraform strings are always valid UTF-8, so a base config with invalid
// bytes can only reach the provider from another client. The shared path
// from inputs to outputs must reject it with the line, without a panic.
func TestPDPipeline_BaseConfigNotUTF8(t *testing.T) {
	in := pipelineInputs{
		Model:      types.StringValue(seedModel),
		BaseConfig: types.StringValue(goodBase + "# caf\xe9\n"),
	}
	_, ok, diags := planOutputs(context.Background(), in, nil)
	if ok || !diags.HasError() {
		t.Fatalf("a base_config that is not UTF-8 was accepted: %v", diags)
	}
	got := diags.Errors()[0].Detail()
	if !regexp.MustCompile(`line 15: the document is not valid UTF-8.*\[base_config_invalid\]`).MatchString(got) {
		t.Errorf("detail = %q", got)
	}
}

// showRE returns re, or, with OMNI_SHOW_ERRORS set, a pattern nothing
// matches, so that every case fails and prints Terraform's whole output:
// the way to review the catalogue's messages as a user reads them.
func showRE(re *regexp.Regexp) *regexp.Regexp {
	if os.Getenv("OMNI_SHOW_ERRORS") != "" {
		return regexp.MustCompile(`\A\z`)
	}
	return re
}

// Adversarial documents must be rejected quickly, whatever their shape: the
// plan runs on every `terraform plan`, twice. Each is planned through the
// same path the data source and the resource use, and timed.
func TestPDPipeline_AdversarialBaseConfigIsFast(t *testing.T) {
	// Generous, for a loaded CI machine: the limit catches a document whose
	// cost grows with what it expands to, not a slow run. The slowest case
	// is 300000 nodes, which yaml.v3 must decode before they can be
	// counted; each case logs its time.
	limit := 3 * time.Second * raceSlowdown
	cases := []struct {
		name, doc, want string
	}{
		{"alias bomb (10^9 nodes)", aliasBomb, `line 6, column 5: the document has more than 200000 nodes once its aliases are expanded`},
		{"wide alias fan-out (10^6 nodes)", wideAliases(), `more than 200000 nodes once its aliases are expanded`},
		{"alias cycle", "stage_args: &loop\n  - *loop\n", `line 2, column 5: the alias \*loop refers to a node that contains it`},
		{"nesting 70 deep", "stage_args: " + strings.Repeat("[", 70) + strings.Repeat("]", 70), `line 1, column \d+: the document nests more than 64 levels deep`},
		{"nesting 100000 deep", "stage_args: " + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000), `line 1: the document nests more than 64 levels deep`},
		{"over 1 MiB", goodBase + "# " + strings.Repeat("x", 1<<20), `the document is 1048\d+ bytes; the limit is 1048576 bytes \(1 MiB\)`},
		{"300000 nodes under 1 MiB", "stage_args: [" + strings.Repeat("1,", 300_000) + "1]", `more than 200000 nodes`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := pipelineInputs{Model: types.StringValue(seedModel), BaseConfig: types.StringValue(c.doc)}
			start := time.Now()
			_, ok, diags := planOutputs(context.Background(), in, nil)
			elapsed := time.Since(start)
			t.Logf("%d bytes rejected in %v", len(c.doc), elapsed.Round(time.Microsecond))
			if ok || !diags.HasError() {
				t.Fatalf("accepted: %v", diags)
			}
			if got := diags.Errors()[0].Detail(); !regexp.MustCompile(c.want + `.*\[base_config_invalid\]`).MatchString(got) {
				t.Errorf("detail = %.300q", got)
			}
			if elapsed > limit {
				t.Errorf("took %v; an adversarial document must be rejected in well under %v", elapsed, limit)
			}
		})
	}
}

// wideAliases defines one anchor of 1000 strings and aliases it 1000 times.
func wideAliases() string {
	var b strings.Builder
	b.WriteString("big: &big [" + strings.TrimSuffix(strings.Repeat("x, ", 1000), ", ") + "]\n")
	b.WriteString("many: [" + strings.TrimSuffix(strings.Repeat("*big, ", 1000), ", ") + "]\n")
	b.WriteString(goodBase)
	return b.String()
}
