package releases

// The facts below were read from vllm-project/vllm-omni's main history (its
// squash merges, to 2026-08-20) and vllm-project/vllm source, at the
// commits named, and from the merged pull requests whose numbers and dates
// are given. Each release is read at the main commit it sits on (Commit):
// a release candidate at its "Rebase to vLLM X" commit, 0.24.0 at main's
// last commit before its tag. Which release carries a change is decided by
// ancestry (git merge-base --is-ancestor), not by dates. A release cut
// after that history, or from a branch whose commit is not on main, has no
// Commit: its row carries forward the facts of the newest release read and
// says so in Unread, and a plan for it warns.

import (
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/kvconnector"
)

// Loaders.
var (
	// PD arrived in the stage_args dialect (#2220), read by the legacy
	// loader (load_stage_configs_from_yaml in entrypoints/utils.py) that
	// only --stage-configs-path reaches; serve.py has the flag to
	// 0.26.0rc1 (@cbab1d4d :245, marked deprecated) and not from
	// 0.27.0rc1 (7a2007cc, #5647).
	loadStageArgs = Loader{Dialect: StageArgs, Flag: FlagStageConfigsPath,
		Source: "vllm_omni/entrypoints/cli/serve.py@d4a869fe :244; vllm_omni/entrypoints/utils.py@d4a869fe load_stage_configs_from_yaml :367"}
	// The stages dialect and --deploy-config came with #2383 (a3903810,
	// 2026-04-19), so from 0.20.0.
	loadStages = Loader{Dialect: Stages, Flag: FlagDeployConfig,
		Source: "vllm_omni/entrypoints/cli/serve.py@7f2b1e93 :165 (--deploy-config, exclusive with --stage-configs-path); PR #2383"}
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
		Source: "vllm_omni/engine/stage_init_utils.py@d4a869fe :377-381 (the same at every release read) reads custom_process_input_func only, with getattr and no default; " +
			"sync_process_input_func is a field of the Python pipeline definitions (vllm_omni/model_executor/models/qwen3_omni/pipeline.py@d4a869fe :48) " +
			"that _select_processor_funcs in vllm_omni/config/stage_config.py@d4a869fe :727-735 uses when async_chunk is off; " +
			"its _token_only functions do not merge prefill's and decode's embeddings, and the same module's function without the " +
			"suffix is the one stage_args PD configs name (qwen3_omni_moe_pd_separation.yaml@b9f6fd40)",
	}, {
		Key: []string{"runtime", "max_batch_size"}, ReadAs: []string{"engine_args", "max_num_seqs"},
		Source: "PR #1851 (merged 2026-03-12, before PD) removed the copy of runtime.max_batch_size into engine_args.max_num_seqs " +
			"from load_stage_configs_from_yaml; the stage workers read engine_args.max_num_seqs",
	}},
	GenericPD: true,
	Source: "vllm_omni/entrypoints/pd_utils.py@f92d84fc detect_pd_separation_from_stage_configs :52-84 (@7f2b1e93 :54-86): a stage is prefill or decode by its own " +
		"is_prefill_only / is_decode_only, paired when decode lists prefill in engine_input_source; no registration",
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
	// #6200 (baba7d1e, 2026-08-16) removed the stage_args loader;
	// load_deploy_config refuses the schema from then on.
	deployLoaderRefusing = &DeployLoader{
		AsyncChunkDefault: true,
		RefusesStageArgs:  true,
		Source: "vllm_omni/config/stage_config.py@001275f2 load_deploy_config raises on stage_args (PR #6200, baba7d1e, 2026-08-16); " +
			"async_chunk defaults to true; unregistered pipeline: KeyError (config_factory.py@0027c20a)",
	}
)

// The PD validator: OmniBase._init_pd_state → _validate_pd_separation_config
// in vllm_omni/entrypoints/pd_utils.py, the same file from f92d84fc to
// 10906e3a. Equal tensor_parallel_size is demanded for every connector,
// NIXL included. Requests always enter at stage 0, and the sync path
// forces max_tokens=1 only when the prefill stage is stage 0
// (_seed_is_prefill), so the prefill must be the entry stage.
var pdValidator = Validator{
	Checks: []string{CheckOnePair, CheckKVConfigPresent, CheckRoles, CheckDecodeReadsPrefill,
		CheckSameConnector, CheckBuffers, CheckEqualTP, CheckPrefillEntry},
	Source: "vllm_omni/entrypoints/pd_utils.py@f92d84fc _validate_pd_separation_config :124-174 (@7f2b1e93 :126-176), " +
		"called by entrypoints/omni_base.py _init_pd_state (@7f2b1e93 :189, @d4a869fe :213); requests enter at stage 0",
}

// Stage-based launch flags. --headless is vLLM's own flag; run_headless
// demands the multi_process worker backend. At 0.19.0rc1 --stage-id and
// the master flags are validated and read nowhere, and run_headless always
// raises: the stage-based launch works from cb91cbe6 (#2020, 2026-04-10),
// so from 0.20.0. --omni-replica-address and --omni-dp-size-local came
// with e277feac (#3569, 2026-05-19): from 0.22.0.
var (
	stageCLIBase = Facts{
		Names:  []string{FlagStageID, FlagHeadless, FlagOmniMasterAddress, FlagOmniMasterPort},
		Source: "vllm_omni/entrypoints/cli/serve.py@7f2b1e93 :185, :239, :245 (run_headless :504 needs multi_process :541) and @eb4e60ee; --headless from vLLM's serve parser",
	}
	stageCLIReplicas = Facts{
		Names:  []string{FlagStageID, FlagHeadless, FlagOmniMasterAddress, FlagOmniMasterPort, FlagOmniReplicaAddr, FlagOmniDPSizeLocal},
		Source: "vllm_omni/entrypoints/cli/serve.py@f92d84fc :243, :307, :313, :319, :333 (validate() :106-121) to @2ce15ab7 :292-382; e277feac (#3569) added the replica flags",
	}
)

// kvConnectorsOn lists the KV connectors vLLM line vllm can load: every
// entry of kvconnector.Entries its factory still has, and MultiConnector.
// The entries carry where each was read.
func kvConnectorsOn(vllm string) Facts {
	f := Facts{Source: "vllm/distributed/kv_transfer/kv_connector/factory.py@a4cd9d0d"}
	for _, e := range kvconnector.Entries {
		if e.GoneInVLLM != "" && !lineBefore(MustVersion(vllm), MustVersion(e.GoneInVLLM)) {
			f.Source += "; " + e.Name + " removed by " + e.GoneBy
			continue
		}
		f.Names = append(f.Names, e.Name)
	}
	f.Names = append(f.Names, kvconnector.Multi)
	return f
}

// passing are the KV connectors whose request_finished returns
// remote_request_id, from the entries' facts.
func passing() Facts {
	f := Facts{Names: kvconnector.Passing()}
	var sources []string
	for _, e := range kvconnector.Entries {
		sources = append(sources, e.Name+": "+e.HandoffSource)
	}
	f.Source = "vLLM " + strings.Join(sources, "; ")
	return f
}

// Each row's KV connectors follow from its vLLM line and the entries.
func init() {
	for i := range Table {
		Table[i].KVConnectors = kvConnectorsOn(Table[i].VLLM)
	}
}

// gateAt is the KV handoff gate as read at one commit. From a5a4998e
// (2026-04-17) the orchestrator's _build_pd_decode_params raises for every
// PD request whose prefill kv_transfer_params lack remote_request_id; its
// body is the same at every release read. Which of vLLM's connectors
// (vllm/distributed/kv_transfer/kv_connector/v1/, request_finished) return
// the key is each kvconnector entry's ReturnsRequestID.
func gateAt(where string) HandoffGate {
	return HandoffGate{Required: true,
		Passing: passing(),
		Source:  "vllm_omni/engine/orchestrator.py@" + where + " _build_pd_decode_params"}
}

// Per-stage runtime.env. #3235 (28387341, 2026-05-27) added it: a
// whole-pipeline process sets each stage's variables in os.environ, under
// a launch lock, while that stage's engine core starts, then restores
// them, so each engine sees its own. #3855 (64a5bb92, 2026-06-17) removed
// the callers; #6214 (09b6a160, 2026-08-15) put them back, after
// 0.27.0rc1. run_headless applies no runtime.env at any commit read,
// 10906e3a included.
var stageEnvUnknown = StageEnvFact{Source: "no per-stage runtime.env before #3235 (28387341, 2026-05-27): the stage config has no env key"}

func stageEnvApplied(where string) StageEnvFact {
	return StageEnvFact{Applied: true, Source: "vllm_omni/engine/async_omni_engine.py@" + where + " stage_runtime_setup around each stage's engine-core spawn"}
}

func stageEnvDropped(where string) StageEnvFact {
	return StageEnvFact{Source: "vllm_omni/engine/stage_init_utils.py@" + where + " stage_runtime_setup has no caller (#3855, 64a5bb92, removed them; #6214 restores them after 0.27.0rc1)"}
}

// Input processors, as each release's stage_input_processors modules
// define them (public functions only). The stage_args stage init imports
// custom_process_input_func with getattr and no default, so a function
// that is gone fails the stage at start. qwen3_omni's thinker2talker (which
// merges prefill's and decode's embeddings through _merge_pd_embeddings,
// from 7f2b1e93) and talker2code2wav were removed by #4986 (9a44e7e0,
// 2026-07-10); qwen2_5_omni's by #4531 (e9d49317, 2026-06-29).
// qwen2_5_omni's thinker2talker never merges PD embeddings.
const (
	qwen3Processors  = "vllm_omni.model_executor.stage_input_processors.qwen3_omni"
	qwen25Processors = "vllm_omni.model_executor.stage_input_processors.qwen2_5_omni"
)

func processorsAt(where string, qwen3, qwen25 []string) ProcessorFacts {
	return ProcessorFacts{Modules: map[string][]string{qwen3Processors: qwen3, qwen25Processors: qwen25},
		Source: "vllm_omni/model_executor/stage_input_processors/qwen3_omni.py and qwen2_5_omni.py@" + where}
}

var (
	qwen3Sync     = []string{"thinker2talker", "talker2code2wav", "thinker2talker_async_chunk", "talker2code2wav_async_chunk"}
	qwen3Payload  = []string{"thinker2talker", "talker2code2wav", "thinker2talker_async_chunk", "talker2code2wav_async_chunk", "thinker2talker_full_payload", "thinker2talker_token_only", "talker2code2wav_full_payload"}
	qwen3NoPD     = []string{"thinker2talker_async_chunk", "talker2code2wav_async_chunk", "thinker2talker_full_payload", "thinker2talker_token_only", "talker2code2wav_full_payload"}
	qwen25Thinker = []string{"thinker2talker"}
	qwen25Both    = []string{"thinker2talker", "talker2code2wav"}
	qwen25Payload = []string{"thinker2talker", "talker2code2wav", "thinker2talker_token_only", "thinker2talker_full_payload", "talker2code2wav_token_only", "talker2code2wav_full_payload"}
	qwen25NoPlain = []string{"thinker2talker_token_only", "thinker2talker_full_payload", "talker2code2wav_token_only", "talker2code2wav_full_payload"}
)

const (
	qwen3Removed  = "; thinker2talker and talker2code2wav removed from qwen3_omni by #4986 (9a44e7e0)"
	qwen25Removed = "; thinker2talker and talker2code2wav removed from qwen2_5_omni by #4531 (e9d49317)"
)

// Keys the stage_args stage init reads with no default: before #5199 only
// stage_id and engine_args. #5199 (fb4dd41d, 2026-07-22) dropped the
// others' defaults; #5498 (4956a41f, 2026-07-31, after 0.26.0rc1) gave
// engine_input_source one back.
var (
	requiredKeysNone = Facts{Source: "vllm_omni/engine/stage_init_utils.py@d4a869fe extract_stage_metadata :351-371 defaults every key but stage_id and engine_args"}
	requiredKeys0260 = Facts{Names: []string{"runtime", "engine_input_source", "final_output", "final_output_type", "is_comprehension"},
		Source: "vllm_omni/engine/stage_init_utils.py@cbab1d4d extract_legacy_stage_metadata :374-377, is_comprehension :421 (#5199)"}
	requiredKeys0270 = Facts{Names: []string{"runtime", "final_output", "final_output_type", "is_comprehension"},
		Source: "vllm_omni/engine/stage_init_utils.py@2ce15ab7 extract_legacy_stage_metadata :391-394, :438 (#5498 restored engine_input_source's default)"}
)

// unreadAfter is the Unread note of a release cut after the history read.
const unreadAfter = "it was cut after 2026-08-20, the end of the upstream history the table was read from, so the row carries the facts of the newest code read (main at 10906e3a), and runtime.env as 0.27.0rc1 (2ce15ab7) treats it"

// Table lists the releases, oldest first: from the first release that
// runs PD to the newest established. Adding a release is one row here, its
// line in table_test.go's rowFacts, and `make docs` to regenerate the
// release guide, which states the range. Nothing else names the newest
// release: code and tests that mean it, or a version past it, ask Newest,
// NewestFinal or Beyond, and the README and the docs index point at the
// guide (internal/provider/docs_releases_test.go holds them to that).
//
// 0.19.0rc1 (2804a85e) is left out: its stage configs take
// is_prefill_only / is_decode_only, but PD is not wired in there.
// entrypoints/pd_utils.py exists and no module imports it, the
// orchestrator has no PD code and run_headless always raises, so the
// stages run as a plain pipeline. A plan for it is refused as older than
// the first release with PD.
var Table = []Release{
	{Version: "0.20.0", Date: "2026-05-07", VLLM: "0.20", Source: "NPU RFC #2223 tag list; docs install line vllm==0.20.0",
		Commit:  "7f2b1e93",
		Loaders: []Loader{loadStageArgs, loadStages}, StageArgs: stageArgsRuntime, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIBase, Handoff: gateAt("7f2b1e93 :541, raise :553-556"),
		StageEnv: stageEnvUnknown, Processors: processorsAt("7f2b1e93", qwen3Sync, qwen25Thinker), RequiredStageKeys: requiredKeysNone,
		MergedPDEmbeddings: mergedAt("7f2b1e93 :447"),
		Notes:              "The first release with PD and both loaders: a stage_args file under --deploy-config loads zero stages and runs without PD. Input processors still take the stage list: (stage_list, engine_input_source, prompt, requires_multimodal_data)."},
	{Version: "0.21.0rc1", Date: "2026-05-17", VLLM: "0.21", Source: "ai-dynamo/dynamo PR #9669 pins it (2026-05-17); rebase to vLLM 0.21.0 in PR #3530",
		Commit:  "eb4e60ee",
		Loaders: []Loader{loadStageArgs, loadStages}, StageArgs: stageArgsRuntime, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIBase, Handoff: gateAt("eb4e60ee :749, raise :761-764"),
		StageEnv: stageEnvUnknown, Processors: processorsAt("eb4e60ee", qwen3Payload, qwen25Both), RequiredStageKeys: requiredKeysNone,
		MergedPDEmbeddings: mergedAt("eb4e60ee :602"),
		Notes:              "Date is the first pin seen, not the tag. From here input processors are called as (source_outputs, prompt, requires_multimodal_data[, streaming_context])."},
	{Version: "0.22.0", Date: "2026-06-07", VLLM: "0.22", Source: "README for v0.22.0, PR #4233 (2026-06-07): aligned with vLLM 0.22",
		Commit:  "f92d84fc",
		Loaders: []Loader{loadStageArgs, loadStages}, StageArgs: stageArgsRuntime, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIReplicas, Handoff: gateAt("f92d84fc :876, raise :888-891"),
		StageEnv: stageEnvApplied("f92d84fc :879 (LLM) and :1024 (diffusion)"), Processors: processorsAt("f92d84fc", qwen3Payload, qwen25Payload), RequiredStageKeys: requiredKeysNone,
		MergedPDEmbeddings: mergedAt("f92d84fc :680")},
	{Version: "0.23.0rc1", Date: "2026-07-06", VLLM: "0.23", Source: "ai-dynamo/dynamo PR #11248 moves from it to 0.24.0 (2026-07-06); rebase to vLLM 0.23.0 in PR #4286",
		Commit:  "7b837944",
		Loaders: []Loader{loadStageArgs, loadStages}, StageArgs: stageArgsRuntime, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIReplicas, Handoff: gateAt("7b837944 :1032, raise :1044-1047"),
		StageEnv: stageEnvApplied("7b837944 :882 (LLM) and :1027 (diffusion)"), Processors: processorsAt("7b837944", qwen3Payload, qwen25Payload), RequiredStageKeys: requiredKeysNone,
		MergedPDEmbeddings: mergedAt("7b837944 :681"),
		Notes:              "Released before 2026-07-06; no 0.23.0 final was found. It sits before #3855 (64a5bb92), so it still applies runtime.env. P2pNcclConnector is left out from here (vLLM PR #44854)."},
	{Version: "0.24.0", Date: "2026-07-06", VLLM: "0.24", Source: "README for v0.24.0, PR #5060; v0.24.0 release notes (rebases #4286, #4709)",
		Commit:  "d4a869fe",
		Loaders: []Loader{loadStageArgs, loadStages}, StageArgs: stageArgsRuntime, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIReplicas, Handoff: gateAt("d4a869fe :1098, raise :1110-1113"),
		StageEnv: stageEnvDropped("d4a869fe :628"), Processors: processorsAt("d4a869fe"+qwen25Removed, qwen3Payload, qwen25NoPlain), RequiredStageKeys: requiredKeysNone,
		Registry: registry0240, MergedPDEmbeddings: mergedAt("d4a869fe :681"),
		Notes: "Read at d4a869fe, main's last commit before the tag (rc1 sits on a560ed18). --stage-configs-path is deprecated here but still reaches the stage_args loader."},
	{Version: "0.25.0rc1", Date: "2026-07-12", VLLM: "0.25", Source: "GitHub release v0.25.0rc1 @d3c47ef (2026-07-12)",
		Commit:  "d3c47efc",
		Loaders: []Loader{loadStageArgs, loadStages}, StageArgs: stageArgsRuntime, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIReplicas, Handoff: gateAt("d3c47efc :1098, raise :1110-1113"),
		StageEnv: stageEnvDropped("d3c47efc :628"), Processors: processorsAt("d3c47efc"+qwen3Removed, qwen3NoPD, qwen25NoPlain), RequiredStageKeys: requiredKeysNone,
		Registry: registry0250, MergedPDEmbeddings: mergedNone("d3c47efc :194"),
		Notes: "No input processor here merges prefill's and decode's embeddings for Qwen3-Omni's talker, so the qwen3_omni_moe preset does not run PD here (the thinker-only one, with no processor, does)."},
	{Version: "0.26.0rc1", Date: "2026-07-27", VLLM: "0.26", Source: "v0.26.0rc1 release notes (145 PRs); ai-dynamo/dynamo PR #12773",
		Commit:  "cbab1d4d",
		Loaders: []Loader{loadStageArgs, loadStages}, StageArgs: stageArgsRuntime, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIReplicas, Handoff: gateAt("cbab1d4d :1604, raise :1616-1619"),
		StageEnv: stageEnvDropped("cbab1d4d :696"), Processors: processorsAt("cbab1d4d"+qwen3Removed, qwen3NoPD, qwen25NoPlain), RequiredStageKeys: requiredKeys0260,
		Registry: registry0260, MergedPDEmbeddings: mergedNone("cbab1d4d :196"),
		Notes: "The last release with --stage-configs-path (#5647, 7a2007cc, removed it on main 2026-08-03). Its stage init reads five stage keys with no default, which a plan writes on every stage."},
	{Version: "0.26.0", Date: "2026-08-03", VLLM: "0.26", Source: "README for v0.26.0, PR #5715 (30cba842, 2026-08-04): 0.26.x requires vLLM 0.26.x",
		Unread:  "it was cut from a release branch whose commit is not in main's history, so the row carries 0.26.0rc1's (cbab1d4d) run-time facts and takes --stage-configs-path as gone, as on main from 7a2007cc (2026-08-03).",
		Loaders: []Loader{loadStages}, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIReplicas, Handoff: gateAt("cbab1d4d :1604, raise :1616-1619"),
		StageEnv: stageEnvDropped("cbab1d4d :696"), Processors: processorsAt("cbab1d4d"+qwen3Removed, qwen3NoPD, qwen25NoPlain), RequiredStageKeys: requiredKeys0260,
		Registry: registry0260, MergedPDEmbeddings: mergedNone("cbab1d4d :196"),
		Notes: "Cut after #5647 with 252 changes against rc1's 145, so --stage-configs-path is taken as gone; the stage_args loader has no CLI path."},
	{Version: "0.27.0rc1", Date: "2026-08-11", VLLM: "0.27", Source: "GitHub release v0.27.0rc1 @2ce15ab (2026-08-11), rebased on vLLM 0.27.0",
		Commit:  "2ce15ab7",
		Loaders: []Loader{loadStages}, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIReplicas, Handoff: gateAt("2ce15ab7 :1750, raise :1762-1765"),
		StageEnv: stageEnvDropped("2ce15ab7 :713"), Processors: processorsAt("2ce15ab7"+qwen3Removed, qwen3NoPD, qwen25NoPlain), RequiredStageKeys: requiredKeys0270,
		Registry: registry0270, MergedPDEmbeddings: mergedNone("2ce15ab7 :196"),
		Notes: "serve.py has no --stage-configs-path (7a2007cc); the deploy loader does not yet refuse stage_args (#6200 came after)."},
	{Version: "0.27.0", Date: "", VLLM: "0.27", Source: "NPU RFC #2223 tag list",
		Unread:  "it was cut after 2026-08-20, the end of the upstream history the table was read from, so the row carries 0.27.0rc1's (2ce15ab7) facts; whether it carries #6200 (the stage_args refusal) is not known, so a stage_args file is neither loaded nor assumed refused.",
		Loaders: []Loader{loadStages}, Deploy: deployLoader, Validator: pdValidator,
		StageCLI: stageCLIReplicas, Handoff: gateAt("2ce15ab7 :1750, raise :1762-1765"),
		StageEnv: stageEnvDropped("2ce15ab7 :713"), Processors: processorsAt("2ce15ab7"+qwen3Removed, qwen3NoPD, qwen25NoPlain), RequiredStageKeys: requiredKeys0270,
		Registry: registry0270, MergedPDEmbeddings: mergedNone("2ce15ab7 :196"),
		Notes: "Date not established."},
	unreadRow("0.28.0", "2026-08-31", "docs for v0.28.0, PR #6858 (2026-08-31): 0.28.x requires vLLM 0.28.x", ""),
	unreadRow("0.29.0rc1", "2026-09-16", "ai-dynamo/dynamo PR #14702 pins it (2026-09-16)", "Date is the first pin seen."),
	unreadRow("0.30.0", "", "v0.31.0rc1 release notes count changes since v0.30.0", "Date not established."),
	unreadRow("0.31.0rc1", "", "v0.31.0rc1 release notes (110 changes since v0.30.0)", "Date not established."),
	unreadRow("0.32.0", "", "v0.32.0 release notes: requires vLLM 0.32.0, Python >=3.11,<3.14 (branch release/v0.32.0)",
		"Date not established. docs/features/pd_disaggregation.md@832c1056 says the stages schema cannot express Qwen3-Omni's PD split yet."),
}

// unreadRow is a release after the history read: the stages loader only,
// refusing stage_args (#6200 was on main before these releases), with the
// run-time facts of the newest code read carried forward. #6214 restored
// runtime.env on main before them, but that is not assumed: vllm-omni
// #6865 reports values still not reaching the workers, and the
// stage-based launch carries every variable either way.
func unreadRow(version, date, source, notes string) Release {
	return Release{Version: version, Date: date, VLLM: MustVersion(version).Line(), Source: source,
		Unread:  unreadAfter + ".",
		Loaders: []Loader{loadStages}, Deploy: deployLoaderRefusing, Validator: pdValidator,
		StageCLI: stageCLIReplicas, Handoff: gateAt("10906e3a :1780, raise :1792-1795 (main, 2026-08-20)"),
		StageEnv: stageEnvDropped("2ce15ab7 :713"), Processors: processorsAt("10906e3a"+qwen3Removed, qwen3NoPD, qwen25NoPlain), RequiredStageKeys: requiredKeys0270,
		Registry: registryMain, MergedPDEmbeddings: mergedNone("10906e3a :196"),
		Notes: notes}
}
