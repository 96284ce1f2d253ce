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
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Create and Update store the plan exactly, byte for byte as Terraform
// receives it: every input set (nested fields and dynamic values too),
// triggers, and the outputs the seed plans.
func TestResourceStore_KeepsThePlan(t *testing.T) {
	ctx := context.Background()
	typ := pdPipelineResourceType()
	seed := objectValue(t, typ, benchSeedInputs())
	planned, diags := modifyResourcePlan(ctx, seed, seed, tftypes.NewValue(typ, nil))
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

// setEveryInput sets every input attribute of state, nested fields and
// dynamic values included; the test fails if an input is left out.
func setEveryInput(t *testing.T, state *tfsdk.State) {
	t.Helper()
	ctx := context.Background()

	engineArgs := types.DynamicValue(types.ObjectValueMust(
		map[string]attr.Type{"enforce_eager": types.BoolType}, map[string]attr.Value{"enforce_eager": types.BoolValue(false)}))
	set := map[string]any{
		"model":                         types.StringValue(seedModel),
		"preset":                        types.StringValue("qwen3_omni_moe"),
		"base_config":                   types.StringValue("stage_args: []\n"),
		"format":                        types.StringValue("stages"),
		"pipeline":                      types.StringValue("qwen3_omni_moe_pd"),
		"vllm_omni_version":             types.StringValue("0.24"),
		"systemd.user":                  types.StringValue("omni"),
		"container.runtime":             types.StringValue("podman"),
		"split_stage":                   types.Int64Value(0),
		"prefill.devices":               types.ListValueMust(types.Int64Type, []attr.Value{types.Int64Value(3)}),
		"prefill.engine_args":           engineArgs,
		"decode.max_num_seqs":           types.Int64Value(32),
		"stage_overrides":               types.DynamicValue(types.ObjectValueMust(map[string]attr.Type{"talker": types.ObjectType{AttrTypes: map[string]attr.Type{"max_num_seqs": types.NumberType}}}, map[string]attr.Value{"talker": types.ObjectValueMust(map[string]attr.Type{"max_num_seqs": types.NumberType}, map[string]attr.Value{"max_num_seqs": types.NumberNull()})})),
		"gpus":                          types.Int64Value(8),
		"connector.name":                types.StringValue("NixlConnector"),
		"connector.extra_config":        engineArgs,
		"api_port":                      types.Int64Value(9000),
		"port_range.first":              types.Int64Value(30000),
		"port_range.last":               types.Int64Value(30100),
		"reserved_ports":                types.SetValueMust(types.Int64Type, []attr.Value{types.Int64Value(30001)}),
		"config_path":                   "/etc/x.yaml",
		"decode.gpu_memory_utilization": types.Float64Value(0.5),
	}
	setAttrs := map[string]bool{}
	for dotted, v := range set {
		p := path.Root(dotted)
		for i := 0; i < len(dotted); i++ {
			if dotted[i] == '.' {
				p = path.Root(dotted[:i]).AtName(dotted[i+1:])
				setAttrs[dotted[:i]] = true
				break
			}
		}
		setAttrs[dotted] = true
		if diags := state.SetAttribute(ctx, p, v); diags.HasError() {
			t.Fatalf("set %s: %v", dotted, diags)
		}
	}
	for name := range pipelineInputAttributes() {
		if !setAttrs[name] {
			t.Errorf("input %q is not set in this test; add it so the comparison covers it", name)
		}
	}
}

// dynamicValue is v, a value of the resource's type, as Terraform sends it.
func dynamicValue(t testing.TB, v tftypes.Value) *tfprotov6.DynamicValue {
	t.Helper()
	dv, err := tfprotov6.NewDynamicValue(pdPipelineResourceType(), v)
	if err != nil {
		t.Fatal(err)
	}
	return &dv
}
