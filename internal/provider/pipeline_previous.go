package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// previousAllocations reads the allocations an earlier plan made back from
// the resource's state, so the engine can keep the ports and devices that
// are still valid (a change to max_num_seqs must not move a firewall rule).
// Ports are keyed by name, devices by "prefill", "decode" or the stage's
// model_stage, the keys pipeline.Allocations documents.
//
// It reads only the outputs `ports` and `stages`; a future schema version
// that renames them must keep this function working on upgraded state.
func previousAllocations(ctx context.Context, prior pipelineOutputs) (*pipeline.Allocations, diag.Diagnostics) {
	var diags diag.Diagnostics
	if prior.Ports.IsNull() || prior.Ports.IsUnknown() || prior.Stages.IsNull() || prior.Stages.IsUnknown() {
		return nil, diags
	}
	var ports []portModel
	var stages []stageModel
	diags.Append(prior.Ports.ElementsAs(ctx, &ports, false)...)
	diags.Append(prior.Stages.ElementsAs(ctx, &stages, false)...)
	if diags.HasError() {
		return nil, diags
	}

	prev := &pipeline.Allocations{Ports: map[string]int{}, Devices: map[string][]int{}}
	for _, p := range ports {
		prev.Ports[p.Name.ValueString()] = int(p.Port.ValueInt64())
	}
	for _, s := range stages {
		key := s.ModelStage.ValueString()
		if r := s.Role.ValueString(); r == pipeline.RolePrefill || r == pipeline.RoleDecode {
			key = r
		}
		prev.Devices[key] = intsFromList(ctx, s.Devices, &diags)
	}
	return prev, diags
}
