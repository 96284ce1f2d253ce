package provider

import (
	"context"
	"math/big"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// dataSourceConfig is an omni_pd_pipeline configuration as Terraform sends
// it: every attribute not in set is null.
func dataSourceConfig(t testing.TB, set map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	typ, ok := pdPipelineDataSourceType().(tftypes.Object)
	if !ok {
		t.Fatal("the data source's type is not an object")
	}
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	for name, v := range set {
		if _, ok := typ.AttributeTypes[name]; !ok {
			t.Fatalf("no attribute %q", name)
		}
		vals[name] = v
	}
	return tftypes.NewValue(typ, vals)
}

// attrObject is a value for a nested-object attribute such as prefill: the
// attributes in set, the others null.
func attrObject(t testing.TB, attribute string, set map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	typ, ok := pdPipelineDataSourceType().(tftypes.Object).AttributeTypes[attribute].(tftypes.Object)
	if !ok {
		t.Fatalf("attribute %q is not an object", attribute)
	}
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	for name, v := range set {
		vals[name] = v
	}
	return tftypes.NewValue(typ, vals)
}

func tfString(s string) tftypes.Value { return tftypes.NewValue(tftypes.String, s) }
func tfNumber(n int64) tftypes.Value {
	return tftypes.NewValue(tftypes.Number, big.NewFloat(float64(n)))
}

// TestDirectRead_MatchesFramework: directReads answers exactly what the
// framework's own ReadDataSource answers, byte for byte, for outputs,
// warnings, errors at nested paths and unknown inputs alike.
func TestDirectRead_MatchesFramework(t *testing.T) {
	seed := map[string]tftypes.Value{"model": tfString(seedModel)}
	with := func(extra map[string]tftypes.Value) map[string]tftypes.Value {
		out := map[string]tftypes.Value{"model": tfString(seedModel)}
		for k, v := range extra {
			out[k] = v
		}
		return out
	}
	cases := map[string]map[string]tftypes.Value{
		"seed": seed,
		"reserved port": with(map[string]tftypes.Value{
			"reserved_ports": tftypes.NewValue(tftypes.Set{ElementType: tftypes.Number}, []tftypes.Value{tfNumber(25201)}),
		}),
		"stages format and overrides": with(map[string]tftypes.Value{
			"format": tfString("stages"),
			"stage_overrides": tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{
				"talker": tftypes.Object{AttributeTypes: map[string]tftypes.Type{"max_num_seqs": tftypes.Number}},
			}}, map[string]tftypes.Value{
				"talker": tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"max_num_seqs": tftypes.Number}},
					map[string]tftypes.Value{"max_num_seqs": tfNumber(8)}),
			}),
		}),
		"memory warning": with(map[string]tftypes.Value{
			"stage_overrides": tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{
				"talker": tftypes.Object{AttributeTypes: map[string]tftypes.Type{"gpu_memory_utilization": tftypes.Number}},
			}}, map[string]tftypes.Value{
				"talker": tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"gpu_memory_utilization": tftypes.Number}},
					map[string]tftypes.Value{"gpu_memory_utilization": tftypes.NewValue(tftypes.Number, big.NewFloat(0.88))}),
			}),
		}),
		"errors at nested paths": with(map[string]tftypes.Value{
			"gpus":   tfNumber(2),
			"decode": attrObject(t, "decode", map[string]tftypes.Value{"tensor_parallel_size": tfNumber(3)}),
		}),
		"broken base_config": {"base_config": tfString("stage_args: [\n")},
		"unknown model":      {"model": tftypes.NewValue(tftypes.String, tftypes.UnknownValue)},
		"no model":           {},
	}

	ctx := context.Background()
	framework := providerserver.NewProtocol6(New("test")())()
	direct := newServer("test")()
	if _, err := framework.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	sawDiagnostics := map[tfprotov6.DiagnosticSeverity]bool{}
	for name, set := range cases {
		t.Run(name, func(t *testing.T) {
			config, err := tfprotov6.NewDynamicValue(pdPipelineDataSourceType(), dataSourceConfig(t, set))
			if err != nil {
				t.Fatal(err)
			}
			req := &tfprotov6.ReadDataSourceRequest{TypeName: pdPipelineTypeName, Config: &config}
			want, err := framework.ReadDataSource(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := direct.ReadDataSource(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Diagnostics, want.Diagnostics) {
				t.Errorf("diagnostics differ:\n direct    %v\n framework %v", got.Diagnostics, want.Diagnostics)
			}
			if (got.State == nil) != (want.State == nil) ||
				got.State != nil && string(got.State.MsgPack) != string(want.State.MsgPack) {
				t.Errorf("states differ")
			}
			if want.State == nil {
				t.Errorf("the framework returned no state")
			}
			for _, d := range want.Diagnostics {
				sawDiagnostics[d.Severity] = true
			}
		})
	}
	// The table must exercise both kinds of diagnostics, or the comparison
	// above proves less than it claims.
	if !sawDiagnostics[tfprotov6.DiagnosticSeverityError] || !sawDiagnostics[tfprotov6.DiagnosticSeverityWarning] {
		t.Errorf("the cases produced diagnostics of severities %v; want errors and warnings", sawDiagnostics)
	}
}

// TestDirectRead_PassesOtherCallsOn: reads of other types go to the
// framework, which reports the unknown type.
func TestDirectRead_PassesOtherCallsOn(t *testing.T) {
	resp, err := newServer("test")().ReadDataSource(context.Background(),
		&tfprotov6.ReadDataSourceRequest{TypeName: "omni_nothing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Diagnostics) != 1 || resp.Diagnostics[0].Severity != tfprotov6.DiagnosticSeverityError {
		t.Fatalf("diagnostics = %v, want the framework's unknown-type error", resp.Diagnostics)
	}
}

// TestProtoDiagnostics_Paths: every kind of path step converts as the
// framework converts it.
func TestProtoDiagnostics_Paths(t *testing.T) {
	var diags diag.Diagnostics
	p := path.Root("a").AtName("b").AtListIndex(2).AtMapKey("k").AtSetValue(types.Int64Value(7))
	diags.AddAttributeWarning(p, "summary", "detail")
	diags.AddError("no path", "detail")
	got := protoDiagnostics(context.Background(), diags)
	want := []*tfprotov6.Diagnostic{
		{
			Severity: tfprotov6.DiagnosticSeverityWarning, Summary: "summary", Detail: "detail",
			Attribute: tftypes.NewAttributePath().WithAttributeName("a").WithAttributeName("b").
				WithElementKeyInt(2).WithElementKeyString("k").WithElementKeyValue(tftypes.NewValue(tftypes.Number, big.NewFloat(7))),
		},
		{Severity: tfprotov6.DiagnosticSeverityError, Summary: "no path", Detail: "detail"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d diagnostics, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Severity != w.Severity || g.Summary != w.Summary || g.Detail != w.Detail ||
			(g.Attribute == nil) != (w.Attribute == nil) || g.Attribute != nil && !g.Attribute.Equal(w.Attribute) {
			t.Errorf("diagnostic %d = %+v at %v, want %+v at %v", i, g, g.Attribute, w, w.Attribute)
		}
	}
}
