package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// What internal/direct calls to answer the resource's per-instance calls
// without the framework's generic passes. Each runs the entity's own
// method on protocol values, as the framework calls it; nothing here has
// logic of its own.

// PDPipelineTypeName is the data source's and the resource's type name.
const PDPipelineTypeName = pdPipelineTypeName

// PDPipelineResourceType is the Terraform type of the resource's
// configuration, plan and state.
func PDPipelineResourceType() tftypes.Type {
	return pdPipelineResourceSchemaType().TerraformType(context.Background())
}

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

// PDPipelineDataSourceType is the Terraform type of the data source's
// configuration and state.
func PDPipelineDataSourceType() tftypes.Type {
	return pdPipelineDataSourceSchema().Type().TerraformType(context.Background())
}

// ReadPDPipelineDataSource runs the data source's Read on a configuration:
// the response's state starts as the configuration, as in the framework.
func ReadPDPipelineDataSource(ctx context.Context, config tftypes.Value) (tftypes.Value, diag.Diagnostics) {
	schema := pdPipelineDataSourceSchema()
	resp := datasource.ReadResponse{State: tfsdk.State{Schema: schema, Raw: config.Copy()}}
	(&pdPipelineDataSource{}).Read(ctx, datasource.ReadRequest{Config: tfsdk.Config{Schema: schema, Raw: config}}, &resp)
	return resp.State.Raw, resp.Diagnostics
}
