package direct

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/omnipd/terraform-provider-omni/internal/provider"
)

// Wrap puts the direct handlers in front of a framework server.
func Wrap(framework func() tfprotov6.ProviderServer) func() tfprotov6.ProviderServer {
	return func() tfprotov6.ProviderServer { return server{framework()} }
}

// server answers the validations, ReadResource, PlanResourceChange and
// ReadDataSource for omni_pd_pipeline and passes everything else, and any
// call it was not built for (another type, a provider_meta block, private
// state, a resource identity, a destroy, a value that does not decode, a
// configuration that is null or unknown as a whole), to the framework
// unchanged.
type server struct{ tfprotov6.ProviderServer }

// ReadResource answers a refresh: the state as it is, since the resource
// has nothing outside Terraform to read and its Read keeps the state.
func (s server) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	if req.TypeName != provider.PDPipelineTypeName || req.CurrentState == nil || len(req.Private) > 0 ||
		req.ProviderMeta != nil || req.CurrentIdentity != nil {
		return s.ProviderServer.ReadResource(ctx, req)
	}
	typ := provider.PDPipelineResourceType()
	state, err := req.CurrentState.Unmarshal(typ)
	if err != nil {
		return s.ProviderServer.ReadResource(ctx, req)
	}
	resp := &tfprotov6.ReadResourceResponse{}
	// Numbers as text, so that Terraform reads the state back as the very
	// value its state file holds (writeReadState).
	resp.NewState = encodeWith(writeReadState, typ, state, &resp.Diagnostics)
	return resp, nil
}

// PlanResourceChange answers the plan of a resource that is created or
// updated with the resource's ModifyPlan, giving what the framework's plan
// gives for this schema:
//
//   - triggers' RequiresReplace asks for a replacement when an update
//     changes triggers, whatever the plan then reports;
//   - ModifyPlan plans the outputs;
//   - when it reports an error on a plan that differs from the prior state,
//     the outputs are unknown. The framework marks every computed attribute
//     with a null configuration unknown before ModifyPlan runs; those are
//     the outputs and the computed inputs left unset, which ModifyPlan
//     overwrites unless it fails, so only a failed plan needs the marking.
func (s server) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	if req.TypeName != provider.PDPipelineTypeName || req.ProposedNewState == nil || req.PriorState == nil ||
		req.Config == nil || len(req.PriorPrivate) > 0 || req.ProviderMeta != nil || req.PriorIdentity != nil {
		return s.ProviderServer.PlanResourceChange(ctx, req)
	}
	typ := provider.PDPipelineResourceType()
	proposed, err := req.ProposedNewState.Unmarshal(typ)
	if err != nil || proposed.IsNull() {
		return s.ProviderServer.PlanResourceChange(ctx, req) // a destroy, or not ours to judge
	}
	prior, err := req.PriorState.Unmarshal(typ)
	if err != nil {
		return s.ProviderServer.PlanResourceChange(ctx, req)
	}
	config, err := req.Config.Unmarshal(typ)
	if err != nil {
		return s.ProviderServer.PlanResourceChange(ctx, req)
	}
	resp := &tfprotov6.PlanResourceChangeResponse{}
	if !prior.IsNull() && !attributeOf(proposed, "triggers").Equal(attributeOf(prior, "triggers")) {
		resp.RequiresReplace = []*tftypes.AttributePath{tftypes.NewAttributePath().WithAttributeName("triggers")}
	}
	planned, diags := provider.PlanPDPipelineResource(ctx, config, proposed, prior)
	if diags.HasError() && !proposed.Equal(prior) {
		var d diag.Diagnostics
		planned, d = provider.UnknownPDPipelineOutputs(ctx, planned, config)
		diags.Append(d...)
	}
	resp.Diagnostics = protoDiagnostics(ctx, diags)
	resp.PlannedState = encodeState(typ, planned, &resp.Diagnostics)
	provider.MarkUntypedUnknowns(resp, config)
	return resp, nil
}

// ReadDataSource answers a data source read with the data source's own
// Read. Terraform reads every instance on every plan, so the framework's
// generic passes around Read would run once per pipeline for an answer
// they never change (PERFORMANCE.md).
func (s server) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	if req.TypeName != provider.PDPipelineTypeName || req.Config == nil || req.ProviderMeta != nil {
		return s.ProviderServer.ReadDataSource(ctx, req)
	}
	typ := provider.PDPipelineDataSourceType()
	config, err := req.Config.Unmarshal(typ)
	if err != nil || !wholeObject(config) {
		return s.ProviderServer.ReadDataSource(ctx, req)
	}
	state, diags := provider.ReadPDPipelineDataSource(ctx, config)
	resp := &tfprotov6.ReadDataSourceResponse{Diagnostics: protoDiagnostics(ctx, diags)}
	// Numbers as text, so that an output passing one on reads as the value
	// the state file holds for it (writeReadState).
	resp.State = encodeWith(writeReadState, typ, state, &resp.Diagnostics)
	return resp, nil
}

// ValidateDataResourceConfig and ValidateResourceConfig answer a
// validation with the entity's own checks: the schema's, which the entity
// makes as the framework does, and the engine's beside them. Terraform
// validates every instance again before it reads or plans it, and the
// framework's generic schema walk looks each attribute up from the root.
func (s server) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	if req.TypeName != provider.PDPipelineTypeName || req.Config == nil {
		return s.ProviderServer.ValidateDataResourceConfig(ctx, req)
	}
	config, err := req.Config.Unmarshal(provider.PDPipelineDataSourceType())
	if err != nil || !wholeObject(config) {
		return s.ProviderServer.ValidateDataResourceConfig(ctx, req)
	}
	diags := provider.ValidatePDPipelineDataSource(ctx, config)
	return &tfprotov6.ValidateDataResourceConfigResponse{Diagnostics: protoDiagnostics(ctx, diags)}, nil
}

func (s server) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	if req.TypeName != provider.PDPipelineTypeName || req.Config == nil {
		return s.ProviderServer.ValidateResourceConfig(ctx, req)
	}
	config, err := req.Config.Unmarshal(provider.PDPipelineResourceType())
	if err != nil || !wholeObject(config) {
		return s.ProviderServer.ValidateResourceConfig(ctx, req)
	}
	diags := provider.ValidatePDPipelineResource(ctx, config)
	return &tfprotov6.ValidateResourceConfigResponse{Diagnostics: protoDiagnostics(ctx, diags)}, nil
}

// wholeObject reports whether a configuration is a known, non-null
// object, the only kind Terraform sends; the framework answers any other.
func wholeObject(v tftypes.Value) bool { return !v.IsNull() && v.IsKnown() }

// attributeOf is a top-level attribute of an object value; the zero Value
// when v is null, unknown or not an object.
func attributeOf(v tftypes.Value, name string) tftypes.Value {
	var attrs map[string]tftypes.Value
	if v.IsNull() || !v.IsKnown() || v.As(&attrs) != nil {
		return tftypes.Value{}
	}
	return attrs[name]
}

// encodeState encodes a state or planned state v as a protocol value of
// type typ (writeState); an encoding error becomes an error diagnostic, in
// the framework's words.
func encodeState(typ tftypes.Type, v tftypes.Value, diags *[]*tfprotov6.Diagnostic) *tfprotov6.DynamicValue {
	return encodeWith(writeState, typ, v, diags)
}

// encodeWith is encodeState with the writer write.
func encodeWith(write func(tftypes.Type, tftypes.Value) (tfprotov6.DynamicValue, error), typ tftypes.Type, v tftypes.Value, diags *[]*tfprotov6.Diagnostic) *tfprotov6.DynamicValue {
	encoded, err := write(typ, v)
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
		pd := &tfprotov6.Diagnostic{Severity: protoSeverity(d.Severity()), Summary: d.Summary(), Detail: d.Detail()}
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
