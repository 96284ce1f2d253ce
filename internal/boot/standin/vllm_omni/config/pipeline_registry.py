# Stand-in for vllm_omni.config.pipeline_registry: register_pipeline with
# the release's signature and behaviour as the release table records it
# (internal/releases/registry.go): a PipelineConfig is stored under
# model_type or its own, whatever validate() finds (only logged, here to
# stderr and in VALIDATION), and a resolver function needs model_type. It
# registers nothing of its own, so a deploy config's pipeline: resolves
# only to what a registration imported first provides. The project's own
# code.
import sys

OMNI_PIPELINES = {}
VALIDATION = {}


def register_pipeline(pipeline, model_type=None):
    if callable(pipeline) and not hasattr(pipeline, "stages"):
        if model_type is None:
            raise ValueError("Model type must be explicitly provided when registering a pipeline resolver")
        OMNI_PIPELINES[model_type] = pipeline
        return
    key = model_type or pipeline.model_type
    errors = pipeline.validate()
    if key in OMNI_PIPELINES:
        errors.append("Model type %s is already registered; the old mapping will be clobbered" % key)
    if errors:
        sys.stderr.write("WARNING pipeline %s: %s\n" % (key, errors))
    VALIDATION[key] = errors
    OMNI_PIPELINES[key] = pipeline
