package provider

import (
	"context"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// specFromInputs turns fully known inputs into the engine's Spec. It applies
// no defaults: an unset attribute becomes the zero value or a nil pointer
// and the engine decides. The data source and the resource both call it, so
// the same configuration always means the same Spec.
//
// Problems in the free-form stage_overrides come back as engine
// diagnostics, so that the caller can report them with the plan's own in
// one pass: the decoded overrides hold every entry that could be read.
func specFromInputs(ctx context.Context, in pipelineInputs) (pipeline.Spec, pipeline.Diagnostics, diag.Diagnostics) {
	var diags diag.Diagnostics
	var overrideDiags pipeline.Diagnostics
	spec := pipeline.Spec{
		Model:         in.Model.ValueString(),
		Preset:        in.Preset.ValueString(),
		BaseConfig:    in.BaseConfig.ValueString(),
		Format:        in.Format.ValueString(),
		Pipeline:      in.Pipeline.ValueString(),
		SplitStage:    intPtr(in.SplitStage),
		GPUs:          intPtr(in.GPUs),
		APIPort:       intPtr(in.APIPort),
		ReservedPorts: intsFromSet(ctx, in.ReservedPorts, &diags),
		ConfigPath:    in.ConfigPath.ValueString(),

		VLLMOmniVersion: in.VLLMOmniVersion.ValueString(),
	}
	spec.Prefill = roleSpec(ctx, path.Root("prefill"), in.Prefill, &diags)
	spec.Decode = roleSpec(ctx, path.Root("decode"), in.Decode, &diags)
	spec.Connector = connectorSpec(ctx, in.Connector, &diags)
	spec.PortRange = portRangeSpec(in.PortRange, &diags)
	spec.Service = serviceSpec(in.Systemd, &diags)
	spec.Container = containerSpec(ctx, in.Container, &diags)

	// The engine checks the free-form overrides' shape itself, so that its
	// errors name the entry (stage_overrides.talker.devices) like any other.
	// A value goValue cannot convert is reported and left out (nil, as if
	// unset), so the engine still checks the rest in the same pass.
	overrides, err := goValue(ctx, path.Root("stage_overrides"), in.StageOverrides)
	if err != nil {
		addValueErrors(&diags, path.Root("stage_overrides"), "Invalid stage_overrides", err)
	}
	if overrides != nil {
		spec.StageOverrides, overrideDiags = pipeline.DecodeStageOverrides(overrides)
	}
	return spec, overrideDiags, diags
}

// modelOf fills the model *m from a known object. It reports false, and
// the object is taken as unset, when the object does not fit the model or
// when diags already hold an error: the inputs read after an invalid one
// are left out, so that the plan does not add problems that follow from it.
func modelOf[M any](obj types.Object, m *M, diags *diag.Diagnostics) bool {
	if err := fillModel(obj.Attributes(), m); err != nil {
		addDefect(diags, path.Empty(), "an input object cannot be read: "+err.Error())
	}
	return !diags.HasError()
}

func roleSpec(ctx context.Context, p path.Path, obj types.Object, diags *diag.Diagnostics) pipeline.RoleSpec {
	if obj.IsNull() {
		return pipeline.RoleSpec{}
	}
	var m roleModel
	if !modelOf(obj, &m, diags) {
		return pipeline.RoleSpec{}
	}
	engineArgs, err := goObject(ctx, p.AtName("engine_args"), m.EngineArgs)
	if err != nil {
		addValueErrors(diags, p.AtName("engine_args"), "Invalid engine_args", err)
	}
	return pipeline.RoleSpec{
		Devices:              intsFromList(ctx, m.Devices, diags),
		TensorParallelSize:   intPtr(m.TensorParallelSize),
		MaxNumSeqs:           intPtr(m.MaxNumSeqs),
		GPUMemoryUtilization: floatPtr(m.GPUMemoryUtilization),
		BootstrapPort:        intPtr(m.BootstrapPort),
		Host:                 m.Host.ValueString(),
		EngineArgs:           engineArgs,
	}
}

func connectorSpec(ctx context.Context, obj types.Object, diags *diag.Diagnostics) pipeline.ConnectorSpec {
	if obj.IsNull() {
		return pipeline.ConnectorSpec{}
	}
	var m connectorModel
	if !modelOf(obj, &m, diags) {
		return pipeline.ConnectorSpec{}
	}
	p := path.Root("connector").AtName("extra_config")
	extra, err := goObject(ctx, p, m.ExtraConfig)
	if err != nil {
		addValueErrors(diags, p, "Invalid extra_config", err)
	}
	return pipeline.ConnectorSpec{
		Name:        m.Name.ValueString(),
		Protocol:    m.Protocol.ValueString(),
		DeviceName:  m.DeviceName.ValueString(),
		ExtraConfig: extra,
		KVBoth:      m.KVBoth.ValueBool(),
	}
}

func serviceSpec(obj types.Object, diags *diag.Diagnostics) pipeline.ServiceSpec {
	if obj.IsNull() {
		return pipeline.ServiceSpec{}
	}
	var m systemdModel
	if !modelOf(obj, &m, diags) {
		return pipeline.ServiceSpec{}
	}
	return pipeline.ServiceSpec{
		User:            m.User.ValueString(),
		CacheDir:        m.CacheDir.ValueString(),
		VLLMPath:        m.VLLMPath.ValueString(),
		PythonPath:      m.PythonPath.ValueString(),
		EnvironmentFile: m.EnvironmentFile.ValueString(),
		UnitPrefix:      m.UnitPrefix.ValueString(),
		HeadWaitSeconds: intPtr(m.HeadWaitSeconds),
	}
}

func portRangeSpec(obj types.Object, diags *diag.Diagnostics) *pipeline.PortRange {
	if obj.IsNull() {
		return nil
	}
	var m portRangeModel
	if !modelOf(obj, &m, diags) {
		return nil
	}
	first, last := intPtr(m.First), intPtr(m.Last)
	if first == nil || last == nil {
		return nil // both are required; the framework reports a missing one
	}
	return &pipeline.PortRange{First: *first, Last: *last}
}

// intPtr maps an unset number to nil, so the engine can tell it from 0.
// The schema's validators have checked that a set number is whole and
// within an int's range.
func intPtr(v types.Number) *int {
	if v.IsNull() || v.IsUnknown() || v.ValueBigFloat() == nil {
		return nil
	}
	i64, _ := v.ValueBigFloat().Int64()
	i := int(i64)
	return &i
}

// floatPtr maps an unset number to nil and a set one to the 64-bit float
// vLLM reads; the validator has checked that reading is in range.
func floatPtr(v types.Number) *float64 {
	if v.IsNull() || v.IsUnknown() || v.ValueBigFloat() == nil {
		return nil
	}
	f, _ := v.ValueBigFloat().Float64()
	return &f
}

// intsFromList keeps the user's order: devices are listed in the order the
// stage's ranks use them.
func intsFromList(ctx context.Context, l types.List, diags *diag.Diagnostics) []int {
	if l.IsNull() || l.IsUnknown() {
		return nil
	}
	var xs []int64
	diags.Append(l.ElementsAs(ctx, &xs, false)...)
	return toInts(xs)
}

// intsFromSet sorts, so the Spec does not depend on set order.
func intsFromSet(ctx context.Context, s types.Set, diags *diag.Diagnostics) []int {
	if s.IsNull() || s.IsUnknown() {
		return nil
	}
	var xs []int64
	diags.Append(s.ElementsAs(ctx, &xs, false)...)
	out := toInts(xs)
	sort.Ints(out)
	return out
}

func toInts(xs []int64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}
