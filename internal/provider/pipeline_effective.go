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

// The nested inputs with defaults (nestedComputedInputs) read back what the
// plan used, as HashiCorp's providers do for their defaults: each computed
// field the configuration leaves unset holds the planned value, everything
// the user wrote is kept exactly, and the other fields stay as written
// (null when unset).

// effectiveObjects returns prefill, decode, connector and port_range as
// they read back after planning in from r.
func effectiveObjects(in pipelineInputs, r *pipeline.Result) (map[string]attr.Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	out := map[string]attr.Value{}
	set := func(name string, config types.Object, planned map[string]attr.Value) {
		v, d := mergeObject(name, config, planned)
		diags.Append(d...)
		out[name] = v
	}
	set("prefill", in.Prefill, roleValues(r.Prefill))
	set("decode", in.Decode, roleValues(r.Decode))
	set("connector", in.Connector, map[string]attr.Value{"name": types.StringValue(r.Connector)})
	set("port_range", in.PortRange, map[string]attr.Value{"first": number(r.PortRange.First), "last": number(r.PortRange.Last)})
	return out, diags
}

func roleValues(s pipeline.RoleSettings) map[string]attr.Value {
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

// mergeObject is config with each computed field it leaves null set from
// planned; a null config object becomes one with only those fields set.
func mergeObject(name string, config types.Object, planned map[string]attr.Value) (types.Object, diag.Diagnostics) {
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
			attrs[k] = nullOf(t)
		}
	}
	v, d := types.ObjectValue(typ.AttrTypes, attrs)
	diags.Append(d...)
	return v, diags
}

// unknownComputedFields is the value a nested computed input takes while the
// plan cannot be made yet: unknown as a whole when config leaves it unset,
// else config with its unset computed fields unknown.
func unknownComputedFields(ctx context.Context, name string, config tftypes.Value) (tftypes.Value, error) {
	typ := computedInputTypes()[name].TerraformType(ctx)
	if config.IsNull() || !config.IsKnown() {
		return tftypes.NewValue(typ, tftypes.UnknownValue), nil
	}
	var attrs map[string]tftypes.Value
	if err := config.As(&attrs); err != nil {
		return config, err
	}
	out := make(map[string]tftypes.Value, len(attrs))
	for k, v := range attrs {
		out[k] = v
	}
	for _, k := range nestedComputedInputs[name] {
		if v := out[k]; v.IsNull() {
			out[k] = tftypes.NewValue(v.Type(), tftypes.UnknownValue)
		}
	}
	return tftypes.NewValue(typ, out), nil
}

func nullOf(t attr.Type) attr.Value {
	v, _ := t.ValueFromTerraform(context.Background(), tftypes.NewValue(t.TerraformType(context.Background()), nil))
	return v
}
