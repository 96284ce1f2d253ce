package provider

import (
	"context"
	"errors"
	"math/big"
	"reflect"
	"slices"
	"sort"
	"testing"

	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// recordingServer counts the per-instance calls that reach it; with fail
// set it answers them with an error instead of passing them on.
type recordingServer struct {
	tfprotov6.ProviderServer
	calls int
	fail  bool
}

var errReachedFramework = errors.New("the call reached the framework")

func (r *recordingServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	r.calls++
	if r.fail {
		return nil, errReachedFramework
	}
	return r.ProviderServer.ReadDataSource(ctx, req)
}

func (r *recordingServer) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	r.calls++
	if r.fail {
		return nil, errReachedFramework
	}
	return r.ProviderServer.ValidateDataResourceConfig(ctx, req)
}

func (r *recordingServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	r.calls++
	if r.fail {
		return nil, errReachedFramework
	}
	return r.ProviderServer.ValidateResourceConfig(ctx, req)
}

func (r *recordingServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	r.calls++
	if r.fail {
		return nil, errReachedFramework
	}
	return r.ProviderServer.ReadResource(ctx, req)
}

func (r *recordingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	r.calls++
	if r.fail {
		return nil, errReachedFramework
	}
	return r.ProviderServer.PlanResourceChange(ctx, req)
}

// parityServers returns the framework's server and a directServer in front
// of it that cannot fall back to it: a call that reaches the framework
// through the direct side fails, so a parity test compares the two paths.
func parityServers(t testing.TB) (framework, direct tfprotov6.ProviderServer) {
	t.Helper()
	framework = providerserver.NewProtocol6(New("test")())()
	if _, err := framework.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	return framework, directServer{&recordingServer{ProviderServer: framework, fail: true}}
}

// objectValue is a value of the object type typ: every attribute not in
// set is null.
func objectValue(t testing.TB, typ tftypes.Type, set map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	obj, ok := typ.(tftypes.Object)
	if !ok {
		t.Fatalf("%s is not an object type", typ)
	}
	vals := map[string]tftypes.Value{}
	for name, at := range obj.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	for name, v := range set {
		if _, ok := obj.AttributeTypes[name]; !ok {
			t.Fatalf("no attribute %q", name)
		}
		vals[name] = v
	}
	return tftypes.NewValue(typ, vals)
}

// attributeType is the type of the attribute name of the object type typ.
func attributeType(t testing.TB, typ tftypes.Type, name string) tftypes.Type {
	t.Helper()
	obj, ok := typ.(tftypes.Object)
	if !ok {
		t.Fatalf("%s is not an object type", typ)
	}
	return obj.AttributeTypes[name]
}

// talkerOverride is a stage_overrides value setting one key of the talker.
func talkerOverride(key string, v tftypes.Value) tftypes.Value {
	talker := tftypes.Object{AttributeTypes: map[string]tftypes.Type{key: v.Type()}}
	return tftypes.NewValue(tftypes.Object{AttributeTypes: map[string]tftypes.Type{"talker": talker}},
		map[string]tftypes.Value{"talker": tftypes.NewValue(talker, map[string]tftypes.Value{key: v})})
}

// TestDirect_Assumptions: directServer skips the framework's passes over
// blocks, custom types, defaults and plan modifiers, and marks only the
// outputs unknown. That is right only while the schemas have no blocks, no
// custom types, no defaults, no plan modifier but triggers' and no computed
// attribute but the outputs. Adding one fails here, not in a user's plan.
func TestDirect_Assumptions(t *testing.T) {
	ds := pdPipelineDataSourceSchema()
	if len(ds.Blocks) > 0 {
		t.Errorf("the data source has blocks")
	}
	for name, a := range ds.Attributes {
		checkAttribute(t, "data source "+name, a)
	}
	rs := pdPipelineResourceSchema()
	if len(rs.Blocks) > 0 {
		t.Errorf("the resource has blocks")
	}
	var computed []string
	for name, a := range rs.Attributes {
		checkAttribute(t, "resource "+name, a)
		if a.IsComputed() {
			computed = append(computed, name)
		}
		modifiers := reflect.ValueOf(a).FieldByName("PlanModifiers")
		if modifiers.IsValid() && modifiers.Len() > 0 && name != "triggers" {
			t.Errorf("resource attribute %s has plan modifiers; directServer applies only triggers' RequiresReplace", name)
		}
	}
	sort.Strings(computed)
	outputs := append(slices.Clone(pipelineOutputNames), pipelineComputedInputs...)
	sort.Strings(outputs)
	if !slices.Equal(computed, outputs) {
		t.Errorf("computed attributes %v, want exactly the outputs and pipelineComputedInputs %v: directServer marks only those unknown", computed, outputs)
	}
}

// checkAttribute fails on a custom type or a default, at any depth.
func checkAttribute(t *testing.T, where string, a any) {
	t.Helper()
	v := reflect.ValueOf(a)
	if f := v.FieldByName("CustomType"); f.IsValid() && !f.IsNil() {
		t.Errorf("%s has a custom type; directServer skips semantic equality", where)
	}
	if f := v.FieldByName("Default"); f.IsValid() && !f.IsNil() {
		t.Errorf("%s has a default; directServer does not apply defaults", where)
	}
	// The data source's and the resource's NestedAttribute are one interface.
	if n, ok := a.(dsschema.NestedAttribute); ok {
		for name, child := range n.GetNestedObject().GetAttributes() {
			checkAttribute(t, where+"."+name, child)
		}
	}
}

// TestDirect_TypeNames: both entities are named what directServer answers.
func TestDirect_TypeNames(t *testing.T) {
	ctx := context.Background()
	srv := newServer("test")()
	schemas, err := srv.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := schemas.DataSourceSchemas[pdPipelineTypeName]; !ok {
		t.Errorf("no data source %s", pdPipelineTypeName)
	}
	if _, ok := schemas.ResourceSchemas[pdPipelineTypeName]; !ok {
		t.Errorf("no resource %s", pdPipelineTypeName)
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
