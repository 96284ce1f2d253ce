package provider

import (
	"context"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// inputsFrom must read exactly what tfsdk's Get reads, for every input,
// from the data source's configuration and from the resource's plan.
func TestInputsFrom_AgreesWithGet(t *testing.T) {
	ctx := context.Background()
	t.Run("data source", func(t *testing.T) {
		var sresp datasource.SchemaResponse
		NewPDPipelineDataSource().Schema(ctx, datasource.SchemaRequest{}, &sresp)
		s := sresp.Schema
		checkInputsFrom(t, tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)},
			func(c tfsdk.Config) (pipelineInputs, diag.Diagnostics) {
				var m pipelineModel
				d := c.Get(ctx, &m)
				return m.pipelineInputs, d
			})
	})
	t.Run("resource", func(t *testing.T) {
		var sresp resource.SchemaResponse
		NewPDPipelineResource().Schema(ctx, resource.SchemaRequest{}, &sresp)
		s := sresp.Schema
		checkInputsFrom(t, tfsdk.State{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)},
			func(c tfsdk.Config) (pipelineInputs, diag.Diagnostics) {
				var m pipelineResourceModel
				d := c.Get(ctx, &m)
				return m.pipelineInputs, d
			})
	})
}

// checkInputsFrom sets every input in state, then compares what inputsFrom
// and get (tfsdk's Get) read from it.
func checkInputsFrom(t *testing.T, state tfsdk.State, get func(tfsdk.Config) (pipelineInputs, diag.Diagnostics)) {
	t.Helper()
	ctx := context.Background()
	setEveryInput(t, &state)

	config := tfsdk.Config(state)
	want, diags := get(config)
	if diags.HasError() {
		t.Fatal(diags)
	}
	got, diags := inputsFrom(ctx, state.Schema.Type(), config.Raw)
	if diags.HasError() {
		t.Fatal(diags)
	}
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		gv, ok1 := g.Field(i).Interface().(attr.Value)
		wv, ok2 := w.Field(i).Interface().(attr.Value)
		if !ok1 || !ok2 || !gv.Equal(wv) || gv.IsNull() {
			t.Errorf("%s: inputsFrom read %s, Get read %s", g.Type().Field(i).Name, gv, wv)
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
	for name := range inputFields() {
		if !setAttrs[name] {
			t.Errorf("input %q is not set in this test; add it so the comparison covers it", name)
		}
	}
}
