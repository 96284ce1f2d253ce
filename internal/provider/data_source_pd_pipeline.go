package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
)

var _ datasource.DataSource = (*pdPipelineDataSource)(nil)

// NewPDPipelineDataSource returns the omni_pd_pipeline data source: the
// pipeline recomputed from scratch at every plan, with no memory of earlier
// allocations (use the resource for stable ports).
func NewPDPipelineDataSource() datasource.DataSource { return &pdPipelineDataSource{} }

type pdPipelineDataSource struct{}

func (d *pdPipelineDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_pd_pipeline"
}

func (d *pdPipelineDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: pdPipelineDescription + "\n\n" +
			"The data source recomputes everything at every plan; allocated ports can move when the inputs change. " +
			"Use the `omni_pd_pipeline` resource to keep them stable.",
		Attributes: dataSourceAttributes(pipelineAttributes()),
	}
}

// Read computes the outputs from the configuration. Terraform calls it during
// plan whenever the configuration is known, so the outputs are plan-time
// values.
func (d *pdPipelineDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	// Start from the configuration: the inputs are stored exactly as written.
	resp.State.Raw = req.Config.Raw.Copy()

	// Terraform defers the read while the configuration holds unknowns; if a
	// client calls anyway, answer "not known yet" rather than guess.
	if !inputsKnown(req.Config.Raw) {
		resp.Diagnostics.Append(writeUnknownOutputs(ctx, &resp.State)...)
		return
	}

	in, diags := inputsFrom(ctx, req.Config.Schema.Type(), req.Config.Raw)
	if resp.Diagnostics.Append(diags...); resp.Diagnostics.HasError() {
		return
	}
	out, ok, diags := planOutputs(ctx, in, nil)
	resp.Diagnostics.Append(diags...)
	if !ok {
		return
	}
	resp.Diagnostics.Append(writeOutputs(ctx, &resp.State, out)...)
}
