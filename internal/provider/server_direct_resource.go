package provider

import (
	"context"

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
	resp.NewState = encodeOr(typ, state, "State", &resp.Diagnostics)
	return resp, nil
}

// PlanResourceChange answers the plan of an omni_pd_pipeline resource that is
// created or updated, with planResource, the function its ModifyPlan runs
// (see directServer). It does what the framework's plan does for this
// schema, in the same order:
//
//  1. When the proposed state differs from the prior one, every computed
//     attribute whose configuration is null is marked unknown; here those
//     are exactly the outputs (TestDirect_Assumptions), which a
//     configuration cannot set, and planResource overwrites them unless it
//     reports an error.
//  2. triggers' RequiresReplace asks for a replacement when an update
//     changes triggers, whatever planResource then reports.
//  3. planResource plans the outputs.
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
	if err != nil {
		return s.ProviderServer.PlanResourceChange(ctx, req)
	}

	resp := &tfprotov6.PlanResourceChangeResponse{}
	plan := proposed
	if !proposed.Equal(prior) {
		var diags []*tfprotov6.Diagnostic
		plan, diags = unknownOutputs(ctx, proposed)
		if len(diags) > 0 {
			resp.Diagnostics = diags
			return resp, nil
		}
	}
	if !prior.IsNull() && triggersChanged(plan, prior) {
		resp.RequiresReplace = []*tftypes.AttributePath{tftypes.NewAttributePath().WithAttributeName("triggers")}
	}
	planned, diags := planResource(ctx, plan, prior)
	resp.Diagnostics = protoDiagnostics(ctx, diags)
	resp.PlannedState = encodeOr(typ, planned, "State", &resp.Diagnostics)
	return resp, nil
}

// unknownOutputs is plan with every output unknown.
func unknownOutputs(ctx context.Context, plan tftypes.Value) (tftypes.Value, []*tfprotov6.Diagnostic) {
	marked := tfsdkPlan(plan)
	diags := writeUnknownOutputs(ctx, &marked)
	return marked.Raw, protoDiagnostics(ctx, diags)
}
