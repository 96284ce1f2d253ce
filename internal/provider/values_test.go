package provider

import (
	"context"
	"maps"
	"math/big"
	"slices"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// readDataSource runs the data source's Read on a configuration as the
// framework calls it: the state starts as a copy of the configuration.
func readDataSource(ctx context.Context, config tftypes.Value) (tftypes.Value, diag.Diagnostics) {
	schema := pdPipelineDataSourceSchema()
	resp := datasource.ReadResponse{State: tfsdk.State{Schema: schema, Raw: config.Copy()}}
	(&pdPipelineDataSource{}).Read(ctx, datasource.ReadRequest{Config: tfsdk.Config{Schema: schema, Raw: config}}, &resp)
	return resp.State.Raw, resp.Diagnostics
}

// modifyResourcePlan runs the resource's ModifyPlan as the framework calls
// it (PlanPDPipelineResource).
func modifyResourcePlan(ctx context.Context, config, plan, prior tftypes.Value) (tftypes.Value, diag.Diagnostics) {
	return PlanPDPipelineResource(ctx, config, plan, prior)
}

// pdPipelineDataSourceType and pdPipelineResourceType are the Terraform
// types of the entities' configurations and states, for tests that build
// values of them.
func pdPipelineDataSourceType() tftypes.Type {
	return pdPipelineDataSourceSchemaType().TerraformType(context.Background())
}

func pdPipelineResourceType() tftypes.Type { return PDPipelineResourceType() }

// objectValue is a value of the object type typ: every attribute not in
// set is null.
func objectValue(t testing.TB, typ tftypes.Type, set map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	return testtool.Object(t, typ, set)
}

// attributeType is the type of the attribute name of the object type typ.
func attributeType(t testing.TB, typ tftypes.Type, name string) tftypes.Type {
	t.Helper()
	return testtool.AttributeType(t, typ, name)
}

// dataSourceConfig is an omni_pd_pipeline configuration as Terraform sends
// it: every attribute not in set is null.
func dataSourceConfig(t testing.TB, set map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	return objectValue(t, pdPipelineDataSourceType(), set)
}

// attrObject is a value for a nested-object attribute of the data source,
// such as prefill: the attributes in set, the others null.
func attrObject(t testing.TB, attribute string, set map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	return objectValue(t, attributeType(t, pdPipelineDataSourceType(), attribute), set)
}

// tfNumber is a number value; strings are tfStr's, from pipeline_outputs.go.
func tfNumber(n int64) tftypes.Value {
	return tftypes.NewValue(tftypes.Number, big.NewFloat(float64(n)))
}

// seedWith is the seed's inputs (its model) with extra set over them.
func seedWith(extra map[string]tftypes.Value) map[string]tftypes.Value {
	out := map[string]tftypes.Value{"model": tfStr(seedModel)}
	maps.Copy(out, extra)
	return out
}

// talkerOverride is a stage_overrides value setting one key of the talker.
func talkerOverride(key string, v tftypes.Value) tftypes.Value {
	talker := tftypes.Object{AttributeTypes: map[string]tftypes.Type{key: v.Type()}}
	return tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"talker": talker}},
		map[string]tftypes.Value{"talker": tftypes.NewValue(talker, map[string]tftypes.Value{key: v})})
}

// The computed attributes are exactly the outputs and
// pipelineComputedInputs: writeUnknownOutputs marks only those unknown
// while an input is unknown, so a computed input missing from the list
// would keep a value the plan cannot know yet.
func TestComputedAttributes_Listed(t *testing.T) {
	for entity, attrs := range map[string]map[string]bool{
		"data source": computedOf(pdPipelineDataSourceSchema().Attributes),
		"resource":    computedOf(pdPipelineResourceSchema().Attributes),
	} {
		var computed []string
		for name, c := range attrs {
			if c {
				computed = append(computed, name)
			}
		}
		sort.Strings(computed)
		want := append(slices.Clone(pipelineOutputNames), pipelineComputedInputs...)
		sort.Strings(want)
		if !slices.Equal(computed, want) {
			t.Errorf("%s: computed attributes %v, want exactly the outputs and pipelineComputedInputs %v", entity, computed, want)
		}
	}
}

func computedOf[A interface{ IsComputed() bool }](attrs map[string]A) map[string]bool {
	out := make(map[string]bool, len(attrs))
	for name, a := range attrs {
		out[name] = a.IsComputed()
	}
	return out
}
