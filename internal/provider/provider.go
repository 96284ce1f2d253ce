// Package provider is the Terraform glue of the omni provider: schemas,
// conversions between framework values and the planning engine's types, and
// the mapping of the engine's diagnostics. All planning logic lives in
// internal/pipeline, which knows nothing of Terraform.
package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

var (
	_ provider.Provider              = (*omniProvider)(nil)
	_ provider.ProviderWithFunctions = (*omniProvider)(nil)
)

// New returns the provider factory providerserver.Serve expects. version is
// set by the release build (goreleaser ldflags) and reported to Terraform.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &omniProvider{version: version} }
}

type omniProvider struct {
	version string
}

func (p *omniProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "omni"
	resp.Version = p.version
}

// Schema is empty: the provider is pure computation, with nothing to connect
// to and nothing to configure.
func (p *omniProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Plans [vllm-omni](https://github.com/vllm-project/vllm-omni) deployments with " +
			"prefill-decode disaggregation: deploy-config YAML, GPU placement, ports and the `vllm serve` " +
			"command, all computed at plan time from a few inputs. The provider takes no configuration and " +
			"makes no network calls.",
	}
}

func (p *omniProvider) Configure(context.Context, provider.ConfigureRequest, *provider.ConfigureResponse) {
}

func (p *omniProvider) Resources(context.Context) []func() resource.Resource {
	return []func() resource.Resource{NewPDPipelineResource}
}

func (p *omniProvider) DataSources(context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{NewPDPipelineDataSource}
}

func (p *omniProvider) Functions(context.Context) []func() function.Function {
	return []func() function.Function{NewParseStageConfigFunction, NewValidateStageConfigFunction, NewCheckScriptFunction}
}
