package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
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
			"config gives an empty list.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "config",
				MarkdownDescription: "YAML text of the config, such as `file(\"deploy.yaml\")`.",
			},
		},
		Return: function.ListReturn{ElementType: types.StringType},
	}
}

func (f *validateStageConfigFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var src string
	if resp.Error = req.Arguments.Get(ctx, &src); resp.Error != nil {
		return
	}
	problems := []attr.Value{}
	for _, d := range pipeline.Check([]byte(src)) {
		problems = append(problems, types.StringValue(d.String()))
	}
	resp.Error = resp.Result.Set(ctx, types.ListValueMust(types.StringType, problems))
}
