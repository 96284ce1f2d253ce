package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// previousAllocations reads the allocations an earlier plan made back from
// the resource's state, so the engine can keep the ports and devices that
// are still valid (a change to max_num_seqs must not move a firewall rule).
// Ports are keyed by name, devices by pipeline.DeviceKeys, each on the host
// the state gives it (null, as on a single host or in a state written
// before hosts existed, is ""): the keys pipeline.Allocations documents.
//
// It reads only the outputs `ports`, `stages` and `vllm_omni_release`; a
// future schema version that renames them must keep this function working
// on upgraded state.
func previousAllocations(ctx context.Context, prior priorOutputs) (*pipeline.Allocations, diag.Diagnostics) {
	var diags diag.Diagnostics
	if prior.Ports.IsNull() || prior.Ports.IsUnknown() || prior.Stages.IsNull() || prior.Stages.IsUnknown() {
		return nil, diags
	}

	// The elements are read attribute by attribute rather than with
	// ElementsAs, which reflects over the model structs on every plan of
	// every instance (PERFORMANCE.md).
	prev := &pipeline.Allocations{Ports: map[pipeline.HostKey]int{}, Devices: map[pipeline.HostKey][]int{}}
	for _, e := range prior.Ports.Elements() {
		a := objectAttributes(e)
		name, _ := a["name"].(types.String)
		port, _ := a["port"].(types.Int64)
		if name.IsNull() || name.IsUnknown() || port.IsNull() || port.IsUnknown() {
			continue // nothing to keep
		}
		prev.Ports[pipeline.HostKey{Host: hostOf(a), Name: name.ValueString()}] = int(port.ValueInt64())
	}
	// Devices are keyed by the engine's one rule (pipeline.DeviceKeys), read
	// from each stage's stage_id, role and model_stage.
	elems := prior.Stages.Elements()
	infos := make([]pipeline.StageInfo, len(elems))
	devices := make([]types.List, len(elems))
	for i, e := range elems {
		a := objectAttributes(e)
		id, _ := a["stage_id"].(types.Int64)
		role, _ := a["role"].(types.String)
		modelStage, _ := a["model_stage"].(types.String)
		devices[i], _ = a["devices"].(types.List)
		infos[i] = pipeline.StageInfo{StageID: int(id.ValueInt64()), Role: role.ValueString(), ModelStage: modelStage.ValueString(), Host: hostOf(a)}
	}
	for i, key := range pipeline.DeviceKeys(infos) {
		prev.Devices[pipeline.HostKey{Host: infos[i].Host, Name: key}] = intsFromList(ctx, devices[i], &diags)
	}
	// The first stage is the head, which serves the API.
	if len(infos) > 0 {
		prev.Head = infos[0].Host
	}
	if !prior.Release.IsNull() && !prior.Release.IsUnknown() {
		prev.Release = prior.Release.ValueString()
	}
	return prev, diags
}

// priorOutputs are the outputs of an earlier plan that the next one keeps
// what it can of (previousAllocations).
type priorOutputs struct {
	Ports, Stages types.List
	Release       types.String
}

// readPriorOutputs reads them from a resource's state or plan.
func readPriorOutputs(ctx context.Context, state attributeGetter) (priorOutputs, diag.Diagnostics) {
	var prior priorOutputs
	diags := state.GetAttribute(ctx, path.Root("ports"), &prior.Ports)
	diags.Append(state.GetAttribute(ctx, path.Root("stages"), &prior.Stages)...)
	diags.Append(state.GetAttribute(ctx, path.Root("vllm_omni_release"), &prior.Release)...)
	return prior, diags
}

// attributeGetter is what tfsdk.State and tfsdk.Plan have in common for
// reading one attribute.
type attributeGetter interface {
	GetAttribute(ctx context.Context, p path.Path, target any) diag.Diagnostics
}

// hostOf is a port's or a stage's host in state, "" when null (a single
// host, or a state written before hosts existed).
func hostOf(attrs map[string]attr.Value) string {
	h, _ := attrs["host"].(types.String)
	return h.ValueString()
}

// objectAttributes is an object value's attributes; none for anything else.
func objectAttributes(v attr.Value) map[string]attr.Value {
	if o, ok := v.(types.Object); ok {
		return o.Attributes()
	}
	return nil
}
