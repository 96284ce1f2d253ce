package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A nested input that holds a dynamic attribute (prefill and decode hold
// engine_args, connector extra_config) cannot be planned when the
// configuration leaves it unknown as a whole, as
// `prefill = var.flag ? { engine_args = {...} } : null` does until the
// flag is known. In Terraform's value the unknown object has the types its
// expression gave it, engine_args an object of its own keys
// (zclconf/go-cty@v1.18.1 cty/convert/conversion.go:46, dynamicReplace).
// The protocol writes an unknown without its type, so the provider reads,
// and can only answer, an unknown object whose engine_args is dynamic.
// Terraform accepts a planned value for a configured nested attribute
// only when it is that very value, types included, or a known object
// (hashicorp/terraform internal/plans/objchange/plan_valid.go@35645b8f:292,
// v1.11.4, compares with RawEquals; :375 refuses an unknown otherwise: "planned
// unknown for configured value"), whose engine_args must again be the
// typed unknown. No plan a provider can write passes, and every plan of
// such a configuration failed.
//
// The plan the provider writes is the right one: the input as configured,
// unknown, and every output unknown. At apply, with the input known, the
// plan is made again, held to every check, and compared with this one
// (internal/terraform/node_resource_apply_instance.go@35645b8f:453, "Provider
// produced inconsistent final plan"). So this one plan's response sets the
// protocol's UnsafeToUseLegacyTypeSystem, under which Terraform logs the
// check's findings instead of failing
// (internal/terraform/node_resource_abstract_instance.go@35645b8f:1010). It is set
// for no other plan, so every other plan is held to the check, and the
// tests hold these plans to it, an unknown's type aside
// (TestPlan_UnknownInputsByProperty in internal/direct).

// UntypedUnknownInputs reports whether config, the resource's
// configuration, leaves a nested input that holds a dynamic attribute
// unknown as a whole.
func UntypedUnknownInputs(config tftypes.Value) bool {
	var attrs map[string]tftypes.Value
	if config.IsNull() || !config.IsKnown() || config.As(&attrs) != nil {
		return false
	}
	for _, name := range inputsHoldingDynamics() {
		if v, ok := attrs[name]; ok && !v.IsKnown() {
			return true
		}
	}
	return false
}

// inputsHoldingDynamics are the object inputs with a dynamic attribute,
// from the schema.
var inputsHoldingDynamics = sync.OnceValue(func() []string {
	var out []string
	for name, a := range pipelineInputAttributes() {
		obj, ok := a.GetType().TerraformType(context.Background()).(tftypes.Object)
		if !ok {
			continue
		}
		for _, t := range obj.AttributeTypes {
			if t.Is(tftypes.DynamicPseudoType) {
				out = append(out, name)
				break
			}
		}
	}
	return out
})

// NewProtocol6 is the framework's protocol-6 server for the provider, its
// plans of configurations with untyped unknown inputs marked
// (untypedUnknowns).
func NewProtocol6(version string) func() tfprotov6.ProviderServer {
	framework := providerserver.NewProtocol6(New(version)())
	return func() tfprotov6.ProviderServer { return untypedUnknowns{framework()} }
}

// untypedUnknowns marks the framework's plans of configurations that leave
// a nested input holding a dynamic attribute unknown (above).
type untypedUnknowns struct{ tfprotov6.ProviderServer }

func (s untypedUnknowns) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	resp, err := s.ProviderServer.PlanResourceChange(ctx, req)
	if err != nil || resp == nil || req.TypeName != PDPipelineTypeName || req.Config == nil {
		return resp, err
	}
	if config, derr := req.Config.Unmarshal(PDPipelineResourceType()); derr == nil {
		MarkUntypedUnknowns(resp, config)
	}
	return resp, nil
}

// MarkUntypedUnknowns marks resp, the plan of the resource's configuration
// config, when config leaves a nested input holding a dynamic attribute
// unknown (UntypedUnknownInputs).
func MarkUntypedUnknowns(resp *tfprotov6.PlanResourceChangeResponse, config tftypes.Value) {
	if UntypedUnknownInputs(config) {
		resp.UnsafeToUseLegacyTypeSystem = true //nolint:staticcheck // the one way to pass this plan; see above
	}
}
