# The prefill-decode pipeline planned by omni_pd_pipeline for vllm-omni 0.26.0:
# qwen3_omni_moe_thinker_only's stages, the thinker split into prefill
# (stage 0) and decode (stage 1). Every process imports this module before
# vllm-omni's CLI resolves the deploy config's pipeline:, which names it; it
# registers under its own name, the plan's hash of this text. The PD flags
# are in extras, which vllm-omni writes at the top level of each stage's
# config, where its PD detection reads them.
from vllm_omni.config.pipeline_registry import register_pipeline
from vllm_omni.config.stage_config import PipelineConfig, StageExecutionType, StagePipelineConfig

register_pipeline(
    PipelineConfig(
        model_type=__name__,
        model_arch="Qwen3OmniMoeForConditionalGeneration",
        stages=(
            StagePipelineConfig(
                stage_id=0,
                model_stage="thinker",
                execution_type=StageExecutionType.LLM_AR,
                input_sources=(),
                final_output=False,
                final_output_type=None,
                owns_tokenizer=True,
                requires_multimodal_data=True,
                hf_config_name="thinker_config",
                engine_output_type="latent",
                sampling_constraints={"detokenize": True},
                extras={"is_prefill_only": True},
            ),
            StagePipelineConfig(
                stage_id=1,
                model_stage="thinker",
                execution_type=StageExecutionType.LLM_AR,
                input_sources=(0,),
                final_output=True,
                final_output_type="text",
                owns_tokenizer=True,
                requires_multimodal_data=True,
                hf_config_name="thinker_config",
                engine_output_type="latent",
                sampling_constraints={"detokenize": True},
                extras={"is_decode_only": True},
            ),
        ),
    )
)
