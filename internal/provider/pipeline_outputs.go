package provider

import (
	"context"
	"fmt"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// attributeSetter is what tfsdk.Plan and tfsdk.State have in common: the
// resource writes its outputs into the plan, the data source into its state.
type attributeSetter interface {
	SetAttribute(ctx context.Context, p path.Path, val any) diag.Diagnostics
}

// plannedOutputs are the computed attributes by schema name, as Terraform
// values: what the data source's Read and the resource's ModifyPlan write into the state or the
// plan.
type plannedOutputs map[string]tftypes.Value

// outputsFromResult converts the engine's Result to the computed
// attributes: every output, each as its row of pipelineOutputTable builds
// it, and the computed inputs as planned (addPlannedInputs, effectiveObjects).
func outputsFromResult(ctx context.Context, in pipelineInputs, r *pipeline.Result) (out plannedOutputs, diags diag.Diagnostics) {
	// The values' types are the schema's, derived from the same rows, so a
	// value of another type (which tftypes.NewValue panics on) is a
	// programming error that every test run hits; it is still reported,
	// not a crash.
	defer func() {
		if p := recover(); p != nil {
			out = nil
			addDefect(&diags, path.Empty(), fmt.Sprintf("the outputs do not match the schema: %v", p))
		}
	}()
	out = make(plannedOutputs, len(pipelineOutputTable)+len(pipelineComputedInputs))
	for _, o := range pipelineOutputTable {
		out[o.name] = o.terraform(r)
	}
	addPlannedInputs(out, r)
	// The nested computed inputs: the configuration's objects with the
	// planned values where they leave a computed field unset.
	effective, d := effectiveObjects(ctx, in, r)
	diags.Append(d...)
	for name, tv := range effective {
		out[name] = tv
	}
	return out, diags
}

// addPlannedInputs adds the values the top-level computed inputs read
// back: what the plan used, as given or chosen.
func addPlannedInputs(out plannedOutputs, r *pipeline.Result) {
	out["preset"] = tfStrOrNull(r.Preset)
	out["vllm_omni_version"] = tfStr(r.Version)
	out["config_path"] = tfStr(r.ConfigPath)
	out["api_port"] = tfInt(r.APIPort)
	out["format"] = tfStr(r.Format)
}

// writeUnknownOutputs marks every output unknown: what Terraform shows as
// "known after apply" while an input is still unknown. A computed input is
// marked unknown too where the configuration leaves it unset (config is the
// configuration value, or a plan that holds the same inputs).
func writeUnknownOutputs(ctx context.Context, target attributeSetter, config tftypes.Value) diag.Diagnostics {
	unknown := map[string]attr.Type{}
	for name, t := range outputTypes() {
		unknown[name] = t
	}
	vals := make(map[string]attr.Value, len(unknown))
	tvals := make(map[string]tftypes.Value, len(unknown)+len(pipelineComputedInputs))
	for _, name := range pipelineComputedInputs {
		given := attributeOf(config, name)
		switch {
		case nestedComputedInputs[name] != nil:
			// The same rule as after a plan, with every planned value
			// unknown (effectiveObject).
			tv, err := effectiveObject(name, given, nil)
			if err != nil {
				var diags diag.Diagnostics
				addDefect(&diags, path.Root(name), err.Error())
				return diags
			}
			tvals[name] = tv
		case given.IsNull():
			unknown[name] = computedInputTypes()[name]
		}
	}
	for name, t := range unknown {
		v, err := t.ValueFromTerraform(ctx, tftypes.NewValue(t.TerraformType(ctx), tftypes.UnknownValue))
		if err != nil {
			var diags diag.Diagnostics
			addDefect(&diags, path.Root(name), err.Error())
			return diags
		}
		vals[name] = v
	}
	for name, v := range vals {
		tv, err := v.ToTerraformValue(ctx)
		if err != nil {
			var diags diag.Diagnostics
			addDefect(&diags, path.Root(name), err.Error())
			return diags
		}
		tvals[name] = tv
	}
	return setOutputs(ctx, target, tvals)
}

// setOutputs writes top-level attributes (the outputs, and the computed
// inputs as planned) into a plan or a state and leaves the other inputs
// untouched. It builds the new object once: SetAttribute rebuilds the
// whole value and resolves the path through the schema on every call, once
// per attribute written, and Set of the whole model finds the struct's
// fields again and converts every value, on every plan of every instance
// (BenchmarkWriteOutputs against BenchmarkWriteStateSet measures the
// difference). Any other target goes through SetAttribute, with each value
// read back into the framework value of the schema's type.
func setOutputs(ctx context.Context, target attributeSetter, vals map[string]tftypes.Value) diag.Diagnostics {
	var diags diag.Diagnostics
	var raw *tftypes.Value
	switch t := target.(type) {
	case *tfsdk.State:
		raw = &t.Raw
	case *tfsdk.Plan:
		raw = &t.Raw
	}
	var current map[string]tftypes.Value
	if raw == nil || raw.IsNull() || !raw.IsKnown() || raw.As(&current) != nil {
		for name, tv := range vals {
			t, ok := outputTypes()[name]
			if !ok {
				t = computedInputTypes()[name]
			}
			if t == nil {
				addDefect(&diags, path.Root(name), "the schema declares no computed attribute of this name")
				continue
			}
			v, err := t.ValueFromTerraform(ctx, tv)
			if err != nil {
				addDefect(&diags, path.Root(name), err.Error())
				continue
			}
			diags.Append(target.SetAttribute(ctx, path.Root(name), v)...)
		}
		return diags
	}
	// As hands out the value's own map, which other values may share.
	attrs := make(map[string]tftypes.Value, len(current))
	for name, v := range current {
		attrs[name] = v
	}
	for name, v := range vals {
		attrs[name] = v
	}
	if err := tftypes.ValidateValue(raw.Type(), attrs); err != nil {
		addDefect(&diags, path.Empty(), "the outputs do not match the schema: "+err.Error())
		return diags
	}
	*raw = tftypes.NewValue(raw.Type(), attrs)
	return diags
}

// computedInputTypes are the computed inputs' types, from the schema.
var computedInputTypes = sync.OnceValue(func() map[string]attr.Type {
	out := map[string]attr.Type{}
	inputs := pipelineInputAttributes()
	for _, name := range pipelineComputedInputs {
		out[name] = inputs[name].GetType()
	}
	return out
})

// outputTypes are the outputs' types, from the schema, built once.
var outputTypes = sync.OnceValue(func() map[string]attr.Type {
	out := map[string]attr.Type{}
	for name, a := range pipelineOutputAttributes() {
		out[name] = a.GetType()
	}
	return out
})

// outputElemType is the element type of a list output, from the schema, so
// that framework values built for an output (parse_stage_config's edges,
// the tests' models) match what the schema declares.
// Asking for a name that is not a list output is a programming error, which
// every test run catches.
func outputElemType(name string) attr.Type {
	l, ok := outputTypes()[name].(types.ListType)
	if !ok {
		panic("output " + name + " is not a list")
	}
	return l.ElemType
}

// outputObjectType is the object type of a list-of-objects output.
func outputObjectType(name string) types.ObjectType {
	o, ok := outputElemType(name).(types.ObjectType)
	if !ok {
		panic("output " + name + " is not a list of objects")
	}
	return o
}

func int64List(xs []int) types.List {
	elems := make([]attr.Value, len(xs))
	for i, x := range xs {
		elems[i] = types.Int64Value(int64(x))
	}
	return types.ListValueMust(types.Int64Type, elems)
}

func tfInt(i int) tftypes.Value { return tftypes.NewValue(tftypes.Number, int64(i)) }

func tfStr(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }

func tfIntPointer(p *int) tftypes.Value {
	if p == nil {
		return tftypes.NewValue(tftypes.Number, nil)
	}
	return tfInt(*p)
}

func tfStrPointer(p *string) tftypes.Value {
	if p == nil {
		return tftypes.NewValue(tftypes.String, nil)
	}
	return tfStr(*p)
}

// tfStrOrNull: the engine says "one host" with "", Terraform with null.
func tfStrOrNull(s string) tftypes.Value {
	if s == "" {
		return tftypes.NewValue(tftypes.String, nil)
	}
	return tfStr(s)
}

// tfInts and tfStrs make a nil slice an empty list, never null.
func tfInts(t tftypes.List, xs []int) tftypes.Value {
	elems := make([]tftypes.Value, len(xs))
	for i, x := range xs {
		elems[i] = tftypes.NewValue(t.ElementType, int64(x))
	}
	return tftypes.NewValue(t, elems)
}

func tfStrs(t tftypes.List, xs []string) tftypes.Value {
	elems := make([]tftypes.Value, len(xs))
	for i, x := range xs {
		elems[i] = tftypes.NewValue(t.ElementType, x)
	}
	return tftypes.NewValue(t, elems)
}

// tfStrMap makes a nil map an empty one, never null.
func tfStrMap(t tftypes.Map, m map[string]string) tftypes.Value {
	elems := make(map[string]tftypes.Value, len(m))
	for k, v := range m {
		elems[k] = tftypes.NewValue(t.ElementType, v)
	}
	return tftypes.NewValue(t, elems)
}
