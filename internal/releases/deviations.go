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

// SeedDeviations, in the order of the recipe.
var SeedDeviations = []Deviation{
	{Stage: -1, Key: []string{"config flag"}, Recipe: FlagDeployConfig, Planned: FlagStageConfigsPath,
		Why:    "the recipe's YAML is the stage_args dialect, which only --stage-configs-path feeds to its loader; under --deploy-config releases up to 0.27 load zero stages and run the plain pipeline with PD off, and 0.28 on refuse the file",
		Source: "vllm_omni/config/resolver.py@06b00da3 _resolve_stage_configs; vllm_omni/config/stage_config.py@001275f2 load_deploy_config"},
	{Stage: 0, Key: []string{"runtime", "env", "VLLM_MOONCAKE_BOOTSTRAP_PORT"}, Recipe: nil, Planned: "25201",
		Why:    "vLLM's Mooncake bootstrap server binds VLLM_MOONCAKE_BOOTSTRAP_PORT (8998 when unset), while decode dials kv_connector_extra_config.mooncake_bootstrap_port; set equal, two pipelines on one host no longer both take 8998",
		Source: "vllm_omni/distributed/kv_transfer/mooncake_pd_patch.py@3ba7024e; vllm_omni/entrypoints/pd_utils.py@0e866dd3"},
	{Stage: 1, Key: []string{"runtime", "env", "VLLM_MOONCAKE_BOOTSTRAP_PORT"}, Recipe: nil, Planned: "25202",
		Why:    "as for prefill",
		Source: "vllm_omni/distributed/kv_transfer/mooncake_pd_patch.py@3ba7024e"},
	{Stage: 2, Key: []string{"sync_process_input_func"}, Recipe: processors + "thinker2talker_token_only", Planned: nil,
		Why:    "the stage_args runtime never reads sync_process_input_func, so the talker would start with no input processor",
		Source: "vllm_omni/engine/stage_init_utils.py@0027c20a extract_legacy_stage_metadata"},
	{Stage: 2, Key: []string{"custom_process_input_func"}, Recipe: nil, Planned: processors + "thinker2talker",
		Why:    "the key the runtime reads, with the function it calls with the stage list (the _token_only ones take the newer pipelines' source outputs); upstream's own stage_args PD configs name it",
		Source: "vllm_omni/model_executor/stage_configs/qwen3_omni_moe_pd_separation.yaml@b9f6fd40"},
	{Stage: 3, Key: []string{"sync_process_input_func"}, Recipe: processors + "talker2code2wav_token_only", Planned: nil,
		Why:    "as for the talker",
		Source: "vllm_omni/engine/stage_init_utils.py@0027c20a"},
	{Stage: 3, Key: []string{"custom_process_input_func"}, Recipe: nil, Planned: processors + "talker2code2wav",
		Why:    "as for the talker",
		Source: "vllm_omni/model_executor/stage_configs/qwen3_omni_moe_pd_separation.yaml@b9f6fd40"},
}
