package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

var _ function.Function = (*checkScriptFunction)(nil)

// NewCheckScriptFunction returns provider::omni::check_script, the script
// every host keeps at a pipeline's check_script_path. It is the same for
// every pipeline, so it is returned by a function rather than stored in
// each pipeline's state.
func NewCheckScriptFunction() function.Function { return &checkScriptFunction{} }

type checkScriptFunction struct{}

func (f *checkScriptFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "check_script"
}

func (f *checkScriptFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "The check script the pipelines' units and health checks run",
		MarkdownDescription: "Returns the Python script every host of an `omni_pd_pipeline` keeps at its `check_script_path` " +
			"(written by the same cloud-init document as `config_yaml` and the units). Its `preflight` is each unit's main " +
			"process (with `container`, the container's command): it checks the machine against the plan and then execs `vllm` in its place, " +
			"or, given `--registration` (where the pipeline's `registration_path` is not null), a launcher that imports the pipeline " +
			"registration and runs vllm-omni's CLI in the same process. `ready` and `smoke` are " +
			"`health.readiness_command` and `health.smoke_command`. It needs only Python's standard library. The script is " +
			"the same for every pipeline a provider version plans, and each pipeline's `id` changes when it does.",
		Return: function.StringReturn{},
	}
}

func (f *checkScriptFunction) Run(ctx context.Context, _ function.RunRequest, resp *function.RunResponse) {
	resp.Error = resp.Result.Set(ctx, pipeline.CheckScript)
}
