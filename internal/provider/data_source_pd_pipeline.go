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

// pdPipelineDataSourceSchema is built once: readPipeline needs it on every
// read, outside the framework's requests (see directServer).
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

// pdPipelineDataSourceType is the Terraform type of the data source's
// configuration and state.
var pdPipelineDataSourceType = sync.OnceValue(func() tftypes.Type {
	return pdPipelineDataSourceSchemaType().TerraformType(context.Background())
})

// Read computes the outputs from the configuration. Terraform calls it during
// plan whenever the configuration is known, so the outputs are plan-time
// values. Plans reach readPipeline through directServer instead; both give
// the same answer.
func (d *pdPipelineDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var diags diag.Diagnostics
	resp.State.Raw, diags = readPipeline(ctx, req.Config.Raw)
	resp.Diagnostics.Append(diags...)
}

// readPipeline is the data source's read: its whole state from its
// configuration. The inputs are stored exactly as written, the outputs are
// planned from them. After an error the state holds what was written so far,
// as the framework's Read would leave it; Terraform discards it.
func readPipeline(ctx context.Context, config tftypes.Value) (tftypes.Value, diag.Diagnostics) {
	state := tfsdk.State{Schema: pdPipelineDataSourceSchema(), Raw: config}
	var diags diag.Diagnostics

	// Terraform defers the read while the configuration holds unknowns; if a
	// client calls anyway, answer "not known yet" rather than guess.
	if !inputsKnown(config) {
		diags.Append(writeUnknownOutputs(ctx, &state, config)...)
		return state.Raw, diags
	}

	// inputsFrom, not Config.Get: every plan reads every instance, and Get
	// finds the model's fields again each time (see inputsFrom).
	in, d := inputsFrom(ctx, pdPipelineDataSourceSchemaType(), config)
	if diags.Append(d...); diags.HasError() {
		return state.Raw, diags
	}
	out, ok, d := planOutputs(ctx, in, nil)
	diags.Append(d...)
	if ok {
		diags.Append(setOutputs(ctx, &state, out)...)
	}
	return state.Raw, diags
}
