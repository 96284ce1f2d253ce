package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

var (
	_ resource.Resource                 = (*pdPipelineResource)(nil)
	_ resource.ResourceWithModifyPlan   = (*pdPipelineResource)(nil)
	_ resource.ResourceWithUpgradeState = (*pdPipelineResource)(nil)
)

// NewPDPipelineResource returns the omni_pd_pipeline resource. It talks to no
// API: it is the data source's computation plus memory. Its state remembers
// the ports and devices it allocated, and later plans keep them while they
// stay valid.
func NewPDPipelineResource() resource.Resource { return &pdPipelineResource{} }

type pdPipelineResource struct{}

// pdPipelineSchemaVersion is bumped with every change to the resource's
// schema; each earlier version has an entry in UpgradeState
// (resource_pd_pipeline_upgrade.go says how to add one, and
// previousAllocations what later versions must still read).
const pdPipelineSchemaVersion = 1

func (r *pdPipelineResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_pd_pipeline"
}

func (r *pdPipelineResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := pipelineAttributes()
	attrs["triggers"] = schema.MapAttribute{
		MarkdownDescription: "Arbitrary values; changing any of them replaces the resource, which forgets its " +
			"earlier allocations and allocates ports and devices afresh.",
		Optional:      true,
		ElementType:   types.StringType,
		PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()},
	}
	resp.Schema = schema.Schema{
		Version: pdPipelineSchemaVersion,
		MarkdownDescription: pdPipelineDescription + "\n\n" +
			"The resource computes every output in the plan (never \"known after apply\" while the inputs are " +
			"known) and keeps its port and device allocations stable: a later change, such as `max_num_seqs`, " +
			"keeps the ports and GPUs chosen before as long as they are still valid.\n\n" +
			"Every input updates the resource in place, since nothing outside Terraform's state exists to " +
			"recreate. Only a change to `triggers` replaces it, and the replacement allocates from scratch.",
		Attributes: attrs,
	}
}

// ModifyPlan computes the outputs at plan time. The framework marks computed
// attributes unknown whenever an input changes; this fills them in.
func (r *pdPipelineResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy: nothing to compute
	}
	// An unknown input (say a host from another resource) may change any
	// output, so all of them wait for it. triggers affect no output: an
	// unknown one means a replacement, planned below without history.
	if !inputsKnown(req.Plan.Raw, "triggers") {
		resp.Diagnostics.Append(writeUnknownOutputs(ctx, &resp.Plan)...)
		return
	}

	// inputsFrom, not Plan.Get: Get reflects over the whole model on every
	// plan of every instance (docs/performance.md).
	in, diags := inputsFrom(ctx, req.Plan.Schema.Type(), req.Plan.Raw)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	prev, diags := r.previous(ctx, req)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}

	out, ok, diags := planOutputs(ctx, in, prev)
	resp.Diagnostics.Append(diags...)
	if !ok {
		return
	}
	resp.Diagnostics.Append(writeOutputs(ctx, &resp.Plan, out)...)
}

// previous returns the allocations to keep: those of the prior state on an
// in-place update, none on create or replace.
func (r *pdPipelineResource) previous(ctx context.Context, req resource.ModifyPlanRequest) (*pipeline.Allocations, diag.Diagnostics) {
	if req.State.Raw.IsNull() {
		return nil, nil
	}
	var state pipelineResourceModel
	if diags := req.State.Get(ctx, &state); diags.HasError() {
		return nil, diags
	}
	// The framework does not tell a resource-level ModifyPlan which attribute
	// plan modifiers asked for replacement; triggers is the only one.
	var triggers types.Map
	if diags := req.Plan.GetAttribute(ctx, path.Root("triggers"), &triggers); diags.HasError() {
		return nil, diags
	}
	if !triggers.Equal(state.Triggers) {
		return nil, nil
	}
	return previousAllocations(ctx, state.pipelineOutputs)
}

// Create stores the plan: ModifyPlan computed everything, and recomputing
// here could only risk a result that differs from what was shown.
func (r *pdPipelineResource) Create(_ context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.State.Raw = req.Plan.Raw.Copy()
}

// Read keeps the state: there is nothing outside Terraform to refresh from.
func (r *pdPipelineResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

// Update stores the plan, as Create does.
func (r *pdPipelineResource) Update(_ context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.State.Raw = req.Plan.Raw.Copy()
}

// Delete has nothing to clean up; the framework removes the state.
func (r *pdPipelineResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}
