package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// ReadResource answers a refresh of an omni_pd_pipeline resource: the state
// as it is, since the resource has nothing outside Terraform to read and its
// Read keeps the state (see directServer).
func (s directServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	if req.TypeName != pdPipelineTypeName || req.CurrentState == nil || len(req.Private) > 0 ||
		req.ProviderMeta != nil || req.CurrentIdentity != nil {
		return s.ProviderServer.ReadResource(ctx, req)
	}
	typ := pdPipelineResourceType()
	state, err := req.CurrentState.Unmarshal(typ)
	if err != nil {
		return s.ProviderServer.ReadResource(ctx, req)
	}
	resp := &tfprotov6.ReadResourceResponse{}
	resp.NewState = encodeState(typ, state, &resp.Diagnostics)
	return resp, nil
}

// PlanResourceChange answers the plan of an omni_pd_pipeline resource that is
// created or updated, with planResource, the function its ModifyPlan runs
// (see directServer). It gives what the framework's plan gives for this
// schema:
//
//   - triggers' RequiresReplace asks for a replacement when an update
//     changes triggers, whatever planResource then reports;
//   - planResource plans the outputs;
//   - when planResource reports an error on a plan that differs from the
//     prior state, the outputs are unknown. The framework marks every
//     computed attribute with a null configuration unknown before ModifyPlan
//     runs; here those are the outputs and the computed inputs left unset
//     (TestDirect_Assumptions), which planResource overwrites unless it
//     fails, so only a failed plan needs the marking.
func (s directServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	if req.TypeName != pdPipelineTypeName || req.ProposedNewState == nil || req.PriorState == nil ||
		len(req.PriorPrivate) > 0 || req.ProviderMeta != nil || req.PriorIdentity != nil {
		return s.ProviderServer.PlanResourceChange(ctx, req)
	}
	typ := pdPipelineResourceType()
	proposed, err := req.ProposedNewState.Unmarshal(typ)
	if err != nil || proposed.IsNull() {
		return s.ProviderServer.PlanResourceChange(ctx, req) // a destroy, or not ours to judge
	}
	prior, err := req.PriorState.Unmarshal(typ)
	if err != nil || req.Config == nil {
		return s.ProviderServer.PlanResourceChange(ctx, req)
	}
	config, err := req.Config.Unmarshal(typ)
	if err != nil {
		return s.ProviderServer.PlanResourceChange(ctx, req)
	}

	resp := &tfprotov6.PlanResourceChangeResponse{}
	if !prior.IsNull() && triggersChanged(proposed, prior) {
		resp.RequiresReplace = []*tftypes.AttributePath{tftypes.NewAttributePath().WithAttributeName("triggers")}
	}
	planned, diags := planResource(ctx, config, proposed, prior)
	if diags.HasError() && !proposed.Equal(prior) {
		failed := tfsdk.Plan{Schema: pdPipelineResourceSchema(), Raw: planned}
		diags.Append(writeUnknownOutputs(ctx, &failed, config)...)
		planned = failed.Raw
	}
	resp.Diagnostics = protoDiagnostics(ctx, diags)
	resp.PlannedState = encodeState(typ, planned, &resp.Diagnostics)
	return resp, nil
}
