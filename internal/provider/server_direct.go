package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// directServer answers the calls Terraform makes for every omni_pd_pipeline
// instance on every plan straight from the protocol request: the data
// source's ValidateDataResourceConfig and ReadDataSource
// (server_direct_validate.go, server_direct_read.go), and the resource's
// ValidateResourceConfig, ReadResource and PlanResourceChange
// (server_direct_resource.go). Each decodes the request, runs the same
// function or validators the framework path runs (readPipeline,
// planResource, the schema's validators) and encodes the answer.
//
// The framework wraps those in generic passes over the whole value:
// turning null list and set blocks into empty ones and back
// (NullifyCollectionBlocks on what comes in, ReifyNullCollectionBlocks on
// what goes out, each resolving every null value's path in the schema), a
// semantic-equality pass over every attribute, and for a plan, marking
// computed values unknown and running every attribute's plan modifiers,
// setting each value back into the plan. Validation finds each attribute's
// value by resolving its path through the schema. For these schemas, with
// no blocks, no custom types, no defaults and one plan modifier (triggers'
// RequiresReplace, which directServer applies itself), none of the passes
// can change the answer, yet they cost more CPU than planning the pipeline
// (PERFORMANCE.md). The parity tests (server_direct_*_test.go) hold
// both paths to the same responses, and TestDirect_Assumptions fails if a
// schema gains what the passes exist for.
//
// Two things the framework does are not needed here: it registers each
// call's context so StopProvider can cancel it (these calls are pure
// computation in about a millisecond and never wait), and it writes trace
// logs of each step. The provider configures nothing and never defers.
//
// Every other call, and a call this path was not built for (another type, a
// provider_meta block, private state, a resource identity, a destroy, a
// value that does not decode), goes to the framework unchanged.
type directServer struct{ tfprotov6.ProviderServer }

// encodeState encodes a state or planned state v as a protocol value of
// type typ; an encoding error becomes an error diagnostic, as the framework
// reports it. The encoding is
// marshalMsgPack's; a value it cannot encode goes to tftypes' encoder,
// which reports it in the framework's words.
func encodeState(typ tftypes.Type, v tftypes.Value, diags *[]*tfprotov6.Diagnostic) *tfprotov6.DynamicValue {
	if b, err := marshalMsgPack(typ, v); err == nil {
		return &tfprotov6.DynamicValue{MsgPack: b}
	}
	encoded, err := tfprotov6.NewDynamicValue(typ, v)
	if err != nil {
		*diags = append(*diags, &tfprotov6.Diagnostic{
			Severity: tfprotov6.DiagnosticSeverityError,
			Summary:  "Unable to Convert State",
			Detail: "An unexpected error was encountered when converting the State to the protocol type. " +
				"Please report this to the provider developers.\n\nUnable to create DynamicValue: " + err.Error(),
		})
		return nil
	}
	return &encoded
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
			return nil, fmt.Errorf("unknown path step %s", step)
		}
	}
	return tftypes.NewAttributePathWithSteps(steps), nil
}
