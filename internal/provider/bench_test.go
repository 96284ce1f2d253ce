package provider

import (
	"context"
	"math/big"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// Benchmarks of what Terraform asks the provider for each omni_pd_pipeline
// data source in a plan, through the same protocol-6 server Terraform talks
// to (without the gRPC transport and plugin-go's logging): the schema once
// per provider process, then per instance ValidateDataResourceConfig and
// ReadDataSource in the plan walk (the validate walk validates each block
// once, not each instance). The input is the seed with one reserved port, as
// scripts/bench.sh plans it; PERFORMANCE.md has the figures. Run with:
//   go test ./internal/provider -run '^$' -bench . -benchmem

const benchDataSource = "omni_pd_pipeline"

// newBenchServer is a fresh provider server, the one Serve runs.
func newBenchServer() tfprotov6.ProviderServer { return providerserver.NewProtocol6(New("bench")())() }

// benchServer returns a fresh provider server and the data source's config
// as Terraform sends it (msgpack).
func benchServer(b testing.TB) (tfprotov6.ProviderServer, *tfprotov6.DynamicValue) {
	b.Helper()
	srv := newBenchServer()
	ctx := context.Background()
	schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || len(schemas.Diagnostics) > 0 {
		b.Fatalf("GetProviderSchema: %v %v", err, schemas.Diagnostics)
	}
	typ := schemas.DataSourceSchemas[benchDataSource].ValueType()
	config, err := tfprotov6.NewDynamicValue(typ, objectValue(b, typ, benchSeedInputs()))
	if err != nil {
		b.Fatal(err)
	}
	return srv, &config
}

// BenchmarkProviderSchema: GetProviderSchema, which Terraform calls once in
// each provider process it starts (three per plan).
func BenchmarkProviderSchema(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		srv, err := providerserver.NewProtocol6WithError(New("bench")())()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDataSourceValidate: ValidateDataResourceConfig on the seed.
func BenchmarkDataSourceValidate(b *testing.B) {
	ctx := context.Background()
	srv, config := benchServer(b)
	req := &tfprotov6.ValidateDataResourceConfigRequest{TypeName: benchDataSource, Config: config}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := srv.ValidateDataResourceConfig(ctx, req)
		if err != nil || len(resp.Diagnostics) > 0 {
			b.Fatalf("%v %v", err, resp.Diagnostics)
		}
	}
}

// BenchmarkDataSourceRead: ReadDataSource on the seed: decoding the config,
// planning, and encoding the outputs.
func BenchmarkDataSourceRead(b *testing.B) {
	ctx := context.Background()
	srv, config := benchServer(b)
	req := &tfprotov6.ReadDataSourceRequest{TypeName: benchDataSource, Config: config}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := srv.ReadDataSource(ctx, req)
		if err != nil || len(resp.Diagnostics) > 0 || resp.State == nil {
			b.Fatalf("%v %v", err, resp.Diagnostics)
		}
	}
}

// BenchmarkDataSourcePlanInstance is one instance's share of a plan: a
// validation and a read, as Terraform 1.11 makes them.
func BenchmarkDataSourcePlanInstance(b *testing.B) {
	ctx := context.Background()
	srv, config := benchServer(b)
	vreq := &tfprotov6.ValidateDataResourceConfigRequest{TypeName: benchDataSource, Config: config}
	rreq := &tfprotov6.ReadDataSourceRequest{TypeName: benchDataSource, Config: config}
	b.ReportAllocs()
	for b.Loop() {
		if resp, err := srv.ValidateDataResourceConfig(ctx, vreq); err != nil || len(resp.Diagnostics) > 0 {
			b.Fatalf("%v %v", err, resp.Diagnostics)
		}
		if resp, err := srv.ReadDataSource(ctx, rreq); err != nil || len(resp.Diagnostics) > 0 {
			b.Fatalf("%v %v", err, resp.Diagnostics)
		}
	}
}

// benchSeedInputs are the inputs the benchmarks plan: the seed with one
// reserved port, as scripts/bench.sh plans it.
func benchSeedInputs() map[string]tftypes.Value {
	return map[string]tftypes.Value{
		"model": tftypes.NewValue(tftypes.String, seedModel),
		"reserved_ports": tftypes.NewValue(tftypes.Set{ElementType: tftypes.Number},
			[]tftypes.Value{tftypes.NewValue(tftypes.Number, big.NewFloat(30000))}),
	}
}

// resourcePlanRequests are the plans Terraform asks for one resource
// instance: a create of the seed (with one reserved port, as
// scripts/bench.sh plans it) and the update that re-plans it unchanged,
// every plan after the apply.
func resourcePlanRequests(b *testing.B, srv tfprotov6.ProviderServer) (create, unchanged *tfprotov6.PlanResourceChangeRequest) {
	b.Helper()
	ctx := context.Background()
	typ := pdPipelineResourceType()
	config := objectValue(b, typ, benchSeedInputs())
	encode := func(v tftypes.Value) *tfprotov6.DynamicValue {
		dv, err := tfprotov6.NewDynamicValue(typ, v)
		if err != nil {
			b.Fatal(err)
		}
		return &dv
	}
	create = &tfprotov6.PlanResourceChangeRequest{
		TypeName: pdPipelineTypeName, Config: encode(config),
		PriorState: encode(tftypes.NewValue(typ, nil)), ProposedNewState: encode(config),
	}
	resp, err := srv.PlanResourceChange(ctx, create)
	if err != nil || len(resp.Diagnostics) > 0 {
		b.Fatalf("%v %v", err, resp.Diagnostics)
	}
	unchanged = &tfprotov6.PlanResourceChangeRequest{
		TypeName: pdPipelineTypeName, Config: encode(config),
		PriorState: resp.PlannedState, ProposedNewState: resp.PlannedState,
	}
	return create, unchanged
}

func benchResourcePlan(b *testing.B, srv tfprotov6.ProviderServer, unchanged bool) {
	ctx := context.Background()
	if _, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		b.Fatal(err)
	}
	create, update := resourcePlanRequests(b, srv)
	req := create
	if unchanged {
		req = update
	}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := srv.PlanResourceChange(ctx, req)
		if err != nil || len(resp.Diagnostics) > 0 || resp.PlannedState == nil {
			b.Fatalf("%v %v", err, resp.Diagnostics)
		}
	}
}

// BenchmarkResourcePlanCreate: PlanResourceChange creating the seed.
func BenchmarkResourcePlanCreate(b *testing.B) { benchResourcePlan(b, newBenchServer(), false) }

// BenchmarkResourcePlanUnchanged: re-planning an applied seed that did not
// change, what every plan after the apply asks.
func BenchmarkResourcePlanUnchanged(b *testing.B) { benchResourcePlan(b, newBenchServer(), true) }

// benchInputsConfigs are the seed's configuration (one reserved port, as
// scripts/bench.sh plans it) for the data source and the resource, as
// their Read and ModifyPlan receive them.
func benchInputsConfigs(b *testing.B) (dataSource, resource tfsdk.Config) {
	b.Helper()
	set := benchSeedInputs()
	dataSource = tfsdk.Config{Schema: pdPipelineDataSourceSchema(), Raw: objectValue(b, pdPipelineDataSourceType(), set)}
	resource = tfsdk.Config{Schema: pdPipelineResourceSchema(), Raw: objectValue(b, pdPipelineResourceType(), set)}
	return dataSource, resource
}

// BenchmarkReadInputs: reading the seed's inputs into the model, as the
// data source's Read and the resource's ModifyPlan do (readInputs).
func BenchmarkReadInputs(b *testing.B) {
	dataSource, resource := benchInputsConfigs(b)
	for name, c := range map[string]struct {
		config tfsdk.Config
		vs     validationSchema
	}{"data source": {dataSource, dataSourceValidationSchema()}, "resource": {resource, resourceValidationSchema()}} {
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, diags := readInputs(ctx, c.config.Raw, c.vs); diags.HasError() {
					b.Fatal(diags)
				}
			}
		})
	}
}

// benchPlannedSeed is the data source's configuration and the outputs
// planned from it, what the data source's Read writes.
func benchPlannedSeed(b *testing.B) (tfsdk.Config, plannedOutputs) {
	b.Helper()
	ctx := context.Background()
	config, _ := benchInputsConfigs(b)
	in, diags := readInputs(ctx, config.Raw, dataSourceValidationSchema())
	if diags.HasError() {
		b.Fatal(diags)
	}
	out, ok, diags := planOutputs(ctx, in, nil)
	if !ok || diags.HasError() {
		b.Fatal(diags)
	}
	return config, out
}

// BenchmarkOutputsFromResult: the seed's planned result as the values the
// data source's Read writes (outputsFromResult).
func BenchmarkOutputsFromResult(b *testing.B) {
	ctx := context.Background()
	result, diags := pipeline.Plan(pipeline.Spec{Model: seedModel})
	if result == nil {
		b.Fatal(diags)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, diags := outputsFromResult(ctx, pipelineInputs{}, result); diags.HasError() {
			b.Fatal(diags)
		}
	}
}

// BenchmarkWriteOutputs: writing the planned outputs into the data source's
// state with setOutputs, as the data source's Read does.
func BenchmarkWriteOutputs(b *testing.B) {
	ctx := context.Background()
	config, out := benchPlannedSeed(b)
	b.ReportAllocs()
	for b.Loop() {
		state := tfsdk.State(config)
		if diags := setOutputs(ctx, &state, out); diags.HasError() {
			b.Fatal(diags)
		}
	}
}

// BenchmarkWriteStateSet: the same state written with State.Set of the
// whole state as a framework value, read back from what setOutputs wrote
// (the computed inputs hold what the plan used): the framework converts
// every value of it, as it would the model's.
func BenchmarkWriteStateSet(b *testing.B) {
	ctx := context.Background()
	config, out := benchPlannedSeed(b)
	want := tfsdk.State(config)
	if diags := setOutputs(ctx, &want, out); diags.HasError() {
		b.Fatal(diags)
	}
	m := frameworkObject(ctx, b, pdPipelineDataSourceSchemaType(), want.Raw)
	got := tfsdk.State(config)
	if diags := got.Set(ctx, m); diags.HasError() || !got.Raw.Equal(want.Raw) {
		b.Fatalf("State.Set wrote another state than setOutputs: %v", diags)
	}
	b.ReportAllocs()
	for b.Loop() {
		state := tfsdk.State(config)
		if diags := state.Set(ctx, m); diags.HasError() {
			b.Fatal(diags)
		}
	}
}

// BenchmarkResourceApplyCreate: ApplyResourceChange storing the seed's
// planned creation.
func BenchmarkResourceApplyCreate(b *testing.B) {
	ctx := context.Background()
	srv := newBenchServer()
	if _, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		b.Fatal(err)
	}
	create, _ := resourcePlanRequests(b, srv)
	plan, err := srv.PlanResourceChange(ctx, create)
	if err != nil || len(plan.Diagnostics) > 0 {
		b.Fatalf("%v %v", err, plan.Diagnostics)
	}
	req := &tfprotov6.ApplyResourceChangeRequest{
		TypeName: pdPipelineTypeName, Config: create.Config,
		PriorState: create.PriorState, PlannedState: plan.PlannedState,
	}
	b.ReportAllocs()
	for b.Loop() {
		resp, err := srv.ApplyResourceChange(ctx, req)
		if err != nil || len(resp.Diagnostics) > 0 || resp.NewState == nil {
			b.Fatalf("%v %v", err, resp.Diagnostics)
		}
	}
}

// BenchmarkFunctionParseStageConfig: parse_stage_config on the seed's
// config_yaml.
func BenchmarkFunctionParseStageConfig(b *testing.B) {
	benchFunction(b, NewParseStageConfigFunction(), []attr.Value{benchSeedConfigYAML(b)}, types.ObjectUnknown(summaryType))
}

// BenchmarkFunctionValidateStageConfig: validate_stage_config on the
// seed's config_yaml.
func BenchmarkFunctionValidateStageConfig(b *testing.B) {
	benchFunction(b, NewValidateStageConfigFunction(),
		[]attr.Value{benchSeedConfigYAML(b), types.TupleValueMust(nil, nil)}, types.ListUnknown(types.StringType))
}

// benchSeedConfigYAML is the seed's planned config_yaml.
func benchSeedConfigYAML(b *testing.B) types.String {
	b.Helper()
	_, out := benchPlannedSeed(b)
	var yaml string
	if err := out["config_yaml"].As(&yaml); err != nil {
		b.Fatal(err)
	}
	return types.StringValue(yaml)
}

// benchFunction measures f's Run on args; result is a value of its return
// type.
func benchFunction(b *testing.B, f function.Function, args []attr.Value, result attr.Value) {
	ctx := context.Background()
	req := function.RunRequest{Arguments: function.NewArgumentsData(args)}
	b.ReportAllocs()
	for b.Loop() {
		resp := function.RunResponse{Result: function.NewResultData(result)}
		f.Run(ctx, req, &resp)
		if resp.Error != nil {
			b.Fatal(resp.Error)
		}
	}
}
