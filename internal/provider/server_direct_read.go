package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// directReads answers ReadDataSource for omni_pd_pipeline from the protocol
// request itself: decode the configuration, readPipeline, encode the state.
//
// The framework's ReadDataSource runs the same readPipeline (through the
// data source's Read), wrapped in generic passes over the whole value:
// turning null list and set blocks into empty ones and back
// (NullifyCollectionBlocks on the configuration, ReifyNullCollectionBlocks
// on the state, each resolving every null value's path in the schema) and a
// semantic-equality pass over every attribute. For this schema, with no
// blocks and no custom types (TestDirectRead_Assumptions), none of them can
// change anything, yet they cost as much CPU as planning the pipeline
// (docs/performance.md), and Terraform reads every data source instance on
// every plan. TestDirectRead_MatchesFramework checks that both paths give
// byte-identical responses.
//
// Two things the framework does are not needed here: it registers each
// call's context so StopProvider can cancel it (a read is pure computation
// in well under a millisecond and never waits), and it writes trace logs
// of each step. The provider configures nothing and never defers a read.
//
// Every other call, and a read this path was not built for (another type, a
// provider_meta block, a configuration that does not decode), goes to the
// framework unchanged.
type directReads struct{ tfprotov6.ProviderServer }

func (s directReads) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
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
	encoded, err := tfprotov6.NewDynamicValue(typ, state)
	if err != nil {
		resp.Diagnostics = append(resp.Diagnostics, &tfprotov6.Diagnostic{
			Severity: tfprotov6.DiagnosticSeverityError,
			Summary:  "Unable to Convert State",
			Detail: "An unexpected error was encountered when converting the state to the protocol type. " +
				"Please report this to the provider developers.\n\nUnable to create DynamicValue: " + err.Error(),
		})
		return resp, nil //nolint:nilerr // reported to the user as a diagnostic, as the framework does
	}
	resp.State = &encoded
	return resp, nil
}

// protoDiagnostics converts framework diagnostics to protocol ones, in the
// shape the framework's server gives them.
func protoDiagnostics(ctx context.Context, diags diag.Diagnostics) []*tfprotov6.Diagnostic {
	var out []*tfprotov6.Diagnostic
	for _, d := range diags {
		pd := &tfprotov6.Diagnostic{
			Severity: protoSeverity(d.Severity()),
			Summary:  d.Summary(),
			Detail:   d.Detail(),
		}
		if withPath, ok := d.(diag.DiagnosticWithPath); ok {
			attr, err := protoPath(ctx, withPath.Path())
			if err != nil {
				out = append(out, &tfprotov6.Diagnostic{
					Severity: tfprotov6.DiagnosticSeverityError,
					Summary:  "Unable to Convert Attribute Path",
					Detail:   "Attribute Path: " + withPath.Path().String() + "\nOriginal Error: " + err.Error(),
				})
			}
			pd.Attribute = attr
		}
		out = append(out, pd)
	}
	return out
}

func protoSeverity(s diag.Severity) tfprotov6.DiagnosticSeverity {
	switch s {
	case diag.SeverityError:
		return tfprotov6.DiagnosticSeverityError
	case diag.SeverityWarning:
		return tfprotov6.DiagnosticSeverityWarning
	default:
		return tfprotov6.DiagnosticSeverityInvalid
	}
}

// protoPath converts an attribute path to the protocol's.
func protoPath(ctx context.Context, p path.Path) (*tftypes.AttributePath, error) {
	var steps []tftypes.AttributePathStep
	for _, step := range p.Steps() {
		switch s := step.(type) {
		case path.PathStepAttributeName:
			steps = append(steps, tftypes.AttributeName(string(s)))
		case path.PathStepElementKeyInt:
			steps = append(steps, tftypes.ElementKeyInt(int64(s)))
		case path.PathStepElementKeyString:
			steps = append(steps, tftypes.ElementKeyString(string(s)))
		case path.PathStepElementKeyValue:
			v, err := s.ToTerraformValue(ctx)
			if err != nil {
				return nil, err
			}
			steps = append(steps, tftypes.ElementKeyValue(v))
		default:
			return nil, errUnknownPathStep{step}
		}
	}
	return tftypes.NewAttributePathWithSteps(steps), nil
}

type errUnknownPathStep struct{ step path.PathStep }

func (e errUnknownPathStep) Error() string { return "unknown path step " + e.step.String() }
