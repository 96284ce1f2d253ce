package provider

import (
	"bytes"
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Create and Update store the plan exactly, byte for byte as Terraform
// receives it: every input set (nested fields and dynamic values too),
// triggers, and the outputs the seed plans.
func TestResourceStore_KeepsThePlan(t *testing.T) {
	ctx := context.Background()
	typ := pdPipelineResourceType()
	seed := objectValue(t, typ, benchSeedInputs())
	planned, diags := planResource(ctx, seed, seed, tftypes.NewValue(typ, nil))
	if diags.HasError() {
		t.Fatal(diags)
	}
	state := tfsdk.State{Schema: pdPipelineResourceSchema(), Raw: planned}
	setEveryInput(t, &state)
	if d := state.SetAttribute(ctx, path.Root("triggers"), types.MapValueMust(types.StringType,
		map[string]attr.Value{"rev": types.StringValue("7")})); d.HasError() {
		t.Fatal(d)
	}
	plan := tfsdk.Plan(state)
	want := dynamicValue(t, plan.Raw).MsgPack

	empty := func() tfsdk.State { return tfsdk.State{Schema: plan.Schema, Raw: tftypes.NewValue(typ, nil)} }
	r := &pdPipelineResource{}
	create := resource.CreateResponse{State: empty()}
	r.Create(ctx, resource.CreateRequest{Plan: plan}, &create)
	update := resource.UpdateResponse{State: empty()}
	r.Update(ctx, resource.UpdateRequest{Plan: plan}, &update)
	for name, got := range map[string]struct {
		state tfsdk.State
		diags diag.Diagnostics
	}{"create": {create.State, create.Diagnostics}, "update": {update.State, update.Diagnostics}} {
		if got.diags.HasError() {
			t.Errorf("%s: %v", name, got.diags)
			continue
		}
		if !bytes.Equal(dynamicValue(t, got.state.Raw).MsgPack, want) {
			t.Errorf("%s stored another state than the plan:\n got %s\nwant %s", name, got.state.Raw, plan.Raw)
		}
	}
}
