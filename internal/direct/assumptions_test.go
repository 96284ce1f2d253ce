package direct

import (
	"context"
	"fmt"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
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

	"github.com/omnipd/terraform-provider-omni/internal/provider"
)

// resourceSchema is the omni_pd_pipeline resource's schema.
func resourceSchema(t testing.TB) rschema.Schema {
	t.Helper()
	var resp resource.SchemaResponse
	provider.NewPDPipelineResource().Schema(context.Background(), resource.SchemaRequest{}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	return resp.Schema
}

// TestAssumptions: the direct path skips the framework's passes around
// the entities' validation, Read and ModifyPlan, which is right only while
// the resource has no identity and no move-state support, neither entity
// has config validators, and the schemas have no blocks, no custom types,
// no defaults, no write-only attributes and no plan modifier but
// triggers' RequiresReplace. Each is checked through the framework's own
// interfaces, so adding one fails here, not in a user's plan.
func TestAssumptions(t *testing.T) {
	r := provider.NewPDPipelineResource()
	if _, ok := r.(resource.ResourceWithIdentity); ok {
		t.Error("the resource has an identity; the direct plan does not handle one")
	}
	if _, ok := r.(resource.ResourceWithMoveState); ok {
		t.Error("the resource moves state; the direct path was not built for it")
	}
	// Validation runs the entities' own checks, which make the framework's
	// schema walk; config validators would run outside them.
	if _, ok := r.(resource.ResourceWithConfigValidators); ok {
		t.Error("the resource has config validators; the direct validation does not run them")
	}
	if _, ok := provider.NewPDPipelineDataSource().(datasource.DataSourceWithConfigValidators); ok {
		t.Error("the data source has config validators; the direct validation does not run them")
	}
	var ds datasource.SchemaResponse
	provider.NewPDPipelineDataSource().Schema(context.Background(), datasource.SchemaRequest{}, &ds)
	if len(ds.Schema.Blocks) > 0 {
		t.Errorf("the data source has blocks; the direct validation and read do not nullify them")
	}
	rs := resourceSchema(t)
	if len(rs.Blocks) > 0 {
		t.Errorf("the resource has blocks")
	}
	for name, a := range rs.Attributes {
		checkAttribute(t.Errorf, "resource "+name, a, name == "triggers")
	}
}

// checkAttribute fails, at any depth, on a custom type, a default, a
// write-only attribute, or a plan modifier where none is allowed. Each is
// asked through the method the framework itself reads it with.
func checkAttribute(errorf func(format string, args ...any), where string, a any, modifiersAllowed bool) {
	if typed, ok := a.(interface{ GetType() attr.Type }); ok && !baseType(typed.GetType()) {
		errorf("%s has the custom type %T; the direct path skips semantic equality", where, typed.GetType())
	}
	if wo, ok := a.(interface{ IsWriteOnly() bool }); ok && wo.IsWriteOnly() {
		errorf("%s is write-only; the direct path does not null write-only values", where)
	}
	if hasDefault(a) {
		errorf("%s has a default; the direct path does not apply defaults", where)
	}
	if !modifiersAllowed && hasPlanModifiers(a) {
		errorf("%s has plan modifiers; the direct path applies only triggers' RequiresReplace", where)
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
func TestAssumptionsCanFail(t *testing.T) {
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
