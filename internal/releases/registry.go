package releases

// The pipeline registry: how a release's `stages` dialect takes a pipeline
// that is not built in, and what a registration the plan writes for it
// holds. Releases that load only that dialect run PD only through a
// registered pipeline whose stages carry the PD flags, and none registers
// one; the plan writes that registration and each process imports it
// before vllm-omni's CLI resolves the deploy config's `pipeline:`.

// Registry is a release's pipeline registry, as the units' launcher and
// the registration the plan writes use it.
type Registry struct {
	// Module holds Register and Table: register_pipeline(pipeline,
	// model_type=None) stores a PipelineConfig under model_type, or the
	// config's own model_type, in the plain dict Table, whatever its
	// validate() says (it only logs), and raises only for a resolver
	// function without model_type.
	Module, Register, Table string
	// Signature is Register's, as the release defines it.
	Signature string
	// TypesModule defines the frozen dataclasses a registration builds and
	// the stage execution enum; StageFields are StageType's fields, in
	// order, the only keywords it takes.
	TypesModule                            string
	PipelineType, StageType, ExecutionType string
	StageFields                            []string
	// PDFlags is the StagePipelineConfig field the PD flags travel in: the
	// release copies its keys to the top level of each stage's config,
	// where PD detection reads is_prefill_only and is_decode_only. Flags
	// written on a deploy file's stage land in its engine arguments, which
	// PD detection never reads.
	PDFlags string
	// CLIMain is the module whose main(), reading sys.argv[1:], is the
	// `vllm-omni` script: the head and a headless stage resolve the deploy
	// config's `pipeline:` in that process, before any plugin loads, so a
	// registration imported first in the same process is the one that
	// works.
	CLIMain string
	// Pipelines are the release's own pipeline definitions a registration
	// may be written from, by key.
	Pipelines []PipelineDef
	Source    string
}

// PipelineDef is one of a release's pipelines as its Python defines it:
// what each stage of a registration written from it takes, by the stage's
// model_stage. The plan gives the topology (ids, inputs, final output, the
// PD flags); the definition the rest.
type PipelineDef struct {
	Key       string // the pipeline's key among the release's own
	ModelArch string
	Stages    []StageDef
	Source    string
}

// StageDef is one stage of a PipelineDef: the StagePipelineConfig fields
// a registration copies from the release's own stage.
type StageDef struct {
	ModelStage    string
	ExecutionType string // a member of Registry.ExecutionType: LLM_AR, LLM_GENERATION, DIFFUSION
	// FinalOutputType is written on the stage when it is the pipeline's
	// final output.
	FinalOutputType        string
	OwnsTokenizer          bool
	RequiresMultimodalData bool
	HFConfigName           string
	EngineOutputType       string
	// SamplingConstraints are the pipeline's sampling constraints for the
	// stage (bool values only).
	SamplingConstraints map[string]bool
}

// Definition is the release's definition of pipeline key, if a
// registration may be written from it.
func (g *Registry) Definition(key string) (PipelineDef, bool) {
	if g == nil {
		return PipelineDef{}, false
	}
	for _, p := range g.Pipelines {
		if p.Key == key {
			return p, true
		}
	}
	return PipelineDef{}, false
}

// Stage is the definition's stage of a model_stage.
func (p PipelineDef) Stage(modelStage string) (StageDef, bool) {
	for _, s := range p.Stages {
		if s.ModelStage == modelStage {
			return s, true
		}
	}
	return StageDef{}, false
}

// WritesRegistration reports whether a PD plan for the release writes its
// own pipeline registration: the release has a registry and loads only
// the stages dialect, where PD runs only through a registered pipeline.
func (r Release) WritesRegistration() bool {
	return r.Registry != nil && r.Reads(Stages) && !r.Reads(StageArgs)
}

// MergesPDEmbeddings reports whether an input processor of the release
// hands the stages after the PD pair (a talker) prefill's and decode's
// embeddings together. Without one, PD runs the thinker alone, text out.
func (r Release) MergesPDEmbeddings() bool { return len(r.MergedPDEmbeddings.Names) > 0 }

// The registry's API and the dataclasses it takes. register_pipeline came
// with #3760 (465f1464, 2026-06-23), so from 0.24.0; its signature, the
// fields of StagePipelineConfig (but retains_state_across_chunks, from
// 2ce15ab7) and the extras route are the same at every commit read from
// d4a869fe to 10906e3a, and at bd4f9acf (fhfuih/vllm-omni, 2026-08-22).
const (
	registrySignature = "register_pipeline(pipeline: PipelineConfig | PipelineResolverFunc, model_type: str | None = None)"
	registryUse       = "register_pipeline stores under model_type or the config's own, logs what PipelineConfig.validate() finds and stores it anyway (pipeline_registry.py@2ce15ab7 :172-191, @10906e3a :192-211); " +
		"_build_extras copies StagePipelineConfig.extras into the stage's extras and StageConfig.to_omegaconf() writes them at the stage config's top level, where detect_pd_separation_from_stage_configs reads the flags (stage_config.py@2ce15ab7 :897-898, :1075; @10906e3a :877-878, :1055; entrypoints/pd_utils.py@2ce15ab7 :52-84); " +
		"a deploy stage's other keys go to engine_args (stage_config.py@2ce15ab7 :863), which PD detection never reads; " +
		"the head (engine/async_omni_engine.py@2ce15ab7 :223, :1215) and run_headless (entrypoints/cli/serve.py@2ce15ab7 :940, before prepare_engine_environment() loads plugins at :964) resolve pipeline: in the process entrypoints/cli/main.py main() runs in (pyproject.toml@2ce15ab7 :141-142); " +
		"an unregistered key is a KeyError (config/config_factory.py@2ce15ab7 :290-294, @10906e3a :328-332); the orchestrator hands a request from stage s to s+1 (engine/orchestrator.py@2ce15ab7 :1869), so the pair's ids are adjacent"
)

var stageFields = []string{"stage_id", "model_stage", "execution_type", "input_sources", "final_output", "final_output_type",
	"owns_tokenizer", "requires_multimodal_data", "hf_config_name", "engine_output_type", "model_arch", "sampling_constraints",
	"custom_process_input_func", "custom_process_next_stage_input_func", "async_chunk_process_next_stage_input_func",
	"sync_process_input_func", "prompt_expand_func", "cfg_kv_collect_func", "omni_kv_config", "scheduler_cls",
	"model_subdir", "tokenizer_subdir", "extras"}

// registryAt is the registry as read at one commit: where register_pipeline
// and the dataclasses are, the fields StagePipelineConfig has there, and
// the pipelines a registration may be written from.
func registryAt(where string, fields []string, pipelines ...PipelineDef) *Registry {
	return &Registry{
		Module: "vllm_omni.config.pipeline_registry", Register: "register_pipeline", Table: "OMNI_PIPELINES",
		Signature:   registrySignature,
		TypesModule: "vllm_omni.config.stage_config", PipelineType: "PipelineConfig", StageType: "StagePipelineConfig", ExecutionType: "StageExecutionType",
		StageFields: fields,
		PDFlags:     "extras",
		CLIMain:     "vllm_omni.entrypoints.cli.main",
		Pipelines:   pipelines,
		Source:      "vllm_omni/config/pipeline_registry.py and stage_config.py@" + where + "; " + registryUse,
	}
}

// withRetainedState is StagePipelineConfig's fields from 2ce15ab7, which
// added retains_state_across_chunks after model_arch.
var withRetainedState = func() []string {
	out := append([]string{}, stageFields[:11]...)
	out = append(out, "retains_state_across_chunks")
	return append(out, stageFields[11:]...)
}()

// qwen3ThinkerOnly is vllm-omni's thinker-only Qwen3-Omni pipeline
// (QWEN3_OMNI_THINKER_ONLY_PIPELINE in
// vllm_omni/model_executor/models/qwen3_omni/pipeline.py), whose thinker
// the PD pair splits. Its engine_output_type was "latent" to 0.26.0rc1 and
// is "text" from 0.27.0rc1.
func qwen3ThinkerOnly(where, engineOutput string) PipelineDef {
	return PipelineDef{Key: "qwen3_omni_moe_thinker_only", ModelArch: "Qwen3OmniMoeForConditionalGeneration",
		Stages: []StageDef{{ModelStage: "thinker", ExecutionType: "LLM_AR", FinalOutputType: "text",
			OwnsTokenizer: true, RequiresMultimodalData: true, HFConfigName: "thinker_config", EngineOutputType: engineOutput,
			SamplingConstraints: map[string]bool{"detokenize": true}}},
		Source: "vllm_omni/model_executor/models/qwen3_omni/pipeline.py@" + where}
}

var (
	registry0240 = registryAt("d4a869fe :132 (register_pipeline), :824 (extras)", stageFields,
		qwen3ThinkerOnly("d4a869fe :71-89", "latent"))
	registry0250 = registryAt("d3c47efc :140, :826", stageFields, qwen3ThinkerOnly("d3c47efc :76-94", "latent"))
	registry0260 = registryAt("cbab1d4d :156, :880-881", stageFields, qwen3ThinkerOnly("cbab1d4d :77-95", "latent"))
	registry0270 = registryAt("2ce15ab7 :172, :897-898", withRetainedState, qwen3ThinkerOnly("2ce15ab7 :77-95", "text"))
	// Main at 10906e3a, which the rows after the history read carry; the
	// same at bd4f9acf.
	registryMain = registryAt("10906e3a :192, :877-878 (the same at bd4f9acf)", withRetainedState,
		qwen3ThinkerOnly("10906e3a :77-95 (the same at bd4f9acf)", "text"))
)

// Which input processors merge prefill's and decode's embeddings for the
// talker: Qwen3-Omni's thinker2talker calls _merge_pd_embeddings from
// 7f2b1e93; #4986 (9a44e7e0, 2026-07-10) removed thinker2talker, and from
// 0.25.0rc1 _merge_pd_embeddings is defined and called by nothing.
func mergedAt(where string) Facts {
	return Facts{Names: []string{qwen3Processors + ".thinker2talker"},
		Source: "vllm_omni/model_executor/stage_input_processors/qwen3_omni.py@" + where + " thinker2talker calls _merge_pd_embeddings"}
}

func mergedNone(where string) Facts {
	return Facts{Source: "vllm_omni/model_executor/stage_input_processors/qwen3_omni.py@" + where + " defines _merge_pd_embeddings and nothing calls it (#4986, 9a44e7e0, removed thinker2talker)"}
}
