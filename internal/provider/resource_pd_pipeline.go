package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

var (
	_ resource.Resource                 = (*pdPipelineResource)(nil)
	_ resource.ResourceWithModifyPlan   = (*pdPipelineResource)(nil)
	_ resource.ResourceWithUpgradeState = (*pdPipelineResource)(nil)
	_ resource.ResourceWithImportState  = (*pdPipelineResource)(nil)
)

// NewPDPipelineResource returns the omni_pd_pipeline resource. It talks to no
// API: it is the data source's computation plus memory. Its state remembers
// the ports and devices it allocated, and later plans keep them while they
// stay valid.
func NewPDPipelineResource() resource.Resource { return &pdPipelineResource{} }

type pdPipelineResource struct{}

// pdPipelineSchemaVersion is bumped when a change to the resource's schema
// renames, removes or retypes an attribute, not when one is added; each
// earlier version has an entry in UpgradeState
// (resource_pd_pipeline_upgrade.go says why and how to add one, and
// previousAllocations what later versions must still read).
const pdPipelineSchemaVersion = 3

func (r *pdPipelineResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_pd_pipeline"
}

func (r *pdPipelineResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = pdPipelineResourceSchema()
}

// pdPipelineResourceSchema is built once: the framework asks for the schema
// in every request it serves.
var pdPipelineResourceSchema = sync.OnceValue(func() schema.Schema {
	attrs := pipelineAttributes()
	attrs["triggers"] = schema.MapAttribute{
		MarkdownDescription: "Arbitrary values; changing any of them replaces the resource, which forgets its " +
			"earlier allocations and allocates ports and devices afresh.",
		Optional:      true,
		ElementType:   types.StringType,
		PlanModifiers: []planmodifier.Map{mapplanmodifier.RequiresReplace()},
	}
	return schema.Schema{
		Version: pdPipelineSchemaVersion,
		MarkdownDescription: pdPipelineDescription + "\n\n" +
			"The resource computes every output in the plan (never \"known after apply\" while the inputs are " +
			"known) and keeps its port and device allocations stable: a later change, such as `max_num_seqs`, " +
			"keeps the ports and GPUs chosen before as long as they are still valid.\n\n" +
			"Every input updates the resource in place, since nothing outside Terraform's state exists to " +
			"recreate. Only a change to `triggers` replaces it, and the replacement allocates from scratch.",
		Attributes: attrs,
	}
})

// pdPipelineResourceSchemaType is the schema's Type(), built once (see
// pdPipelineDataSourceSchemaType).
var pdPipelineResourceSchemaType = sync.OnceValue(func() attr.Type {
	return pdPipelineResourceSchema().Type()
})

// ModifyPlan computes the outputs at plan time: the framework marks
// computed attributes unknown whenever an input changes; this fills them
// in. The inputs are read from the configuration, since a computed input
// (vllm_omni_version) left unset holds the earlier plan's value or unknown
// in a proposed plan; the outputs are planned from them, keeping the prior
// state's allocations while they stay valid. After an error the plan holds
// what was written so far; Terraform discards it.
func (r *pdPipelineResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy: nothing to compute
	}
	// An unknown input (say a host from another resource) may change any
	// output, so all of them wait for it. triggers affect no output: an
	// unknown one means a replacement, planned below without history.
	if !inputsKnown(req.Config.Raw, "triggers") {
		resp.Diagnostics.Append(writeUnknownOutputs(ctx, &resp.Plan, req.Config.Raw)...)
		return
	}
	in, diags := readInputs(ctx, req.Config.Raw, resourceValidationSchema())
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	prev, diags := previousFromState(ctx, req.Plan, req.State)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	out, ok, diags := planOutputs(ctx, in, prev)
	resp.Diagnostics.Append(diags...)
	if ok {
		resp.Diagnostics.Append(setOutputs(ctx, &resp.Plan, out)...)
	}
}

// previousFromState returns the allocations to keep: those of the prior
// state on an in-place update, none on create or replace.
func previousFromState(ctx context.Context, plan tfsdk.Plan, prior tfsdk.State) (*pipeline.Allocations, diag.Diagnostics) {
	if prior.Raw.IsNull() {
		return nil, nil
	}
	// The framework does not tell a resource-level ModifyPlan which attribute
	// plan modifiers asked for replacement; triggers is the only one.
	var planned, was types.Map
	diags := plan.GetAttribute(ctx, path.Root("triggers"), &planned)
	diags.Append(prior.GetAttribute(ctx, path.Root("triggers"), &was)...)
	if diags.HasError() || !planned.Equal(was) {
		return nil, diags
	}
	outputs, d := readPriorOutputs(ctx, prior)
	if diags.Append(d...); diags.HasError() {
		return nil, diags
	}
	return previousAllocations(ctx, outputs)
}

// Create stores the plan: ModifyPlan computed everything, and recomputing
// here could only risk a result that differs from what was shown.
func (r *pdPipelineResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	resp.Diagnostics.Append(storePlan(ctx, req.Plan, &resp.State)...)
}

// Read keeps the state: there is nothing outside Terraform to refresh from.
func (r *pdPipelineResource) Read(context.Context, resource.ReadRequest, *resource.ReadResponse) {}

// Update stores the plan, as Create does.
func (r *pdPipelineResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	resp.Diagnostics.Append(storePlan(ctx, req.Plan, &resp.State)...)
}

// storePlan writes the planned resource into the new state: the plan's
// value as it is, which State.Set checks against the schema's type. The
// plan holds every value the state must, as ModifyPlan computed it.
func storePlan(ctx context.Context, plan tfsdk.Plan, state *tfsdk.State) diag.Diagnostics {
	return state.Set(ctx, plan.Raw)
}

// ImportState says what to do instead: the resource is a plan, not an
// object that exists elsewhere, so there is nothing an id could name. A
// running deployment is adopted by declaring the resource with the ports
// and devices it already uses.
func (r *pdPipelineResource) ImportState(_ context.Context, _ resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	resp.Diagnostics.AddError("omni_pd_pipeline cannot be imported",
		"omni_pd_pipeline describes a plan computed from its arguments; there is no object outside Terraform to import. "+
			"Declare the resource instead and apply it: it changes no machine. To adopt a deployment that is already running, "+
			"set api_port, prefill.bootstrap_port, decode.bootstrap_port and the devices of each stage to the values it uses, "+
			"and vllm_omni_version to the release it runs, so that the plan matches it.")
}

// Delete has nothing to clean up; the framework removes the state.
func (r *pdPipelineResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
}
