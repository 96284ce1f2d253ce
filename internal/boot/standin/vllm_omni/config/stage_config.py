# Stand-in for vllm_omni.config.stage_config: the dataclasses a pipeline
# registration builds, with the fields and defaults the release table
# records (internal/releases/registry.go, StageFields), frozen as the
# release's are, so a registration that names a field the release lacks
# fails here as it would there. The project's own code.
import enum
from dataclasses import dataclass, field
from typing import Any, Callable, Optional


class StageExecutionType(str, enum.Enum):
    LLM_AR = "llm_ar"
    LLM_GENERATION = "llm_generation"
    DIFFUSION = "diffusion"


@dataclass(frozen=True)
class StagePipelineConfig:
    stage_id: int
    model_stage: str
    execution_type: StageExecutionType = StageExecutionType.LLM_AR
    input_sources: tuple = ()
    final_output: bool = False
    final_output_type: Optional[str] = None
    owns_tokenizer: bool = False
    requires_multimodal_data: bool = False
    hf_config_name: Optional[str] = None
    engine_output_type: Optional[str] = None
    model_arch: Optional[str] = None
    retains_state_across_chunks: bool = False
    sampling_constraints: dict = field(default_factory=dict)
    custom_process_input_func: Optional[str] = None
    custom_process_next_stage_input_func: Optional[str] = None
    async_chunk_process_next_stage_input_func: Optional[str] = None
    sync_process_input_func: Optional[str] = None
    prompt_expand_func: Optional[str] = None
    cfg_kv_collect_func: Optional[str] = None
    omni_kv_config: Optional[dict] = None
    scheduler_cls: Optional[str] = None
    model_subdir: Optional[str] = None
    tokenizer_subdir: Optional[str] = None
    extras: dict = field(default_factory=dict)


@dataclass(frozen=True)
class PipelineConfig:
    model_type: str
    model_arch: str = ""
    stages: tuple = ()
    hf_architectures: tuple = ()
    hf_config_predicate: Optional[Callable[[Any], bool]] = None
    diffusers_class_name: Optional[str] = None
    endpoint_restrictions: tuple = ()
    duplex_runtime_extension: Optional[str] = None
    duplex_serving_adapter: Optional[str] = None
    duplex_control_enabled: bool = False
    default_deploy_config_name: Optional[str] = None

    def validate(self):
        # What the release's validate() finds: no stage, a repeated id, an
        # input that is no stage or the stage itself, no entry stage.
        errors = []
        if not self.stages:
            errors.append("Pipeline has no stages")
        ids = [s.stage_id for s in self.stages]
        if len(ids) != len(set(ids)):
            errors.append("Duplicate stage IDs")
        for s in self.stages:
            for src in s.input_sources:
                if src == s.stage_id:
                    errors.append("Stage %d references itself" % s.stage_id)
                elif src not in ids:
                    errors.append("Stage %d references missing stage %d" % (s.stage_id, src))
        if self.stages and not any(not s.input_sources for s in self.stages):
            errors.append("No entry point (stage with empty input_sources)")
        return errors
