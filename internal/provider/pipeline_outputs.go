package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
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
func outputsFromResult(ctx context.Context, r *pipeline.Result) (pipelineOutputs, diag.Diagnostics) {
	var diags diag.Diagnostics
	list := func(name string, elems any) types.List {
		v, d := types.ListValueFrom(ctx, outputElemType(name), elems)
		diags.Append(d...)
		return v
	}

	stages := make([]stageModel, len(r.Stages))
	for i, s := range r.Stages {
		stages[i] = stageModel{
			StageID:            types.Int64Value(int64(s.StageID)),
			Role:               types.StringValue(s.Role),
			ModelStage:         types.StringValue(s.ModelStage),
			Devices:            int64List(s.Devices),
			TensorParallelSize: types.Int64Value(int64(s.TensorParallelSize)),
			Inputs:             int64List(s.Inputs),
			KVRole:             types.StringPointerValue(s.KVRole),
			BootstrapPort:      int64Pointer(s.BootstrapPort),
			Host:               nullIfEmpty(s.Host),
		}
	}
	edges := make([]edgeModel, len(r.Edges))
	for i, e := range r.Edges {
		edges[i] = edgeModel{From: types.Int64Value(int64(e.From)), To: types.Int64Value(int64(e.To))}
	}
	ports := make([]portModel, len(r.Ports))
	for i, p := range r.Ports {
		ports[i] = portModel{
			Name:    types.StringValue(p.Name),
			Port:    types.Int64Value(int64(p.Port)),
			StageID: int64Pointer(p.StageID),
			Host:    nullIfEmpty(p.Host),
		}
	}
	launches := make([]launchModel, len(r.Launches))
	for i, l := range r.Launches {
		env, d := types.MapValueFrom(ctx, types.StringType, nonNilMap(l.Env))
		diags.Append(d...)
		launches[i] = launchModel{
			Host:     nullIfEmpty(l.Host),
			StageIDs: int64List(l.StageIDs),
			Argv:     stringList(l.Argv),
			Command:  types.StringValue(l.Command),
			Env:      env,
			Ports:    int64List(l.Ports),
		}
	}

	return pipelineOutputs{
		ID:           types.StringValue(r.ID),
		ConfigYAML:   types.StringValue(r.ConfigYAML),
		Stages:       list("stages", stages),
		Edges:        list("edges", edges),
		Ports:        list("ports", ports),
		GPUCount:     types.Int64Value(int64(r.GPUCount)),
		ServeCommand: types.StringValue(r.ServeCommand),
		ServeArgs:    stringList(r.ServeArgs),
		Diagram:      types.StringValue(r.Diagram),
		Launches:     list("launches", launches),
	}, diags
}

// attributes pairs each output with its schema name.
func (o pipelineOutputs) attributes() map[string]attr.Value {
	return map[string]attr.Value{
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
	}
}

// writeOutputs sets every output and leaves the inputs untouched.
func writeOutputs(ctx context.Context, target attributeSetter, o pipelineOutputs) diag.Diagnostics {
	var diags diag.Diagnostics
	for name, v := range o.attributes() {
		diags.Append(target.SetAttribute(ctx, path.Root(name), v)...)
	}
	return diags
}

// writeUnknownOutputs marks every output unknown: what Terraform shows as
// "known after apply" while an input is still unknown.
func writeUnknownOutputs(ctx context.Context, target attributeSetter) diag.Diagnostics {
	var diags diag.Diagnostics
	for name, a := range pipelineOutputAttributes() {
		v, err := a.GetType().ValueFromTerraform(ctx, tftypes.NewValue(a.GetType().TerraformType(ctx), tftypes.UnknownValue))
		if err != nil {
			diags.AddAttributeError(path.Root(name), "Internal error", err.Error())
			continue
		}
		diags.Append(target.SetAttribute(ctx, path.Root(name), v)...)
	}
	return diags
}

// outputElemType is the element type of a list output, from the schema, so
// the values built here always match what the schema declares.
// Asking for a name that is not a list output is a programming error, which
// every test run catches.
func outputElemType(name string) attr.Type {
	l, ok := pipelineOutputAttributes()[name].GetType().(types.ListType)
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

// nonNilMap makes a launch without environment an empty map, not null, so
// `length(launch.env)` and `merge()` work without a null check.
func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
