package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// ReadDataSource answers an omni_pd_pipeline read with readPipeline, the
// function the data source's Read runs (see directServer).
func (s directServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	if req.TypeName != pdPipelineTypeName || req.Config == nil || req.ProviderMeta != nil {
		return s.ProviderServer.ReadDataSource(ctx, req)
	}
	typ := pdPipelineDataSourceType()
	config, err := req.Config.Unmarshal(typ)
	if err != nil {
		return s.ProviderServer.ReadDataSource(ctx, req)
	}

	state, diags := readPipeline(ctx, config)
	resp := &tfprotov6.ReadDataSourceResponse{Diagnostics: protoDiagnostics(ctx, diags)}
	resp.State = encodeState(typ, state, &resp.Diagnostics)
	return resp, nil
}
