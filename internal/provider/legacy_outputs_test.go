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

// The outputs as the provider built them before outputsFromResult made
// Terraform values directly: framework values first, converted one
// attribute at a time. It is kept only as the reference that
// TestOutputsFromResult_MatchesFrameworkBuilder compares the direct
// builder with.

// legacyOutputs are the framework values the old builder made.
type legacyOutputs struct {
	ID, ConfigYAML, ServeCommand, Diagram, Release, ConfigSHA256, CheckScript types.String
	Stages, Edges, Ports, ServeArgs, Launches                                 types.List
	GPUCount                                                                  types.Int64
	Health, SystemdUnit                                                       types.Object
	EffectivePreset                                                           types.String
	EffectiveVersion                                                          types.String
	EffectiveConfigPath                                                       types.String
	EffectiveAPIPort                                                          types.Number
	EffectiveFormat                                                           types.String
	EffectiveObjects                                                          map[string]attr.Value
}

// legacyOutputValues are the values the old setOutputs wrote: each
// attribute's framework value converted with ToTerraformValue.
func legacyOutputValues(ctx context.Context, in pipelineInputs, r *pipeline.Result) (map[string]tftypes.Value, diag.Diagnostics) {
	o, diags := legacyOutputsFromResult(ctx, in, r)
	out := map[string]tftypes.Value{}
	for name, v := range o.attributes() {
		tv, err := v.ToTerraformValue(ctx)
		if err != nil {
			diags.AddError(name, err.Error())
		}
		out[name] = tv
	}
	return out, diags
}

// legacyOutputsFromResult is the Result as framework values.
func legacyOutputsFromResult(_ context.Context, in pipelineInputs, r *pipeline.Result) (legacyOutputs, diag.Diagnostics) {
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
	fileType, _ := processType.AttrTypes["systemd_dropin"].(types.ObjectType)
	file := func(f *pipeline.UnitFile) attr.Value {
		if f == nil {
			return types.ObjectNull(fileType.AttrTypes)
		}
		o, d := types.ObjectValue(fileType.AttrTypes, map[string]attr.Value{"path": types.StringValue(f.Path), "content": types.StringValue(f.Content)})
		diags.Append(d...)
		return o
	}
	launches := objects("launches", len(r.Launches), func(i int) map[string]attr.Value {
		l := r.Launches[i]
		procs := make([]attr.Value, len(l.Processes))
		for j, p := range l.Processes {
			o, d := types.ObjectValue(processType.AttrTypes, map[string]attr.Value{
				"stage_id":       int64Pointer(p.StageID),
				"role":           types.StringValue(p.Role),
				"unit_name":      types.StringValue(p.UnitName),
				"systemd_dropin": file(p.DropIn),
			})
			diags.Append(d...)
			procs[j] = o
		}
		procList, d := types.ListValue(processType, procs)
		diags.Append(d...)
		return map[string]attr.Value{
			"host":      types.StringValue(l.Host),
			"stage_ids": int64List(l.StageIDs),
			"env":       stringMap(l.Env),
			"ports":     int64List(l.Ports),
			"gpu_count": types.Int64Value(int64(l.GPUCount)),
			"processes": procList,
		}
	})
	unitType, _ := outputTypes()["systemd_unit"].(types.ObjectType)
	unit, d := types.ObjectValue(unitType.AttrTypes, map[string]attr.Value{"path": types.StringValue(r.SystemdUnit.Path), "content": types.StringValue(r.SystemdUnit.Content)})
	diags.Append(d...)

	healthType, _ := outputTypes()["health"].(types.ObjectType)
	health, d := types.ObjectValue(healthType.AttrTypes, map[string]attr.Value{
		"host":              types.StringValue(r.Health.Host),
		"port":              types.Int64Value(int64(r.Health.Port)),
		"liveness_url":      types.StringValue(r.Health.LivenessURL),
		"readiness_url":     types.StringValue(r.Health.ReadinessURL),
		"readiness_command": types.StringValue(r.Health.ReadinessCommand),
		"smoke_url":         types.StringValue(r.Health.SmokeURL),
		"smoke_command":     types.StringValue(r.Health.SmokeCommand),
	})
	diags.Append(d...)

	effective, d := legacyEffectiveObjects(in, r)
	diags.Append(d...)

	preset := types.StringNull()
	if r.Preset != "" {
		preset = types.StringValue(r.Preset)
	}
	return legacyOutputs{
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
		SystemdUnit:  unit,
		CheckScript:  types.StringValue(r.CheckScriptPath),
		Release:      types.StringValue(r.Release),
		ConfigSHA256: types.StringValue(r.ConfigSHA256),
		Health:       health,

		EffectivePreset:     preset,
		EffectiveVersion:    types.StringValue(r.Version),
		EffectiveConfigPath: types.StringValue(r.ConfigPath),
		EffectiveAPIPort:    number(r.APIPort),
		EffectiveFormat:     types.StringValue(r.Format),
	}, diags
}

// attributes pairs each output with its schema name.
func (o legacyOutputs) attributes() map[string]attr.Value {
	out := map[string]attr.Value{
		"id":                o.ID,
		"config_yaml":       o.ConfigYAML,
		"stages":            o.Stages,
		"edges":             o.Edges,
		"ports":             o.Ports,
		"gpu_count":         o.GPUCount,
		"serve_command":     o.ServeCommand,
		"serve_args":        o.ServeArgs,
		"diagram":           o.Diagram,
		"launches":          o.Launches,
		"systemd_unit":      o.SystemdUnit,
		"check_script_path": o.CheckScript,

		"vllm_omni_release": o.Release,
		"config_sha256":     o.ConfigSHA256,
		"health":            o.Health,
		"preset":            o.EffectivePreset,
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
