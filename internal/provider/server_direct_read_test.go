package provider

import (
	"context"
	"errors"
	"math/big"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
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
	// The direct side cannot fall back to the framework: a read that
	// reaches it fails the comparison.
	direct := directReads{&recordingServer{ProviderServer: framework, fail: true}}
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
			if got.Deferred != nil || want.Deferred != nil {
				t.Errorf("deferred: direct %v, framework %v; want neither", got.Deferred, want.Deferred)
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

// recordingServer counts the reads that reach it; with fail set it answers
// them with an error instead of passing them on.
type recordingServer struct {
	tfprotov6.ProviderServer
	reads int
	fail  bool
}

func (r *recordingServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	r.reads++
	if r.fail {
		return nil, errors.New("the read reached the framework")
	}
	return r.ProviderServer.ReadDataSource(ctx, req)
}

// TestDirectRead_FallsBack: reads the direct path was not built for go to
// the framework unchanged; the seed read does not.
func TestDirectRead_FallsBack(t *testing.T) {
	seed, err := tfprotov6.NewDynamicValue(pdPipelineDataSourceType(), dataSourceConfig(t, map[string]tftypes.Value{"model": tfString(seedModel)}))
	if err != nil {
		t.Fatal(err)
	}
	meta, err := tfprotov6.NewDynamicValue(tftypes.Object{}, tftypes.NewValue(tftypes.Object{}, map[string]tftypes.Value{}))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name        string
		req         *tfprotov6.ReadDataSourceRequest
		toFramework bool
	}{
		{"the seed", &tfprotov6.ReadDataSourceRequest{TypeName: pdPipelineTypeName, Config: &seed}, false},
		{"another type", &tfprotov6.ReadDataSourceRequest{TypeName: "omni_nothing", Config: &seed}, true},
		{"no configuration", &tfprotov6.ReadDataSourceRequest{TypeName: pdPipelineTypeName}, true},
		{"a provider_meta", &tfprotov6.ReadDataSourceRequest{TypeName: pdPipelineTypeName, Config: &seed, ProviderMeta: &meta}, true},
		{"a configuration that does not decode", &tfprotov6.ReadDataSourceRequest{TypeName: pdPipelineTypeName,
			Config: &tfprotov6.DynamicValue{MsgPack: []byte{0xc1}}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inner := &recordingServer{ProviderServer: providerserver.NewProtocol6(New("test")())()}
			if _, err := (directReads{inner}).ReadDataSource(context.Background(), tc.req); err != nil {
				t.Fatal(err)
			}
			if got := inner.reads == 1; got != tc.toFramework {
				t.Errorf("reached the framework: %v, want %v", got, tc.toFramework)
			}
		})
	}
}

// TestDirectRead_Assumptions: directReads skips the framework's passes over
// blocks and custom types, which is only right while the data source's
// schema has neither. Adding one fails here, not in a user's plan.
func TestDirectRead_Assumptions(t *testing.T) {
	s := pdPipelineDataSourceSchema()
	if len(s.Blocks) > 0 {
		t.Errorf("the data source has blocks; directReads must reify null collection blocks as the framework does")
	}
	var walk func(path string, a dsschema.Attribute)
	walk = func(path string, a dsschema.Attribute) {
		if reflect.ValueOf(a).FieldByName("CustomType").IsValid() && !reflect.ValueOf(a).FieldByName("CustomType").IsNil() {
			t.Errorf("%s has a custom type; directReads skips semantic equality", path)
		}
		if n, ok := a.(dsschema.NestedAttribute); ok {
			for name, child := range n.GetNestedObject().GetAttributes() {
				if c, ok := child.(dsschema.Attribute); ok {
					walk(path+"."+name, c)
				}
			}
		}
	}
	for name, a := range s.Attributes {
		walk(name, a)
	}
	var meta datasource.MetadataResponse
	NewPDPipelineDataSource().Metadata(context.Background(), datasource.MetadataRequest{ProviderTypeName: "omni"}, &meta)
	if meta.TypeName != pdPipelineTypeName {
		t.Errorf("the data source is %q; directReads answers %q", meta.TypeName, pdPipelineTypeName)
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
