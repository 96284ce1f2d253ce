package provider

import (
	"context"
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

// outputsFromResult converts the engine's Result to the computed attributes.
// It builds the framework values directly: types.ListValueFrom would walk
// the model structs by reflection, which costs more than the plan itself
// (PERFORMANCE.md). The model structs (stageModel, ...) are what the
// values read back into; TestOutputsRoundTrip checks the two agree.
func outputsFromResult(_ context.Context, in pipelineInputs, r *pipeline.Result) (pipelineOutputs, diag.Diagnostics) {
	var diags diag.Diagnostics
	objects := func(name string, n int, attrs func(i int) map[string]attr.Value) types.List {
		t := outputObjectType(name)
		elems := make([]attr.Value, n)
		for i := range elems {
			o, d := types.ObjectValue(t.AttrTypes, attrs(i))
			diags.Append(d...)
			elems[i] = o
		}
		l, d := types.ListValue(t, elems)
		diags.Append(d...)
		return l
	}

	stages := objects("stages", len(r.Stages), func(i int) map[string]attr.Value {
		s := r.Stages[i]
		return map[string]attr.Value{
			"stage_id":             types.Int64Value(int64(s.StageID)),
			"role":                 types.StringValue(s.Role),
			"model_stage":          types.StringValue(s.ModelStage),
			"devices":              int64List(s.Devices),
			"tensor_parallel_size": types.Int64Value(int64(s.TensorParallelSize)),
			"inputs":               int64List(s.Inputs),
			"kv_role":              types.StringPointerValue(s.KVRole),
			"bootstrap_port":       int64Pointer(s.BootstrapPort),
			"host":                 nullIfEmpty(s.Host),
		}
	})
	edges := objects("edges", len(r.Edges), func(i int) map[string]attr.Value {
		e := r.Edges[i]
		return map[string]attr.Value{"from": types.Int64Value(int64(e.From)), "to": types.Int64Value(int64(e.To))}
	})
	ports := objects("ports", len(r.Ports), func(i int) map[string]attr.Value {
		p := r.Ports[i]
		return map[string]attr.Value{
			"name":     types.StringValue(p.Name),
			"port":     types.Int64Value(int64(p.Port)),
			"stage_id": int64Pointer(p.StageID),
			"host":     nullIfEmpty(p.Host),
		}
	})
	processType := nestedObjectType(outputObjectType("launches"), "processes")
	portType := nestedObjectType(processType, "ports")
	launches := objects("launches", len(r.Launches), func(i int) map[string]attr.Value {
		l := r.Launches[i]
		procs := make([]attr.Value, len(l.Processes))
		for j, p := range l.Processes {
			ports := make([]attr.Value, len(p.Ports))
			for k, np := range p.Ports {
				o, d := types.ObjectValue(portType.AttrTypes, map[string]attr.Value{"name": types.StringValue(np.Name), "port": types.Int64Value(int64(np.Port))})
				diags.Append(d...)
				ports[k] = o
			}
			portList, d := types.ListValue(portType, ports)
			diags.Append(d...)
			o, d := types.ObjectValue(processType.AttrTypes, map[string]attr.Value{
				"stage_id":          int64Pointer(p.StageID),
				"role":              types.StringValue(p.Role),
				"argv":              stringList(p.Argv),
				"command":           types.StringValue(p.Command),
				"env":               stringMap(p.Env),
				"devices":           int64List(p.Devices),
				"ports":             portList,
				"unit_name":         types.StringValue(p.UnitName),
				"systemd_unit":      types.StringValue(p.SystemdUnit),
				"preflight":         stringList(p.Preflight),
				"preflight_command": types.StringValue(p.PreflightCommand),
			})
			diags.Append(d...)
			procs[j] = o
		}
		procList, d := types.ListValue(processType, procs)
		diags.Append(d...)
		argv := types.ListNull(types.StringType)
		if l.Argv != nil {
			argv = stringList(l.Argv)
		}
		return map[string]attr.Value{
			"host":      types.StringValue(l.Host),
			"stage_ids": int64List(l.StageIDs),
			"argv":      argv,
			"command":   nullIfEmpty(l.Command),
			"env":       stringMap(l.Env),
			"ports":     int64List(l.Ports),
			"gpu_count": types.Int64Value(int64(l.GPUCount)),
			"processes": procList,
		}
	})

	healthType, _ := outputTypes()["health"].(types.ObjectType)
	health, d := types.ObjectValue(healthType.AttrTypes, map[string]attr.Value{
		"host":              types.StringValue(r.Health.Host),
		"port":              types.Int64Value(int64(r.Health.Port)),
		"liveness_url":      types.StringValue(r.Health.LivenessURL),
		"readiness_url":     types.StringValue(r.Health.ReadinessURL),
		"readiness_argv":    stringList(r.Health.ReadinessArgv),
		"readiness_command": types.StringValue(pipeline.ShellJoin(r.Health.ReadinessArgv)),
	})
	diags.Append(d...)

	effective, d := effectiveObjects(in, r)
	diags.Append(d...)

	return pipelineOutputs{
		EffectiveObjects: effective,

		ID:           types.StringValue(r.ID),
		ConfigYAML:   types.StringValue(r.ConfigYAML),
		Stages:       stages,
		Edges:        edges,
		Ports:        ports,
		GPUCount:     types.Int64Value(int64(r.GPUCount)),
		ServeCommand: types.StringValue(r.ServeCommand),
		ServeArgs:    stringList(r.ServeArgs),
		Diagram:      types.StringValue(r.Diagram),
		Launches:     launches,
		Release:      types.StringValue(r.Release),
		ConfigSHA256: types.StringValue(r.ConfigSHA256),
		Health:       health,

		EffectiveVersion:    types.StringValue(r.Version),
		EffectiveConfigPath: types.StringValue(r.ConfigPath),
		EffectiveAPIPort:    number(r.APIPort),
		EffectiveFormat:     types.StringValue(r.Format),
	}, diags
}

// attributes pairs each output with its schema name.
func (o pipelineOutputs) attributes() map[string]attr.Value {
	out := map[string]attr.Value{
		"id":            o.ID,
		"config_yaml":   o.ConfigYAML,
		"stages":        o.Stages,
		"edges":         o.Edges,
		"ports":         o.Ports,
		"gpu_count":     o.GPUCount,
		"serve_command": o.ServeCommand,
		"serve_args":    o.ServeArgs,
		"diagram":       o.Diagram,
		"launches":      o.Launches,

		"vllm_omni_release": o.Release,
		"config_sha256":     o.ConfigSHA256,
		"health":            o.Health,
		"vllm_omni_version": o.EffectiveVersion,
		"config_path":       o.EffectiveConfigPath,
		"api_port":          o.EffectiveAPIPort,
		"format":            o.EffectiveFormat,
	}
	for name := range nestedComputedInputs {
		out[name] = o.EffectiveObjects[name]
	}
	return out
}

// writeOutputs sets every output and leaves the inputs untouched.
func writeOutputs(ctx context.Context, target attributeSetter, o pipelineOutputs) diag.Diagnostics {
	return setOutputs(ctx, target, o.attributes())
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
	for _, name := range pipelineComputedInputs {
		given := attributeOf(config, name)
		switch {
		case given.IsNull():
			unknown[name] = computedInputTypes()[name]
		case nestedComputedInputs[name] != nil:
			// Set, but its computed fields may be unset.
			tv, err := unknownComputedFields(ctx, name, given)
			if err == nil {
				var v attr.Value
				v, err = computedInputTypes()[name].ValueFromTerraform(ctx, tv)
				vals[name] = v
			}
			if err != nil {
				var diags diag.Diagnostics
				diags.AddAttributeError(path.Root(name), "Internal error", err.Error())
				return diags
			}
		}
	}
	for name, t := range unknown {
		v, err := t.ValueFromTerraform(ctx, tftypes.NewValue(t.TerraformType(ctx), tftypes.UnknownValue))
		if err != nil {
			var diags diag.Diagnostics
			diags.AddAttributeError(path.Root(name), "Internal error", err.Error())
			return diags
		}
		vals[name] = v
	}
	return setOutputs(ctx, target, vals)
}

// setOutputs writes top-level attributes into a plan or a state. It builds
// the new object once: SetAttribute rebuilds the whole value and resolves
// the path through the schema on every call, ten times per plan, and Set
// of the whole model finds the struct's fields again and converts every
// input back: on the seed's read, 1 938 allocations here against 8 765
// (BenchmarkWriteOutputs, BenchmarkWriteStateSet), on every plan of every
// instance. Any other target goes through SetAttribute.
func setOutputs(ctx context.Context, target attributeSetter, vals map[string]attr.Value) diag.Diagnostics {
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
		for name, v := range vals {
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
		tv, err := v.ToTerraformValue(ctx)
		if err != nil {
			diags.AddAttributeError(path.Root(name), "Internal error", err.Error())
			return diags
		}
		attrs[name] = tv
	}
	if err := tftypes.ValidateValue(raw.Type(), attrs); err != nil {
		diags.AddError("Internal error", "the outputs do not match the schema: "+err.Error())
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
// the values built here always match what the schema declares.
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

// nestedObjectType is the object type of a list-of-objects attribute
// inside an object type.
func nestedObjectType(parent types.ObjectType, name string) types.ObjectType {
	l, ok := parent.AttrTypes[name].(types.ListType)
	if !ok {
		panic("attribute " + name + " is not a list")
	}
	o, ok := l.ElemType.(types.ObjectType)
	if !ok {
		panic("attribute " + name + " is not a list of objects")
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

func stringList(xs []string) types.List {
	elems := make([]attr.Value, len(xs))
	for i, x := range xs {
		elems[i] = types.StringValue(x)
	}
	return types.ListValueMust(types.StringType, elems)
}

func int64Pointer(p *int) types.Int64 {
	if p == nil {
		return types.Int64Null()
	}
	return types.Int64Value(int64(*p))
}

// nullIfEmpty: the engine says "one host" with "", Terraform with null.
func nullIfEmpty(s string) types.String {
	if s == "" {
		return types.StringNull()
	}
	return types.StringValue(s)
}

// stringMap makes a launch without environment an empty map, not null, so
// `length(launch.env)` and `merge()` work without a null check.
func stringMap(m map[string]string) types.Map {
	elems := make(map[string]attr.Value, len(m))
	for k, v := range m {
		elems[k] = types.StringValue(v)
	}
	return types.MapValueMust(types.StringType, elems)
}
