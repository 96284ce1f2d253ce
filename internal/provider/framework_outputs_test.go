package provider

import (
	"context"
	"math/big"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// frameworkOutputValues are the computed attributes built as framework
// values and converted one attribute at a time with ToTerraformValue, as
// the provider built them before outputsFromResult made Terraform values
// directly: the reference TestOutputsFromResult_MatchesFrameworkBuilder
// compares outputsFromResult with. Each output is its row's framework
// builder (outputField); the computed inputs are built here, the old way.
func frameworkOutputValues(ctx context.Context, in pipelineInputs, r *pipeline.Result) (map[string]tftypes.Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	values := map[string]attr.Value{}
	for _, o := range pipelineOutputTable {
		v, d := o.framework(r)
		diags.Append(d...)
		values[o.name] = v
	}
	planned, d := frameworkPlannedInputs(in, r)
	diags.Append(d...)
	for name, v := range planned {
		values[name] = v
	}
	out := make(map[string]tftypes.Value, len(values))
	for name, v := range values {
		tv, err := v.ToTerraformValue(ctx)
		if err != nil {
			diags.AddError(name, err.Error())
		}
		out[name] = tv
	}
	return out, diags
}

// frameworkPlannedInputs are the computed inputs as planned, as framework
// values: preset (null with a base config), the other top-level ones, and
// the nested objects merged with the configuration (legacyEffectiveObjects).
func frameworkPlannedInputs(in pipelineInputs, r *pipeline.Result) (map[string]attr.Value, diag.Diagnostics) {
	out, diags := legacyEffectiveObjects(in, r)
	out["preset"] = types.StringNull()
	if r.Preset != "" {
		out["preset"] = types.StringValue(r.Preset)
	}
	out["vllm_omni_version"] = types.StringValue(r.Version)
	out["config_path"] = types.StringValue(r.ConfigPath)
	out["api_port"] = number(r.APIPort)
	out["format"] = types.StringValue(r.Format)
	return out, diags
}

// legacyEffectiveObjects are prefill, decode, connector and port_range as
// the old builder made them: framework values, the configuration's object
// with each computed field it leaves null set from the planned values
// (mergeObject), before effectiveObject made one rule of this and of the
// values while the plan is unknown.
func legacyEffectiveObjects(in pipelineInputs, r *pipeline.Result) (map[string]attr.Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	out := map[string]attr.Value{}
	set := func(name string, config types.Object, planned map[string]attr.Value) {
		v, d := legacyMergeObject(name, config, planned)
		diags.Append(d...)
		out[name] = v
	}
	set("prefill", in.Prefill, legacyRoleValues(r.Prefill))
	set("decode", in.Decode, legacyRoleValues(r.Decode))
	set("connector", in.Connector, map[string]attr.Value{"name": types.StringValue(r.Connector)})
	set("port_range", in.PortRange, map[string]attr.Value{"first": number(r.PortRange.First), "last": number(r.PortRange.Last)})
	return out, diags
}

func legacyRoleValues(s pipeline.RoleSettings) map[string]attr.Value {
	devices := make([]attr.Value, len(s.Devices))
	for i, d := range s.Devices {
		devices[i] = number(d)
	}
	port := types.NumberNull()
	if s.BootstrapPort != nil {
		port = number(*s.BootstrapPort)
	}
	return map[string]attr.Value{
		"devices":              types.ListValueMust(types.NumberType, devices),
		"tensor_parallel_size": number(s.TensorParallelSize),
		"max_num_seqs":         number(s.MaxNumSeqs),
		"bootstrap_port":       port,
	}
}

func number(i int) types.Number { return types.NumberValue(new(big.Float).SetInt64(int64(i))) }

func legacyMergeObject(name string, config types.Object, planned map[string]attr.Value) (types.Object, diag.Diagnostics) {
	var diags diag.Diagnostics
	typ, ok := computedInputTypes()[name].(types.ObjectType)
	if !ok {
		diags.AddAttributeError(path.Root(name), "Internal error", "the schema does not declare this attribute as an object")
		return types.ObjectNull(nil), diags
	}
	attrs := map[string]attr.Value{}
	if !config.IsNull() && !config.IsUnknown() {
		for k, v := range config.Attributes() {
			attrs[k] = v
		}
	}
	for k, t := range typ.AttrTypes {
		if v, ok := attrs[k]; ok && !v.IsNull() {
			continue
		}
		if v, ok := planned[k]; ok {
			attrs[k] = v
		} else if _, ok := attrs[k]; !ok {
			attrs[k] = legacyNullOf(t)
		}
	}
	v, d := types.ObjectValue(typ.AttrTypes, attrs)
	diags.Append(d...)
	return v, diags
}

func legacyNullOf(t attr.Type) attr.Value {
	v, _ := t.ValueFromTerraform(context.Background(), tftypes.NewValue(t.TerraformType(context.Background()), nil))
	return v
}
