package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

var _ function.Function = (*parseStageConfigFunction)(nil)

// NewParseStageConfigFunction returns provider::omni::parse_stage_config,
// which reads the stage graph out of any deploy config (a base config, the
// pipeline's own config_yaml, a hand-written one) so modules can reason
// about it in HCL.
func NewParseStageConfigFunction() function.Function { return &parseStageConfigFunction{} }

type parseStageConfigFunction struct{}

// Attribute types of the returned object; the edge type is the one the
// pipeline's `edges` output uses, so the two compare equal in HCL.
var (
	summaryStageType = types.ObjectType{AttrTypes: map[string]attr.Type{
		"stage_id":     types.Int64Type,
		"model_stage":  types.StringType,
		"inputs":       types.ListType{ElemType: types.Int64Type},
		"devices":      types.ListType{ElemType: types.Int64Type},
		"final_output": types.BoolType,
	}}
	summaryType = map[string]attr.Type{
		"format": types.StringType,
		"stages": types.ListType{ElemType: summaryStageType},
		"edges":  types.ListType{ElemType: outputElemType("edges")},
	}
)

func (f *parseStageConfigFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "parse_stage_config"
}

func (f *parseStageConfigFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	resp.Definition = function.Definition{
		Summary: "Summarise a vllm-omni deploy config's stage graph",
		MarkdownDescription: "Parses a vllm-omni deploy config in either dialect (`stage_args` or `stages`) and returns " +
			"an object with `format` (the dialect), `stages` (a list of objects with `stage_id`, `model_stage`, " +
			"`inputs`, `devices` and `final_output`) and `edges` (a list of objects with `from` and `to`). " +
			"Only a config that cannot be read is an error; use `validate_stage_config` to check the rules.",
		Parameters: []function.Parameter{
			function.StringParameter{
				Name:                "config",
				MarkdownDescription: "YAML text of the config, such as `file(\"deploy.yaml\")` or `omni_pd_pipeline.x.config_yaml`.",
			},
		},
		Return: function.ObjectReturn{AttributeTypes: summaryType},
	}
}

func (f *parseStageConfigFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var src string
	if resp.Error = req.Arguments.Get(ctx, &src); resp.Error != nil {
		return
	}
	summary, err := pipeline.Inspect([]byte(src))
	if err != nil {
		resp.Error = function.NewArgumentFuncError(0, "config is not a readable vllm-omni deploy config: "+err.Error())
		return
	}

	// The result is built from values, not set from a tagged struct: the
	// framework finds a struct's fields again for every element, on every
	// evaluation of every call (BenchmarkFunctionParseStageConfig measures
	// it).
	stages := make([]attr.Value, len(summary.Stages))
	for i, s := range summary.Stages {
		stages[i] = types.ObjectValueMust(summaryStageType.AttrTypes, map[string]attr.Value{
			"stage_id":     types.Int64Value(int64(s.StageID)),
			"model_stage":  types.StringValue(s.ModelStage),
			"inputs":       int64List(s.Inputs),
			"devices":      int64List(s.Devices),
			"final_output": types.BoolValue(s.FinalOutput),
		})
	}
	edgeType := outputObjectType("edges")
	edges := make([]attr.Value, len(summary.Edges))
	for i, e := range summary.Edges {
		edges[i] = types.ObjectValueMust(edgeType.AttrTypes, map[string]attr.Value{
			"from": types.Int64Value(int64(e.From)),
			"to":   types.Int64Value(int64(e.To)),
		})
	}
	result := types.ObjectValueMust(summaryType, map[string]attr.Value{
		"format": types.StringValue(summary.Format),
		"stages": types.ListValueMust(summaryStageType, stages),
		"edges":  types.ListValueMust(edgeType, edges),
	})
	resp.Error = resp.Result.Set(ctx, result)
}
