package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// planOutputs is the one path from inputs to outputs that the data source
// and the resource share: inputs → Spec → pipeline.Plan → outputs. prev is
// nil for the data source and for a resource being created or replaced.
// It returns ok=false when an error was reported.
func planOutputs(ctx context.Context, in pipelineInputs, prev *pipeline.Allocations) (plannedOutputs, bool, diag.Diagnostics) {
	// The engine runs even when an input could not be converted (that
	// value is left unset), so that one plan reports every problem.
	spec, overrideDiags, diags := specFromInputs(ctx, in)
	spec.Previous = prev

	result, pds := pipeline.Plan(spec)
	pds = append(overrideDiags, pds...)
	addPipelineDiagnostics(&diags, pds)
	if result == nil || diags.HasError() {
		return nil, false, diags
	}

	out, d := outputsFromResult(ctx, in, result)
	diags.Append(d...)
	return out, !diags.HasError(), diags
}
