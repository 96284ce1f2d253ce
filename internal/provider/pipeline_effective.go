package provider

import (
	"context"
	"errors"
	"fmt"
	"sync"

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
// (null when unset). While the plan cannot be made yet, "the planned value"
// is unknown. effectiveObject is that one rule, for both cases.

// effectiveObject is the value the nested computed input name reads back,
// given its configuration value and planned, the values the plan chose for
// its computed fields, or nil while the plan cannot be made (an input is
// unknown):
//
//   - config null (or unknown): the planned object, with only the computed
//     fields set; unknown as a whole while there is no plan.
//   - config set: config, with each computed field it leaves null set to the
//     planned value, or unknown while there is no plan. Every other field,
//     engine_args and extra_config included, is config's, untouched.
func effectiveObject(name string, config tftypes.Value, planned map[string]tftypes.Value) (tftypes.Value, error) {
	typ, ok := nestedInputTypes()[name]
	if !ok {
		return tftypes.Value{}, errors.New("the schema does not declare this attribute as an object")
	}
	given := config.IsKnown() && !config.IsNull()
	if !given && planned == nil {
		return tftypes.NewValue(typ, tftypes.UnknownValue), nil
	}
	var written map[string]tftypes.Value
	if given {
		if err := config.As(&written); err != nil {
			return tftypes.Value{}, err
		}
	}
	out := make(map[string]tftypes.Value, len(typ.AttributeTypes))
	for k, t := range typ.AttributeTypes {
		if v, ok := written[k]; ok {
			out[k] = v
		} else {
			out[k] = tftypes.NewValue(t, nil)
		}
	}
	for _, k := range nestedComputedInputs[name] {
		if !out[k].IsNull() {
			continue // as written, known or not
		}
		if planned == nil {
			out[k] = tftypes.NewValue(typ.AttributeTypes[k], tftypes.UnknownValue)
			continue
		}
		v, ok := planned[k]
		if !ok {
			return tftypes.Value{}, fmt.Errorf("no planned value for %s.%s", name, k)
		}
		out[k] = v
	}
	if err := tftypes.ValidateValue(typ, out); err != nil {
		return tftypes.Value{}, err
	}
	return tftypes.NewValue(typ, out), nil
}

// effectiveObjects returns prefill, decode, connector and port_range as
// they read back after planning in from r.
func effectiveObjects(ctx context.Context, in pipelineInputs, r *pipeline.Result) (map[string]tftypes.Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	out := make(map[string]tftypes.Value, len(nestedComputedInputs))
	set := func(name string, config types.Object, planned map[string]tftypes.Value) {
		c, err := config.ToTerraformValue(ctx)
		if err == nil {
			out[name], err = effectiveObject(name, c, planned)
		}
		if err != nil {
			delete(out, name)
			addDefect(&diags, path.Root(name), err.Error())
		}
	}
	t := nestedInputTypes()
	set("prefill", in.Prefill, plannedRole(t["prefill"], r.Prefill))
	set("decode", in.Decode, plannedRole(t["decode"], r.Decode))
	set("connector", in.Connector, map[string]tftypes.Value{"name": tfStr(r.Connector)})
	set("port_range", in.PortRange, map[string]tftypes.Value{"first": tfInt(r.PortRange.First), "last": tfInt(r.PortRange.Last)})
	return out, diags
}

// plannedRole is the planned values of prefill's or decode's computed
// fields; bootstrap_port is null where the connector has none.
func plannedRole(t tftypes.Object, s pipeline.RoleSettings) map[string]tftypes.Value {
	devices, _ := t.AttributeTypes["devices"].(tftypes.List)
	return map[string]tftypes.Value{
		"devices":              tfInts(devices, s.Devices),
		"tensor_parallel_size": tfInt(s.TensorParallelSize),
		"max_num_seqs":         tfInt(s.MaxNumSeqs),
		"bootstrap_port":       tfIntPointer(s.BootstrapPort),
	}
}

// nestedInputTypes are the Terraform types of the nested computed inputs,
// from the schema, built once.
var nestedInputTypes = sync.OnceValue(func() map[string]tftypes.Object {
	out := make(map[string]tftypes.Object, len(nestedComputedInputs))
	for name := range nestedComputedInputs {
		if t, ok := computedInputTypes()[name].TerraformType(context.Background()).(tftypes.Object); ok {
			out[name] = t
		}
	}
	return out
})
