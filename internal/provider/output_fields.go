package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// outputField is one output of omni_pd_pipeline, or one attribute inside
// an output, computed from the value S it describes: the plan's result for
// an output, an element of a list for an attribute of its objects. The
// constructors below are the kinds the outputs use. Each field holds:
//
//   - attribute: its schema declaration (type, description, Computed), from
//     which both entities' schemas, the docs and the state's type derive;
//   - terraform: its value as a tftypes.Value of that type, what
//     outputsFromResult writes into the plan or the state on every plan of
//     every instance. Framework values built first and converted computed
//     every object's type again and checked every value twice
//     (PERFORMANCE.md);
//   - framework: the same value built as framework values (types.StringValue,
//     types.ObjectValue, ...), the way the framework builds them. Converted
//     with ToTerraformValue, it is the oracle
//     TestOutputsFromResult_MatchesFrameworkBuilder holds terraform to.
//
// Both read the value through the one accessor the field is given, so an
// output's meaning is written once.
type outputField[S any] struct {
	name      string
	attribute schema.Attribute
	terraform func(S) tftypes.Value
	framework func(S) (attr.Value, diag.Diagnostics)
}

// leaf is a field of one value, which get reads and terraform and
// framework build.
func leaf[S, V any](name string, a schema.Attribute, get func(S) V,
	terraform func(V) tftypes.Value, framework func(V) (attr.Value, diag.Diagnostics),
) outputField[S] {
	return outputField[S]{
		name:      name,
		attribute: a,
		terraform: func(s S) tftypes.Value { return terraform(get(s)) },
		framework: func(s S) (attr.Value, diag.Diagnostics) { return framework(get(s)) },
	}
}

// text is a string.
func text[S any](name, description string, get func(S) string) outputField[S] {
	return leaf(name, stringAttribute(description), get, tfStr, fwString)
}

// textOrNull is a string that is null where the engine says "none" with
// "" (a stage's host on a single-host pipeline).
func textOrNull[S any](name, description string, get func(S) string) outputField[S] {
	return leaf(name, stringAttribute(description), get, tfStrOrNull, fwStringOrNull)
}

// textPointer is a string that is null where the engine's pointer is nil.
func textPointer[S any](name, description string, get func(S) *string) outputField[S] {
	return leaf(name, stringAttribute(description), get, tfStrPointer, fwStringPointer)
}

// integer is a whole number.
func integer[S any](name, description string, get func(S) int) outputField[S] {
	return leaf(name, int64Attribute(description), get, tfInt, fwInt)
}

// integerPointer is a whole number that is null where the engine's pointer
// is nil.
func integerPointer[S any](name, description string, get func(S) *int) outputField[S] {
	return leaf(name, int64Attribute(description), get, tfIntPointer, fwIntPointer)
}

// integers is a list of whole numbers; texts a list of strings. A nil
// slice is an empty list, never null.
func integers[S any](name, description string, get func(S) []int) outputField[S] {
	a := schema.ListAttribute{MarkdownDescription: description, Computed: true, ElementType: types.Int64Type}
	t := terraformType[tftypes.List](a)
	return leaf(name, a, get, func(xs []int) tftypes.Value { return tfInts(t, xs) }, fwInts)
}

func texts[S any](name, description string, get func(S) []string) outputField[S] {
	a := schema.ListAttribute{MarkdownDescription: description, Computed: true, ElementType: types.StringType}
	t := terraformType[tftypes.List](a)
	return leaf(name, a, get, func(xs []string) tftypes.Value { return tfStrs(t, xs) }, fwStrings)
}

// textMap is a map of strings; a nil map is an empty one, not null, so
// `length(launch.env)` and `merge()` work without a null check.
func textMap[S any](name, description string, get func(S) map[string]string) outputField[S] {
	a := schema.MapAttribute{MarkdownDescription: description, Computed: true, ElementType: types.StringType}
	t := terraformType[tftypes.Map](a)
	return leaf(name, a, get, func(m map[string]string) tftypes.Value { return tfStrMap(t, m) }, fwStringMap)
}

func stringAttribute(description string) schema.StringAttribute {
	return schema.StringAttribute{MarkdownDescription: description, Computed: true}
}

func int64Attribute(description string) schema.Int64Attribute {
	return schema.Int64Attribute{MarkdownDescription: description, Computed: true}
}

// object is an object of fields, null where get gives nil.
func object[S, E any](name, description string, get func(S) *E, fields ...outputField[*E]) outputField[S] {
	a := schema.SingleNestedAttribute{MarkdownDescription: description, Computed: true, Attributes: fieldAttributes(fields)}
	t := terraformType[tftypes.Object](a)
	attrTypes := attributeTypes(a.Attributes)
	return outputField[S]{
		name:      name,
		attribute: a,
		terraform: func(s S) tftypes.Value {
			e := get(s)
			if e == nil {
				return tftypes.NewValue(t, nil)
			}
			return tftypes.NewValue(t, terraformAttributes(fields, e))
		},
		framework: func(s S) (attr.Value, diag.Diagnostics) {
			e := get(s)
			if e == nil {
				return types.ObjectNull(attrTypes), nil
			}
			attrs, diags := frameworkAttributes(fields, e)
			v, d := types.ObjectValue(attrTypes, attrs)
			diags.Append(d...)
			return v, diags
		},
	}
}

// objects is a list of objects of fields, one for each element get gives;
// a nil slice is an empty list.
func objects[S, E any](name, description string, get func(S) []E, fields ...outputField[*E]) outputField[S] {
	a := schema.ListNestedAttribute{MarkdownDescription: description, Computed: true,
		NestedObject: schema.NestedAttributeObject{Attributes: fieldAttributes(fields)}}
	t := terraformType[tftypes.List](a)
	elemType := mustType[tftypes.Object](t.ElementType)
	objectType := types.ObjectType{AttrTypes: attributeTypes(a.NestedObject.Attributes)}
	return outputField[S]{
		name:      name,
		attribute: a,
		terraform: func(s S) tftypes.Value {
			xs := get(s)
			elems := make([]tftypes.Value, len(xs))
			for i := range xs {
				elems[i] = tftypes.NewValue(elemType, terraformAttributes(fields, &xs[i]))
			}
			return tftypes.NewValue(t, elems)
		},
		framework: func(s S) (attr.Value, diag.Diagnostics) {
			xs := get(s)
			elems := make([]attr.Value, len(xs))
			var diags diag.Diagnostics
			for i := range xs {
				attrs, d := frameworkAttributes(fields, &xs[i])
				diags.Append(d...)
				elems[i], d = types.ObjectValue(objectType.AttrTypes, attrs)
				diags.Append(d...)
			}
			v, d := types.ListValue(objectType, elems)
			diags.Append(d...)
			return v, diags
		},
	}
}

// fieldAttributes are fields' schema declarations by name.
func fieldAttributes[S any](fields []outputField[S]) map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(fields))
	for _, f := range fields {
		if _, twice := out[f.name]; twice {
			panic("output attribute " + f.name + " is declared twice")
		}
		out[f.name] = f.attribute
	}
	return out
}

// attributeTypes are the framework types of an object's attributes.
func attributeTypes(attrs map[string]schema.Attribute) map[string]attr.Type {
	out := make(map[string]attr.Type, len(attrs))
	for name, a := range attrs {
		out[name] = a.GetType()
	}
	return out
}

func terraformAttributes[S any](fields []outputField[S], s S) map[string]tftypes.Value {
	out := make(map[string]tftypes.Value, len(fields))
	for _, f := range fields {
		out[f.name] = f.terraform(s)
	}
	return out
}

func frameworkAttributes[S any](fields []outputField[S], s S) (map[string]attr.Value, diag.Diagnostics) {
	out := make(map[string]attr.Value, len(fields))
	var diags diag.Diagnostics
	for _, f := range fields {
		v, d := f.framework(s)
		diags.Append(d...)
		out[f.name] = v
	}
	return out, diags
}

// terraformType is an attribute's Terraform type, as the kind T the
// constructor above built it as; another is a programming error every
// test run hits.
func terraformType[T tftypes.Type](a schema.Attribute) T {
	return mustType[T](a.GetType().TerraformType(context.Background()))
}

func mustType[T tftypes.Type](t tftypes.Type) T {
	v, ok := t.(T)
	if !ok {
		panic(fmt.Sprintf("output type %v is not a %T", t, v))
	}
	return v
}

// The leaves' values as the framework builds them, for the oracle.

func fwString(v string) (attr.Value, diag.Diagnostics) { return types.StringValue(v), nil }

func fwStringOrNull(v string) (attr.Value, diag.Diagnostics) {
	if v == "" {
		return types.StringNull(), nil
	}
	return types.StringValue(v), nil
}

func fwStringPointer(p *string) (attr.Value, diag.Diagnostics) {
	return types.StringPointerValue(p), nil
}

func fwInt(v int) (attr.Value, diag.Diagnostics) { return types.Int64Value(int64(v)), nil }

func fwIntPointer(p *int) (attr.Value, diag.Diagnostics) {
	if p == nil {
		return types.Int64Null(), nil
	}
	return types.Int64Value(int64(*p)), nil
}

func fwInts(xs []int) (attr.Value, diag.Diagnostics) {
	elems := make([]attr.Value, len(xs))
	for i, x := range xs {
		elems[i] = types.Int64Value(int64(x))
	}
	return types.ListValue(types.Int64Type, elems)
}

func fwStrings(xs []string) (attr.Value, diag.Diagnostics) {
	elems := make([]attr.Value, len(xs))
	for i, x := range xs {
		elems[i] = types.StringValue(x)
	}
	return types.ListValue(types.StringType, elems)
}

func fwStringMap(m map[string]string) (attr.Value, diag.Diagnostics) {
	elems := make(map[string]attr.Value, len(m))
	for k, v := range m {
		elems[k] = types.StringValue(v)
	}
	return types.MapValue(types.StringType, elems)
}
