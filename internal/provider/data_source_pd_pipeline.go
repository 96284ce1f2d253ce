package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

var _ datasource.DataSource = (*pdPipelineDataSource)(nil)

// pdPipelineTypeName is the data source's and the resource's type name.
const pdPipelineTypeName = "omni_pd_pipeline"

// NewPDPipelineDataSource returns the omni_pd_pipeline data source: the
// pipeline recomputed from scratch at every plan, with no memory of earlier
// allocations (use the resource for stable ports).
func NewPDPipelineDataSource() datasource.DataSource { return &pdPipelineDataSource{} }

type pdPipelineDataSource struct{}

func (d *pdPipelineDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_pd_pipeline"
}

func (d *pdPipelineDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = pdPipelineDataSourceSchema()
}

// pdPipelineDataSourceSchema is built once: the framework asks for the
// schema in every request it serves.
var pdPipelineDataSourceSchema = sync.OnceValue(func() schema.Schema {
	return schema.Schema{
		MarkdownDescription: pdPipelineDescription + "\n\n" +
			"The data source recomputes everything at every plan; allocated ports can move when the inputs change. " +
			"Use the `omni_pd_pipeline` resource to keep them stable.",
		Attributes: dataSourceAttributes(pipelineAttributes()),
	}
})

// pdPipelineDataSourceSchemaType is the schema's Type(), built once:
// Type() builds every nested type again on each call.
var pdPipelineDataSourceSchemaType = sync.OnceValue(func() attr.Type {
	return pdPipelineDataSourceSchema().Type()
})

// Read computes the outputs from the configuration. Terraform calls it during
// plan whenever the configuration is known, so the outputs are plan-time
// values. The state starts as a copy of the configuration (the framework
// makes it), so the inputs are stored exactly as written; the outputs are
// planned from them. After an error the state holds what was written so
// far; Terraform discards it.
func (d *pdPipelineDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	resp.Diagnostics.Append(readPipeline(ctx, req.Config.Raw, &resp.State)...)
}

// readPipeline writes into state the outputs planned from a data source
// configuration: the one body of the data source's Read and of
// ReadPDPipelineDataSource.
func readPipeline(ctx context.Context, config tftypes.Value, state *tfsdk.State) diag.Diagnostics {
	// Terraform defers the read while the configuration holds unknowns; if a
	// client calls anyway, answer "not known yet" rather than guess.
	if !inputsKnown(config) {
		return writeUnknownOutputs(ctx, state, config)
	}
	in, diags := readInputs(ctx, config, dataSourceValidationSchema())
	if diags.HasError() {
		return diags
	}
	out, ok, planDiags := planOutputs(ctx, in, nil)
	diags.Append(planDiags...)
	if ok {
		diags.Append(setOutputs(ctx, state, out)...)
	}
	return diags
}
