package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// What internal/direct calls to answer the entities' per-instance calls
// without the framework's generic passes. Each runs the entity's own code
// on protocol values, as the framework calls it.

// PDPipelineTypeName is the data source's and the resource's type name.
const PDPipelineTypeName = pdPipelineTypeName

// PDPipelineResourceType is the Terraform type of the resource's
// configuration, plan and state, built once: building it walks the whole
// schema, and every call needs it.
var PDPipelineResourceType = sync.OnceValue(func() tftypes.Type {
	return pdPipelineResourceSchemaType().TerraformType(context.Background())
})

// PlanPDPipelineResource runs the resource's ModifyPlan on a configuration,
// the plan Terraform proposes and the prior state (null on create): the
// response's plan starts as the proposed one, as in the framework.
func PlanPDPipelineResource(ctx context.Context, config, proposed, prior tftypes.Value) (tftypes.Value, diag.Diagnostics) {
	schema := pdPipelineResourceSchema()
	resp := resource.ModifyPlanResponse{Plan: tfsdk.Plan{Schema: schema, Raw: proposed.Copy()}}
	(&pdPipelineResource{}).ModifyPlan(ctx, resource.ModifyPlanRequest{
		Config: tfsdk.Config{Schema: schema, Raw: config},
		Plan:   tfsdk.Plan{Schema: schema, Raw: proposed},
		State:  tfsdk.State{Schema: schema, Raw: prior},
	}, &resp)
	return resp.Plan.Raw, resp.Diagnostics
}

// UnknownPDPipelineOutputs is planned with every output, and each computed
// input config leaves unset, unknown: what the framework marks before
// ModifyPlan runs, which a failed plan leaves in place.
func UnknownPDPipelineOutputs(ctx context.Context, planned, config tftypes.Value) (tftypes.Value, diag.Diagnostics) {
	plan := tfsdk.Plan{Schema: pdPipelineResourceSchema(), Raw: planned}
	diags := writeUnknownOutputs(ctx, &plan, config)
	return plan.Raw, diags
}

// ValidatePDPipelineResource validates the resource's configuration as
// the framework's ValidateResourceConfig does.
func ValidatePDPipelineResource(ctx context.Context, config tftypes.Value) diag.Diagnostics {
	return validateWithEngine(ctx, tfsdk.Config{Schema: pdPipelineResourceSchema(), Raw: config}, resourceValidationSchema())
}

// ValidatePDPipelineDataSource validates the data source's configuration
// as the framework's ValidateDataResourceConfig does.
func ValidatePDPipelineDataSource(ctx context.Context, config tftypes.Value) diag.Diagnostics {
	return validateWithEngine(ctx, tfsdk.Config{Schema: pdPipelineDataSourceSchema(), Raw: config}, dataSourceValidationSchema())
}

// PDPipelineDataSourceType is the Terraform type of the data source's
// configuration and state, built once.
var PDPipelineDataSourceType = sync.OnceValue(func() tftypes.Type {
	return pdPipelineDataSourceSchemaType().TerraformType(context.Background())
})

// ReadPDPipelineDataSource answers a data source read of a configuration
// as the data source's Read does, the state starting as the configuration
// as in the framework (TestReadDataSource_MatchesFramework).
func ReadPDPipelineDataSource(ctx context.Context, config tftypes.Value) (tftypes.Value, diag.Diagnostics) {
	state := tfsdk.State{Schema: pdPipelineDataSourceSchema(), Raw: config.Copy()}
	diags := readPipeline(ctx, config, &state)
	return state.Raw, diags
}
