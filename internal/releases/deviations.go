package releases

// Deviation is one place where the plan for the PD recipe
// (vllm-omni's docs/configuration/pd_disaggregation.md, the product's seed)
// differs from the recipe's text, because no release starts what the
// recipe writes. The docs list these, and the seed tests apply them to the
// recipe before comparing it with the plan, so the two cannot drift.
type Deviation struct {
	// Stage and Key locate a config value in the recipe's stage list
	// (Stage -1 for the launch line); Key is the path inside the stage.
	Stage int
	Key   []string
	// Recipe and Planned are the values; nil means absent.
	Recipe  any
	Planned any
	Why     string
	Source  string
}

const processors = "vllm_omni.model_executor.stage_input_processors.qwen3_omni."

// SeedDeviations, in the order of the recipe, for the default release
// (0.24.0, read at d4a869fe).
var SeedDeviations = []Deviation{
	{Stage: -1, Key: []string{"config flag"}, Recipe: FlagDeployConfig, Planned: FlagStageConfigsPath,
		Why:    "the recipe's YAML is the stage_args dialect, which only --stage-configs-path feeds to its loader; under --deploy-config releases up to 0.27 load zero stages and run the plain pipeline with PD off, and 0.28 on refuse the file",
		Source: "vllm_omni/entrypoints/cli/serve.py@d4a869fe :244; vllm_omni/entrypoints/utils.py@d4a869fe load_stage_configs_from_yaml :367; vllm_omni/config/stage_config.py@001275f2 load_deploy_config"},
	{Stage: -1, Key: []string{"stage-based launch"}, Recipe: nil, Planned: "--stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25203",
		Why: "0.24.0 applies no stage's runtime.env in a whole-pipeline process, and prefill and decode need different VLLM_NIXL_SIDE_CHANNEL_PORT values, which one shared environment cannot hold; " +
			"so each stage runs as its own process on the one host, the head (this line, stage 0) serving the API and the omni master, the others headless with --stage-id N --headless and their variables in their own environment",
		Source: "vllm_omni/engine/stage_init_utils.py@d4a869fe :628 stage_runtime_setup has no caller (#3855); vllm_omni/entrypoints/cli/serve.py@d4a869fe run_headless :743 applies none; docs/cli/serve.md@d4a869fe :16-31 (head and headless on one host, master on 127.0.0.1)"},
	{Stage: 0, Key: []string{"engine_args", "kv_transfer_config", "kv_connector"}, Recipe: "MooncakeConnector", Planned: "NixlConnector",
		Why: "vllm-omni's orchestrator fails every PD request whose prefill kv_transfer_params carry no remote_request_id; vLLM's MooncakeConnector returns none since vLLM PR #31034, NixlConnector does (PR #29665), " +
			"so with the recipe's connector the server starts and its first PD request fails; the error is raised outside any handler and stops the orchestrator with it (orchestrator.py@d4a869fe :756)",
		Source: "vllm_omni/engine/orchestrator.py@d4a869fe _build_pd_decode_params :1098, raise :1110-1113"},
	{Stage: 0, Key: []string{"engine_args", "kv_transfer_config", "kv_connector_extra_config"}, Recipe: map[string]any{"mooncake_bootstrap_port": 25201}, Planned: nil,
		Why:    "a MooncakeConnector setting; NixlConnector takes its handshake port from the environment",
		Source: "vLLM v1/nixl/scheduler.py (VLLM_NIXL_SIDE_CHANNEL_PORT + the data-parallel index)"},
	{Stage: 0, Key: []string{"runtime", "env", "VLLM_NIXL_SIDE_CHANNEL_PORT"}, Recipe: nil, Planned: "25201",
		Why:    "NIXL's handshake listener binds VLLM_NIXL_SIDE_CHANNEL_PORT (5600 when unset) plus the engine's data-parallel index; prefill and decode on one host need their own, the recipe's port numbers; the stage's process gets it in its environment too",
		Source: "vLLM v1/nixl/scheduler.py NixlConnectorScheduler (vLLM PR #26338); vllm_omni/entrypoints/cli/serve.py@d4a869fe run_headless"},
	{Stage: 1, Key: []string{"engine_args", "kv_transfer_config", "kv_connector"}, Recipe: "MooncakeConnector", Planned: "NixlConnector",
		Why:    "as for prefill: both sides name the same connector",
		Source: "vllm_omni/entrypoints/pd_utils.py@d4a869fe _validate_pd_separation_config :158-163"},
	{Stage: 1, Key: []string{"engine_args", "kv_transfer_config", "kv_connector_extra_config"}, Recipe: map[string]any{"mooncake_bootstrap_port": 25202}, Planned: nil,
		Why:    "as for prefill",
		Source: "vLLM v1/nixl/scheduler.py"},
	{Stage: 1, Key: []string{"runtime", "env", "VLLM_NIXL_SIDE_CHANNEL_PORT"}, Recipe: nil, Planned: "25202",
		Why:    "as for prefill",
		Source: "vLLM v1/nixl/scheduler.py NixlConnectorScheduler"},
	{Stage: 2, Key: []string{"sync_process_input_func"}, Recipe: processors + "thinker2talker_token_only", Planned: nil,
		Why:    "the stage_args runtime never reads sync_process_input_func, so the talker would start with no input processor",
		Source: "vllm_omni/engine/stage_init_utils.py@d4a869fe extract_stage_metadata :377-381"},
	{Stage: 2, Key: []string{"custom_process_input_func"}, Recipe: nil, Planned: processors + "thinker2talker",
		Why: "the key the runtime reads, imported with getattr and no default and called as (source_outputs, prompt, requires_multimodal_data, streaming_context); " +
			"this function merges prefill's and decode's embeddings for the talker, which the _token_only one does not; upstream's own stage_args PD configs name it. It is gone from 0.25.0rc1 on (#4986), so the plan targets 0.24.0",
		Source: "vllm_omni/model_executor/stage_input_processors/qwen3_omni.py@d4a869fe thinker2talker :612, _merge_pd_embeddings :197; qwen3_omni_moe_pd_separation.yaml@b9f6fd40"},
	{Stage: 3, Key: []string{"sync_process_input_func"}, Recipe: processors + "talker2code2wav_token_only", Planned: nil,
		Why:    "as for the talker; qwen3_omni never had a talker2code2wav_token_only",
		Source: "vllm_omni/engine/stage_init_utils.py@d4a869fe :377-381"},
	{Stage: 3, Key: []string{"custom_process_input_func"}, Recipe: nil, Planned: processors + "talker2code2wav",
		Why:    "as for the talker",
		Source: "vllm_omni/model_executor/stage_input_processors/qwen3_omni.py@d4a869fe talker2code2wav :957"},
}
