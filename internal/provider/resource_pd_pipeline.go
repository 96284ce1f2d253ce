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
	"github.com/hashicorp/terraform-plugin-go/tftypes"

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

// pdPipelineSchemaVersion is bumped with every change to the resource's
// schema; each earlier version has an entry in UpgradeState
// (resource_pd_pipeline_upgrade.go says how to add one, and
// previousAllocations what later versions must still read).
const pdPipelineSchemaVersion = 3

func (r *pdPipelineResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_pd_pipeline"
}

func (r *pdPipelineResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = pdPipelineResourceSchema()
}

// pdPipelineResourceSchema is built once: planResource needs it on every
// plan, outside the framework's requests (see directServer).
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

// pdPipelineResourceType is the Terraform type of the resource's state.
var pdPipelineResourceType = sync.OnceValue(func() tftypes.Type {
	return pdPipelineResourceSchemaType().TerraformType(context.Background())
})

// ModifyPlan computes the outputs at plan time. The framework marks computed
// attributes unknown whenever an input changes; this fills them in. Plans
// reach planResource through directServer instead; both give the same
// answer.
func (r *pdPipelineResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() {
		return // destroy: nothing to compute
	}
	var diags diag.Diagnostics
	resp.Plan.Raw, diags = planResource(ctx, req.Config.Raw, req.Plan.Raw, req.State.Raw)
	resp.Diagnostics.Append(diags...)
}

// planResource is the resource's plan: the planned state from the
// configuration, the plan the framework or Terraform proposes and the prior
// state (null on create). The inputs are read from the configuration, since
// a computed input (vllm_omni_version) left unset holds the earlier plan's
// value or unknown in a proposed plan; the outputs are planned from them,
// keeping the prior state's allocations while they stay valid. After an
// error the plan holds what was written so far, as ModifyPlan would leave
// it; Terraform discards it.
func planResource(ctx context.Context, config, plan, prior tftypes.Value) (tftypes.Value, diag.Diagnostics) {
	planned := tfsdk.Plan{Schema: pdPipelineResourceSchema(), Raw: plan}
	var diags diag.Diagnostics

	// An unknown input (say a host from another resource) may change any
	// output, so all of them wait for it. triggers affect no output: an
	// unknown one means a replacement, planned below without history.
	if !inputsKnown(config, "triggers") {
		diags.Append(writeUnknownOutputs(ctx, &planned, config)...)
		return planned.Raw, diags
	}

	// inputsFrom, not Config.Get: every plan of every instance reads them,
	// and Get finds the model's fields again each time (see inputsFrom).
	in, d := inputsFrom(ctx, pdPipelineResourceSchemaType(), config)
	if diags.Append(d...); diags.HasError() {
		return planned.Raw, diags
	}
	prev, d := previousFromState(ctx, plan, prior)
	if diags.Append(d...); diags.HasError() {
		return planned.Raw, diags
	}

	out, ok, d := planOutputs(ctx, in, prev)
	diags.Append(d...)
	if ok {
		diags.Append(setOutputs(ctx, &planned, out)...)
	}
	return planned.Raw, diags
}

// previousFromState returns the allocations to keep: those of the prior
// state on an in-place update, none on create or replace.
func previousFromState(ctx context.Context, plan, prior tftypes.Value) (*pipeline.Allocations, diag.Diagnostics) {
	if prior.IsNull() {
		return nil, nil
	}
	// The framework does not tell a resource-level ModifyPlan which attribute
	// plan modifiers asked for replacement; triggers is the only one.
	if triggersChanged(plan, prior) {
		return nil, nil
	}
	state := tfsdk.State{Schema: pdPipelineResourceSchema(), Raw: prior}
	var outputs pipelineOutputs
	var diags diag.Diagnostics
	diags.Append(state.GetAttribute(ctx, path.Root("ports"), &outputs.Ports)...)
	diags.Append(state.GetAttribute(ctx, path.Root("stages"), &outputs.Stages)...)
	diags.Append(state.GetAttribute(ctx, path.Root("vllm_omni_release"), &outputs.Release)...)
	if diags.HasError() {
		return nil, diags
	}
	return previousAllocations(ctx, outputs)
}

// triggersChanged reports whether a plan replaces the resource: its
// triggers differ from the prior state's, as mapplanmodifier.RequiresReplace
// decides.
func triggersChanged(plan, prior tftypes.Value) bool {
	return !attributeOf(plan, "triggers").Equal(attributeOf(prior, "triggers"))
}

// attributeOf is a top-level attribute of an object value; the zero Value
// when v is null, unknown or not an object.
func attributeOf(v tftypes.Value, name string) tftypes.Value {
	var attrs map[string]tftypes.Value
	if v.IsNull() || !v.IsKnown() || v.As(&attrs) != nil {
		return tftypes.Value{}
	}
	return attrs[name]
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

// storePlan writes the planned resource into the new state, through the
// model. An apply runs once per change, not on every plan, so the typed
// model's clarity is worth what Get and Set cost here
// (BenchmarkResourceApplyCreate).
func storePlan(ctx context.Context, plan tfsdk.Plan, state *tfsdk.State) diag.Diagnostics {
	var m pipelineResourceModel
	diags := plan.Get(ctx, &m)
	if diags.HasError() {
		return diags
	}
	diags.Append(state.Set(ctx, &m)...)
	return diags
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
