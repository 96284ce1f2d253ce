package direct

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/omnipd/terraform-provider-omni/internal/provider"
)

// BenchmarkDataSourcePlanInstance is one data source instance's share of a
// plan as the provider binary serves it (direct in front of the
// framework, without the gRPC transport): the validation and the read
// Terraform asks for with the same configuration, here one instance of
// scripts/bench.sh's count layout (its own api_port and port_range, TP 2).
// Profile it with -cpuprofile; PERFORMANCE.md has the figures.
func BenchmarkDataSourcePlanInstance(b *testing.B) {
	ctx := context.Background()
	srv := Wrap(newFramework)()
	if _, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		b.Fatal(err)
	}
	typ := provider.PDPipelineDataSourceType()
	tp, ok := attrType(b, typ, "prefill").(tftypes.Object)
	if !ok {
		b.Fatal("prefill is not an object")
	}
	role := func() tftypes.Value {
		vals := map[string]tftypes.Value{}
		for name, at := range tp.AttributeTypes {
			vals[name] = tftypes.NewValue(at, nil)
		}
		vals["tensor_parallel_size"] = num(2)
		return tftypes.NewValue(tp, vals)
	}
	rangeType := attrType(b, typ, "port_range")
	config := resourceValue(b, typ, seedWith(map[string]tftypes.Value{
		"api_port":   num(10001),
		"port_range": tftypes.NewValue(rangeType, map[string]tftypes.Value{"first": num(20004), "last": num(20007)}),
		"prefill":    role(),
		"decode":     role(),
	}))
	dv, err := tfprotov6.NewDynamicValue(typ, config)
	if err != nil {
		b.Fatal(err)
	}
	vreq := &tfprotov6.ValidateDataResourceConfigRequest{TypeName: provider.PDPipelineTypeName, Config: &dv}
	rreq := &tfprotov6.ReadDataSourceRequest{TypeName: provider.PDPipelineTypeName, Config: &dv}
	b.ReportAllocs()
	for b.Loop() {
		if resp, err := srv.ValidateDataResourceConfig(ctx, vreq); err != nil || len(resp.Diagnostics) > 0 {
			b.Fatalf("%v %v", err, resp.Diagnostics)
		}
		if resp, err := srv.ReadDataSource(ctx, rreq); err != nil || len(resp.Diagnostics) > 0 || resp.State == nil {
			b.Fatalf("%v %v", err, resp.Diagnostics)
		}
	}
}
