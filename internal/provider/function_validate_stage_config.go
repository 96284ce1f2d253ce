package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

var _ function.Function = (*validateStageConfigFunction)(nil)

// NewValidateStageConfigFunction returns provider::omni::validate_stage_config.
// It returns the problems instead of failing, so that a module can use it in
// a precondition or a check block with a message of its own:
//
//	condition = length(provider::omni::validate_stage_config(x)) == 0
func NewValidateStageConfigFunction() function.Function { return &validateStageConfigFunction{} }

type validateStageConfigFunction struct{}

func (f *validateStageConfigFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "validate_stage_config"
}

func (f *validateStageConfigFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Check a vllm-omni deploy config against vllm-omni's rules",
		MarkdownDescription: "Runs every rule vllm-omni applies to a deploy config (either dialect), and the ones this " +
			"provider adds, and returns one string per problem found: what is wrong, how to fix it, and a stable code " +
			"in brackets, such as `[tp_mismatch]`. Warnings start with `warning: `; errors have no prefix. A sound " +
			"config gives an empty list.\n\n" +
			"With a second argument, a vllm-omni version (`\"0.24\"`, `\"0.24.0\"`, `\"0.26.0rc1\"`), it also checks what " +
			"that release's loader, stage runtime and PD validator do with the file: a `stage_args` config on a release " +
			"that no longer loads it, keys its runtime never reads (`sync_process_input_func`, `runtime.max_batch_size`), " +
			"an unregistered `pipeline:`, an implicit `async_chunk`, connectors its vLLM cannot load. The version is a " +
			"trailing optional argument rather than a second function so that every existing call keeps working and " +
			"one name covers both uses.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "config",
				MarkdownDescription: "YAML text of the config, such as `file(\"deploy.yaml\")`.",
			},
		},
		VariadicParameter: function.StringParameter{
			Name:                "vllm_omni_version",
			MarkdownDescription: "Optional: the vllm-omni release the config is for. At most one.",
		},
		Return: function.ListReturn{ElementType: types.StringType},
	}
}

func (f *validateStageConfigFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var src string
	var versions []string
	if resp.Error = req.Arguments.Get(ctx, &src, &versions); resp.Error != nil {
		return
	}
	if len(versions) > 1 {
		resp.Error = function.NewArgumentFuncError(1, "validate_stage_config takes at most one vllm_omni_version")
		return
	}
	version := ""
	if len(versions) == 1 {
		version = versions[0]
		if version == "" {
			resp.Error = function.NewArgumentFuncError(1, "vllm_omni_version is empty: pass a release such as \"0.24.0\", or leave the argument out")
			return
		}
		if _, problem := releases.Lookup(version); problem != nil {
			resp.Error = function.NewArgumentFuncError(1, problem.Detail+" ["+problem.Code.String()+"]")
			return
		}
	}
	problems := []string{} // not nil: no problem is an empty list, not null
	for _, d := range pipeline.CheckFor([]byte(src), version) {
		problems = append(problems, d.String())
	}
	resp.Error = resp.Result.Set(ctx, problems)
}
