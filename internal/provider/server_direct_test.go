package provider

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/float32planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int32default"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/numberplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
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

// TestDirect_Assumptions: directServer answers validation, reads and plans
// itself, running the schema's validators, the entities' ValidateConfig
// (engineErrorsBeside) and planResource, and skips the framework's passes
// over blocks, custom types, defaults, plan modifiers and write-only
// values. That is right only while the entities add no config validators,
// identity or move-state support, and the schemas have no blocks, no custom
// types, no defaults, no write-only attributes, no plan modifier but
// triggers' RequiresReplace and no computed attribute but the outputs and
// pipelineComputedInputs. Each is checked through the framework's own
// interfaces and values, so adding one fails here, not in a user's plan
// (and the acceptance suite, run through the framework path too, shows
// what the direct path would miss).
func TestDirect_Assumptions(t *testing.T) {
	r := NewPDPipelineResource()
	d := NewPDPipelineDataSource()
	if _, ok := r.(resource.ResourceWithConfigValidators); ok {
		t.Error("the resource has config validators; directServer's validation does not run them")
	}
	if _, ok := d.(datasource.DataSourceWithConfigValidators); ok {
		t.Error("the data source has config validators; directServer's validation does not run them")
	}
	if _, ok := r.(resource.ResourceWithIdentity); ok {
		t.Error("the resource has an identity; directServer's plan does not handle one")
	}
	if _, ok := r.(resource.ResourceWithMoveState); ok {
		t.Error("the resource moves state; directServer was not built for it")
	}
	// ValidateConfig is the one hook both paths run, as engineErrorsBeside.
	if _, ok := r.(resource.ResourceWithValidateConfig); !ok {
		t.Error("the resource lost ValidateConfig, which directServer's validation mirrors")
	}
	if _, ok := d.(datasource.DataSourceWithValidateConfig); !ok {
		t.Error("the data source lost ValidateConfig, which directServer's validation mirrors")
	}

	ds := pdPipelineDataSourceSchema()
	if len(ds.Blocks) > 0 {
		t.Errorf("the data source has blocks")
	}
	for name, a := range ds.Attributes {
		checkAttribute(t.Errorf, "data source "+name, a, false)
	}
	rs := pdPipelineResourceSchema()
	if len(rs.Blocks) > 0 {
		t.Errorf("the resource has blocks")
	}
	var computed []string
	for name, a := range rs.Attributes {
		checkAttribute(t.Errorf, "resource "+name, a, name == "triggers")
		if a.IsComputed() {
			computed = append(computed, name)
		}
	}
	sort.Strings(computed)
	outputs := append(slices.Clone(pipelineOutputNames), pipelineComputedInputs...)
	sort.Strings(outputs)
	if !slices.Equal(computed, outputs) {
		t.Errorf("computed attributes %v, want exactly the outputs and pipelineComputedInputs %v: directServer marks only those unknown", computed, outputs)
	}
}

// checkAttribute fails, at any depth, on a custom type, a default, a
// write-only attribute, or a plan modifier where none is allowed. Each is
// asked through the method the framework itself reads it with.
func checkAttribute(errorf func(format string, args ...any), where string, a any, modifiersAllowed bool) {
	if typed, ok := a.(interface{ GetType() attr.Type }); ok && !baseType(typed.GetType()) {
		errorf("%s has the custom type %T; directServer skips semantic equality", where, typed.GetType())
	}
	if wo, ok := a.(interface{ IsWriteOnly() bool }); ok && wo.IsWriteOnly() {
		errorf("%s is write-only; directServer does not null write-only values", where)
	}
	if hasDefault(a) {
		errorf("%s has a default; directServer does not apply defaults", where)
	}
	if !modifiersAllowed && hasPlanModifiers(a) {
		errorf("%s has plan modifiers; directServer applies only triggers' RequiresReplace", where)
	}
	// The data source's and the resource's NestedAttribute are one interface.
	if n, ok := a.(dsschema.NestedAttribute); ok {
		for name, child := range n.GetNestedObject().GetAttributes() {
			checkAttribute(errorf, where+"."+name, child, false)
		}
	}
}

// baseType reports whether t is one of the framework's own types, at
// every level of a collection or object.
func baseType(t attr.Type) bool {
	switch t := t.(type) {
	case basetypes.StringType, basetypes.NumberType, basetypes.BoolType, basetypes.Int64Type,
		basetypes.Int32Type, basetypes.Float64Type, basetypes.Float32Type, basetypes.DynamicType:
		return true
	case basetypes.ListType:
		return baseType(t.ElemType)
	case basetypes.SetType:
		return baseType(t.ElemType)
	case basetypes.MapType:
		return baseType(t.ElemType)
	case basetypes.ObjectType:
		for _, at := range t.AttrTypes {
			if !baseType(at) {
				return false
			}
		}
		return true
	}
	return false
}

func hasDefault(a any) bool {
	switch a := a.(type) {
	case interface{ StringDefaultValue() defaults.String }:
		return a.StringDefaultValue() != nil
	case interface{ NumberDefaultValue() defaults.Number }:
		return a.NumberDefaultValue() != nil
	case interface{ BoolDefaultValue() defaults.Bool }:
		return a.BoolDefaultValue() != nil
	case interface{ Int64DefaultValue() defaults.Int64 }:
		return a.Int64DefaultValue() != nil
	case interface{ Float64DefaultValue() defaults.Float64 }:
		return a.Float64DefaultValue() != nil
	case interface{ Int32DefaultValue() defaults.Int32 }:
		return a.Int32DefaultValue() != nil
	case interface{ Float32DefaultValue() defaults.Float32 }:
		return a.Float32DefaultValue() != nil
	case interface{ ListDefaultValue() defaults.List }:
		return a.ListDefaultValue() != nil
	case interface{ SetDefaultValue() defaults.Set }:
		return a.SetDefaultValue() != nil
	case interface{ MapDefaultValue() defaults.Map }:
		return a.MapDefaultValue() != nil
	case interface{ ObjectDefaultValue() defaults.Object }:
		return a.ObjectDefaultValue() != nil
	case interface{ DynamicDefaultValue() defaults.Dynamic }:
		return a.DynamicDefaultValue() != nil
	}
	return false
}

func hasPlanModifiers(a any) bool {
	switch a := a.(type) {
	case interface{ StringPlanModifiers() []planmodifier.String }:
		return len(a.StringPlanModifiers()) > 0
	case interface{ NumberPlanModifiers() []planmodifier.Number }:
		return len(a.NumberPlanModifiers()) > 0
	case interface{ BoolPlanModifiers() []planmodifier.Bool }:
		return len(a.BoolPlanModifiers()) > 0
	case interface{ Int64PlanModifiers() []planmodifier.Int64 }:
		return len(a.Int64PlanModifiers()) > 0
	case interface{ Float64PlanModifiers() []planmodifier.Float64 }:
		return len(a.Float64PlanModifiers()) > 0
	case interface{ Int32PlanModifiers() []planmodifier.Int32 }:
		return len(a.Int32PlanModifiers()) > 0
	case interface{ Float32PlanModifiers() []planmodifier.Float32 }:
		return len(a.Float32PlanModifiers()) > 0
	case interface{ ListPlanModifiers() []planmodifier.List }:
		return len(a.ListPlanModifiers()) > 0
	case interface{ SetPlanModifiers() []planmodifier.Set }:
		return len(a.SetPlanModifiers()) > 0
	case interface{ MapPlanModifiers() []planmodifier.Map }:
		return len(a.MapPlanModifiers()) > 0
	case interface{ ObjectPlanModifiers() []planmodifier.Object }:
		return len(a.ObjectPlanModifiers()) > 0
	case interface{ DynamicPlanModifiers() []planmodifier.Dynamic }:
		return len(a.DynamicPlanModifiers()) > 0
	}
	return false
}

// A custom type, a default or a plan modifier on any attribute is found,
// each on its own.
func TestDirect_AssumptionsCanFail(t *testing.T) {
	for name, a := range map[string]any{
		"string default":        rschema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("a")},
		"int32 default":         rschema.Int32Attribute{Optional: true, Computed: true, Default: int32default.StaticInt32(1)},
		"number plan modifier":  rschema.NumberAttribute{Optional: true, PlanModifiers: []planmodifier.Number{numberplanmodifier.RequiresReplace()}},
		"float32 plan modifier": rschema.Float32Attribute{Optional: true, PlanModifiers: []planmodifier.Float32{float32planmodifier.RequiresReplace()}},
		"custom type":           rschema.StringAttribute{Optional: true, CustomType: customStringType{}},
		"write-only":            rschema.StringAttribute{Optional: true, WriteOnly: true},
	} {
		var faults []string
		checkAttribute(collect(&faults), name, a, false)
		if len(faults) == 0 {
			t.Errorf("%s went unnoticed", name)
		}
	}
	if baseType(customStringType{}) || baseType(types.ListType{ElemType: customStringType{}}) {
		t.Error("a custom type went unnoticed")
	}
	var faults []string
	checkAttribute(collect(&faults), "plain", rschema.StringAttribute{Optional: true}, false)
	if len(faults) > 0 {
		t.Errorf("a plain attribute was faulted: %v", faults)
	}
}

// collect is an errorf that keeps each message in faults, so a checker
// can be tested without a *testing.T of its own.
func collect(faults *[]string) func(format string, args ...any) {
	return func(format string, args ...any) { *faults = append(*faults, fmt.Sprintf(format, args...)) }
}

// customStringType is a custom type, as a provider would declare one.
type customStringType struct{ basetypes.StringType }

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
