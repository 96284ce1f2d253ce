package releases

// The facts below were read from vllm-project/vllm-omni and vllm-project/vllm
// source at the commits named, and from the merged pull requests whose
// numbers and dates are given. A release tag's own tree could not be read,
// so which release first carries a change is inferred from the merge date
// against the release date; where that leaves a doubt the row takes the
// side that emits less and says so in Notes.

// Loaders.
var (
	// PD arrived in the stage_args dialect (#2220, reviewed until
	// 2026-04-16), read by the legacy loader that only --stage-configs-path
	// reaches.
	loadStageArgs = Loader{Dialect: StageArgs, Flag: FlagStageConfigsPath,
		Source: "vllm_omni/config/resolver.py@06b00da3 _resolve_stage_configs; docs/configuration/pd_disaggregation.md@47128564"}
	// The stages dialect and --deploy-config came with #2383 (merged by
	// 2026-04-21, #2978 already cites vllm_omni/deploy/qwen3_omni_moe.yaml).
	loadStages = Loader{Dialect: Stages, Flag: FlagDeployConfig,
		Source: "vllm_omni/config/resolver.py@06b00da3 routes --deploy-config to load_deploy_config; PR #2383"}
)

// The stage_args runtime.
var stageArgsRuntime = &StageArgsRuntime{
	ReadKeys: []string{
		"stage_id", "stage_type", "runtime", "engine_args", "engine_input_source",
		"custom_process_input_func", "final_output", "final_output_type", "is_comprehension",
		"default_sampling_params", "default_pooling_params", "input_connectors", "output_connectors",
		"is_prefill_only", "is_decode_only", "prompt_transform_func", "prompt_expand_func",
	},
	Ignored: []IgnoredKey{{
		Key: []string{"sync_process_input_func"}, ReadAs: []string{"custom_process_input_func"},
		InPackage: "vllm_omni.model_executor.stage_input_processors.", DropSuffix: "_token_only",
		Source: "vllm_omni/engine/stage_init_utils.py@0027c20a extract_legacy_stage_metadata reads custom_process_input_func only; " +
			"sync_process_input_func is a StagePipelineConfig field (vllm_omni/model_executor/models/qwen3_omni/pipeline.py@04a1a2fe) " +
			"that merge_pipeline_deploy copies into custom_process_input_func (vllm_omni/config/stage_config.py@001275f2); " +
			"its _token_only functions take the newer pipelines' source outputs, and the same module's function without the " +
			"suffix is the one stage_args PD configs name (qwen3_omni_moe_pd_separation.yaml@b9f6fd40)",
	}, {
		Key: []string{"runtime", "max_batch_size"}, ReadAs: []string{"engine_args", "max_num_seqs"},
		Source: "PR #1851 (merged 2026-03-12, before PD) removed the copy of runtime.max_batch_size into engine_args.max_num_seqs " +
			"from load_stage_configs_from_yaml; the stage workers read engine_args.max_num_seqs",
	}},
	GenericPD: true,
	Source: "vllm_omni/entrypoints/pd_utils.py@47128564 and @0e866dd3: a stage is prefill or decode by its own is_prefill_only / is_decode_only, " +
		"paired when decode lists prefill in engine_input_source; no registration",
}

// The stages deploy loader. No release registers a PD pipeline:
// vllm_omni/config/pipeline_registry.py@00a82c37 (also @04a1a2fe,
// @5956237b) has qwen3_omni_moe, qwen3_omni_moe_thinker_only,
// qwen2_5_omni, hunyuan_image_3_moe, minicpmo_4_5 and others, no *_pd key;
// hunyuan_image3_pd is only in open PR #7217 and a pd_separation deploy key
// only in open PR #2947.
var (
	deployLoader = &DeployLoader{
		AsyncChunkDefault: true,
		Source: "vllm_omni/config/stage_config.py@001275f2 DeployConfig.async_chunk defaults to true; " +
			"vllm_omni/config/config_factory.py@0027c20a _get_deploy_override_pipe_config raises KeyError for an unregistered pipeline; " +
			"a stage_args file loads zero stages (PR #4038 review, 2026-06-01)",
	}
	// #6200 (2026-08-14) removed the stage_args loader; load_deploy_config
	// refuses the schema from then on.
	deployLoaderRefusing = &DeployLoader{
		AsyncChunkDefault: true,
		RefusesStageArgs:  true,
		Source: "vllm_omni/config/stage_config.py@001275f2 load_deploy_config raises on stage_args (PR #6200, 2026-08-14); " +
			"async_chunk defaults to true; unregistered pipeline: KeyError (config_factory.py@0027c20a)",
	}
)

// The PD validator: OmniBase._init_pd_state → _validate_pd_separation_config
// in vllm_omni/entrypoints/pd_utils.py, the same in both versions read.
// Equal tensor_parallel_size is demanded for every connector, NIXL
// included. Requests always enter at stage 0, and the sync path forces
// max_tokens=1 only when the prefill stage is stage 0 (_seed_is_prefill),
// so the prefill must be the entry stage.
var pdValidator = Validator{
	Checks: []string{CheckOnePair, CheckKVConfigPresent, CheckRoles, CheckDecodeReadsPrefill,
		CheckSameConnector, CheckBuffers, CheckEqualTP, CheckPrefillEntry},
	Source: "vllm_omni/entrypoints/pd_utils.py@47128564 and @0e866dd3 _validate_pd_separation_config; " +
		"vllm_omni/engine/orchestrator.py@039b3151 (requests enter at stage 0)",
}

// Stage-based launch flags. --stage-id and the master flags are in the
// earliest serve.py read (which still has --stage-configs-path);
// --headless is vLLM's own flag. #3569 (2026-05-13, merge date not
// captured) added --omni-replica-address and --omni-dp-size-local; rows
// take them from 0.24.0, the first release they are certain in.
var (
	stageCLIBase = Facts{
		Names:  []string{FlagStageID, FlagHeadless, FlagOmniMasterAddress, FlagOmniMasterPort},
		Source: "vllm_omni/entrypoints/cli/serve.py, in its earliest version read (which still has --stage-configs-path); --headless from vLLM's serve parser",
	}
	stageCLIReplicas = Facts{
		Names:  []string{FlagStageID, FlagHeadless, FlagOmniMasterAddress, FlagOmniMasterPort, FlagOmniReplicaAddr, FlagOmniDPSizeLocal},
		Source: "vllm_omni/entrypoints/cli/serve.py@0027c20a validate(); PR #3569 (2026-05-13) added --omni-replica-address and --omni-dp-size-local",
	}
)

// KV connectors the vLLM a release needs can load. MooncakeConnector is in
// vLLM since PR #24718 (documented from 0.15) and vllm-omni patches it
// (vllm_omni/distributed/kv_transfer/mooncake_pd_patch.py@3ba7024e).
// P2pNcclConnector was removed by vLLM PR #44854 (opened 2026-06-08); its
// first release without it is not pinned, so rows from 0.23 leave it out.
var (
	kvConnectorsWithP2p = Facts{
		Names:  []string{"MooncakeConnector", "NixlConnector", "P2pNcclConnector", "LMCacheConnectorV1", "MultiConnector"},
		Source: "vllm/distributed/kv_transfer/kv_connector/factory.py@a4cd9d0d; vLLM PR #24718 (MooncakeConnector)",
	}
	kvConnectors = Facts{
		Names:  []string{"MooncakeConnector", "NixlConnector", "LMCacheConnectorV1", "MultiConnector"},
		Source: "vllm/distributed/kv_transfer/kv_connector/factory.py@a4cd9d0d; P2pNcclConnector removed by vLLM PR #44854",
	}
)

// Table lists the releases, oldest first: from the first release that
// certainly has PD to the newest established. Adding a release is one row
// here and one case in table_test.go.
var Table = []Release{
	{Version: "0.19.0rc1", Date: "2026-04-04", VLLM: "0.19", Source: "release/v0.19.0rc1 branch; rebase to vLLM 0.19.0 in PR #2475",
		Loaders: []Loader{loadStageArgs}, StageArgs: stageArgsRuntime, Validator: pdValidator,
		StageCLI: stageCLIBase, KVConnectors: kvConnectorsWithP2p,
		Notes: "The first release with #2220 for certain; 0.18.0 may carry it too (its docs list a PD page) but its tag could not be dated, so it is left out."},
	{Version: "0.20.0", Date: "2026-05-07", VLLM: "0.20", Source: "NPU RFC #2223 tag list; docs install line vllm==0.20.0",
		Loaders: []Loader{loadStageArgs, loadStages}, StageArgs: stageArgsRuntime, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIBase, KVConnectors: kvConnectorsWithP2p,
		Notes: "The first release with both loaders: a stage_args file under --deploy-config loads zero stages and runs without PD."},
	{Version: "0.21.0rc1", Date: "2026-05-17", VLLM: "0.21", Source: "ai-dynamo/dynamo PR #9669 pins it (2026-05-17)",
		Loaders: []Loader{loadStageArgs, loadStages}, StageArgs: stageArgsRuntime, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIBase, KVConnectors: kvConnectorsWithP2p,
		Notes: "Date is the first pin seen, not the tag. #3569's replica flags may be here; rows leave them out until 0.24.0."},
	{Version: "0.22.0", Date: "2026-06-07", VLLM: "0.22", Source: "README for v0.22.0, PR #4233 (2026-06-07): aligned with vLLM 0.22",
		Loaders: []Loader{loadStageArgs, loadStages}, StageArgs: stageArgsRuntime, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIBase, KVConnectors: kvConnectorsWithP2p},
	{Version: "0.23.0rc1", Date: "2026-07-06", VLLM: "0.23", Source: "ai-dynamo/dynamo PR #11248 moves from it to 0.24.0 (2026-07-06)",
		Loaders: []Loader{loadStageArgs, loadStages}, StageArgs: stageArgsRuntime, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIBase, KVConnectors: kvConnectors,
		Notes: "Released before 2026-07-06; no 0.23.0 final was found. P2pNcclConnector is left out from here (vLLM PR #44854)."},
	{Version: "0.24.0", Date: "2026-07-06", VLLM: "0.24", Source: "README for v0.24.0, PR #5060; v0.24.0 release notes (rebases #4286, #4709)",
		Loaders: []Loader{loadStageArgs, loadStages}, StageArgs: stageArgsRuntime, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIReplicas, KVConnectors: kvConnectors,
		Notes: "--stage-configs-path is deprecated here but still reaches the stage_args loader."},
	{Version: "0.25.0rc1", Date: "2026-07-12", VLLM: "0.25", Source: "GitHub release v0.25.0rc1 @d3c47ef (2026-07-12)",
		Loaders: []Loader{loadStageArgs, loadStages}, StageArgs: stageArgsRuntime, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIReplicas, KVConnectors: kvConnectors},
	{Version: "0.26.0rc1", Date: "2026-07-27", VLLM: "0.26", Source: "v0.26.0rc1 release notes (145 PRs); ai-dynamo/dynamo PR #12773",
		Loaders: []Loader{loadStageArgs, loadStages}, StageArgs: stageArgsRuntime, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIReplicas, KVConnectors: kvConnectors,
		Notes: "The last release that certainly has --stage-configs-path: #5647 removed it on 2026-07-31. The date is an upper bound."},
	{Version: "0.26.0", Date: "2026-08-03", VLLM: "0.26", Source: "README for v0.26.0, PR #5715 (2026-08-03): 0.26.x requires vLLM 0.26.x",
		Loaders: []Loader{loadStages}, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIReplicas, KVConnectors: kvConnectors,
		Notes: "Cut after #5647 (2026-07-31) with 252 changes against rc1's 145, so --stage-configs-path is taken as gone; the stage_args loader has no CLI path."},
	{Version: "0.27.0rc1", Date: "2026-08-11", VLLM: "0.27", Source: "GitHub release v0.27.0rc1 @2ce15ab (2026-08-11), rebased on vLLM 0.27.0",
		Loaders: []Loader{loadStages}, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIReplicas, KVConnectors: kvConnectors},
	{Version: "0.27.0", Date: "", VLLM: "0.27", Source: "NPU RFC #2223 tag list",
		Loaders: []Loader{loadStages}, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIReplicas, KVConnectors: kvConnectors,
		Notes: "Date not established; whether it carries #6200 (the stage_args refusal) is not known, so a stage_args file is neither loaded nor assumed refused."},
	{Version: "0.28.0", Date: "2026-08-31", VLLM: "0.28", Source: "docs for v0.28.0, PR #6858 (2026-08-31): 0.28.x requires vLLM 0.28.x",
		Loaders: []Loader{loadStages}, Deploy: deployLoaderRefusing, Validator: pdValidator,
		StageCLI: stageCLIReplicas, KVConnectors: kvConnectors},
	{Version: "0.29.0rc1", Date: "2026-09-16", VLLM: "0.29", Source: "ai-dynamo/dynamo PR #14702 pins it (2026-09-16)",
		Loaders: []Loader{loadStages}, Deploy: deployLoaderRefusing, Validator: pdValidator,
		StageCLI: stageCLIReplicas, KVConnectors: kvConnectors,
		Notes: "Date is the first pin seen."},
	{Version: "0.30.0", Date: "", VLLM: "0.30", Source: "v0.31.0rc1 release notes count changes since v0.30.0",
		Loaders: []Loader{loadStages}, Deploy: deployLoaderRefusing, Validator: pdValidator,
		StageCLI: stageCLIReplicas, KVConnectors: kvConnectors,
		Notes: "Date not established."},
	{Version: "0.31.0rc1", Date: "", VLLM: "0.31", Source: "v0.31.0rc1 release notes (110 changes since v0.30.0)",
		Loaders: []Loader{loadStages}, Deploy: deployLoaderRefusing, Validator: pdValidator,
		StageCLI: stageCLIReplicas, KVConnectors: kvConnectors,
		Notes: "Date not established."},
	{Version: "0.32.0", Date: "", VLLM: "0.32", Source: "v0.32.0 release notes: requires vLLM 0.32.0, Python >=3.11,<3.14 (branch release/v0.32.0)",
		Loaders: []Loader{loadStages}, Deploy: deployLoaderRefusing, Validator: pdValidator,
		StageCLI: stageCLIReplicas, KVConnectors: kvConnectors,
		Notes: "The newest release established. Date not established. docs/features/pd_disaggregation.md@832c1056 says the stages schema cannot express Qwen3-Omni's PD split yet."},
}
