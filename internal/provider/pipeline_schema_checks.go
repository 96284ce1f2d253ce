package provider

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	dsschema "github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	rschema "github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// validationSchema is an entity's schema as validateConfig takes it.
type validationSchema struct {
	attrs map[string]schemaAttribute
	types map[string]attr.Type  // each attribute's type
	nulls map[string]attr.Value // each attribute's null value
	err   error                 // why a null value could not be made
}

// The entities' schemas as validateConfig takes them, built once.
var (
	dataSourceValidationSchema = sync.OnceValue(func() validationSchema {
		return newValidationSchema(asSchemaAttributes(pdPipelineDataSourceSchema().Attributes), pdPipelineDataSourceSchemaType())
	})
	resourceValidationSchema = sync.OnceValue(func() validationSchema {
		return newValidationSchema(asSchemaAttributes(pdPipelineResourceSchema().Attributes), pdPipelineResourceSchemaType())
	})
)

func newValidationSchema(attrs map[string]schemaAttribute, typ attr.Type) validationSchema {
	ctx := context.Background()
	vs := validationSchema{attrs: attrs, types: map[string]attr.Type{}, nulls: map[string]attr.Value{}}
	obj, ok := typ.(basetypes.ObjectType)
	if !ok {
		vs.err = fmt.Errorf("the schema's type is %T, not an object", typ)
		return vs
	}
	for name, t := range obj.AttrTypes {
		null, err := t.ValueFromTerraform(ctx, tftypes.NewValue(t.TerraformType(ctx), nil))
		if err != nil {
			vs.err = err
		}
		vs.types[name], vs.nulls[name] = t, null
	}
	return vs
}

// attributes converts a configuration's attributes to framework values,
// as the schema type's ValueFromTerraform does, with a null attribute (most
// of them: every output, every input left unset) given its null value made
// once: converting one builds its whole Terraform type again to compare.
func (vs validationSchema) attributes(ctx context.Context, raw tftypes.Value) (map[string]attr.Value, error) {
	if vs.err != nil {
		return nil, vs.err
	}
	var raws map[string]tftypes.Value
	if err := raw.As(&raws); err != nil {
		return nil, err
	}
	if len(raws) != len(vs.types) {
		return nil, fmt.Errorf("the configuration has %d attributes, the schema %d", len(raws), len(vs.types))
	}
	out := make(map[string]attr.Value, len(raws))
	for name, rv := range raws {
		t, ok := vs.types[name]
		if !ok {
			return nil, fmt.Errorf("the schema has no attribute %q", name)
		}
		if rv.IsNull() {
			out[name] = vs.nulls[name]
			continue
		}
		v, err := t.ValueFromTerraform(ctx, rv)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

// schemaAttribute is what the data source's and the resource's schema
// attributes have in common that validation needs.
type schemaAttribute interface {
	IsRequired() bool
	IsOptional() bool
	IsComputed() bool
	GetDeprecationMessage() string
}

// nestedAttributes returns the attributes of the objects a nested
// attribute holds, and the validators of each object. ok is false for an
// attribute that holds no objects.
func nestedAttributes(a schemaAttribute) (attrs map[string]schemaAttribute, objectValidators []validator.Object, ok bool) {
	switch a := a.(type) {
	case dsschema.SingleNestedAttribute:
		return asSchemaAttributes(a.Attributes), nil, true
	case dsschema.ListNestedAttribute:
		return asSchemaAttributes(a.NestedObject.Attributes), a.NestedObject.Validators, true
	case rschema.SingleNestedAttribute:
		return asSchemaAttributes(a.Attributes), nil, true
	case rschema.ListNestedAttribute:
		return asSchemaAttributes(a.NestedObject.Attributes), a.NestedObject.Validators, true
	}
	return nil, nil, false
}

func asSchemaAttributes[A schemaAttribute](in map[string]A) map[string]schemaAttribute {
	out := make(map[string]schemaAttribute, len(in))
	for name, a := range in {
		out[name] = a
	}
	return out
}

// holdsObjects reports whether an attribute holds nested objects, whether
// or not nestedAttributes knows its kind.
func holdsObjects(a schemaAttribute) bool {
	switch a.(type) {
	case dsschema.NestedAttribute, rschema.NestedAttribute:
		return true
	}
	return false
}

// validateConfig runs what the framework's SchemaValidate runs for these
// schemas: for every attribute, nested ones included, the read-only and
// required checks, the attribute's validators with its value, and the
// deprecation warning. The entities' ValidateConfig runs before the
// framework's own schema checks and cannot see their results, yet must
// know which attributes they fault (engineErrorsBeside), so it makes them
// itself; TestSchemaChecks_MatchFramework holds the two to the same
// diagnostics. Attributes are visited in name order, so the diagnostics
// come in a stable order.
func validateConfig(ctx context.Context, config tfsdk.Config, vs validationSchema) diag.Diagnostics {
	var diags diag.Diagnostics
	values, err := vs.attributes(ctx, config.Raw)
	if err != nil {
		addDefect(&diags, path.Empty(), "the configuration cannot be read: "+err.Error())
		return diags
	}
	validateObject(ctx, config, path.Empty(), vs.attrs, values, &diags)
	return diags
}

func validateObject(ctx context.Context, config tfsdk.Config, base path.Path, attrs map[string]schemaAttribute, values map[string]attr.Value, diags *diag.Diagnostics) {
	names := make([]string, 0, len(attrs))
	for name := range attrs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		validateAttribute(ctx, config, attrs[name], base.AtName(name), values[name], diags)
	}
}

func validateAttribute(ctx context.Context, config tfsdk.Config, a schemaAttribute, p path.Path, v attr.Value, diags *diag.Diagnostics) {
	if v == nil {
		addDefect(diags, p, "the configuration has no value for this attribute")
		return
	}
	null, unknown := v.IsNull(), v.IsUnknown()
	if d, ok := v.(basetypes.DynamicValue); ok && !null && !unknown {
		null, unknown = d.IsUnderlyingValueNull(), d.IsUnderlyingValueUnknown()
	}
	if a.IsComputed() && !a.IsOptional() && !null {
		diags.AddAttributeError(p, "Invalid Configuration for Read-Only Attribute",
			"Cannot set value for this attribute as the provider has marked it as read-only. Remove the configuration line setting the value.\n\n"+
				"Refer to the provider documentation or contact the provider developers for additional information about configurable and read-only attributes that are supported.")
	}
	if a.IsRequired() && null {
		diags.AddAttributeError(p, "Missing Configuration for Required Attribute",
			fmt.Sprintf("Must set a configuration value for the %s attribute as the provider has marked it as required.\n\n", p.String())+
				"Refer to the provider documentation or contact the provider developers for additional information about configurable attributes that are required.")
	}

	runValidators(ctx, config, a, p, v, diags)

	nested, objectValidators, ok := nestedAttributes(a)
	switch {
	case !ok && holdsObjects(a):
		addDefect(diags, p, fmt.Sprintf("validation does not know nested attributes of kind %T", a))
	case ok && !v.IsNull() && !v.IsUnknown():
		switch v := v.(type) {
		case types.Object:
			validateObject(ctx, config, p, nested, v.Attributes(), diags)
		case types.List:
			for i, e := range v.Elements() {
				o, _ := e.(types.Object)
				runObjectValidators(ctx, config, objectValidators, p.AtListIndex(i), o, diags)
				if !o.IsNull() && !o.IsUnknown() {
					validateObject(ctx, config, p.AtListIndex(i), nested, o.Attributes(), diags)
				}
			}
		}
	}

	if msg := a.GetDeprecationMessage(); msg != "" && !null && !unknown {
		diags.AddAttributeWarning(p, "Attribute Deprecated", msg)
	}
}

// runValidators calls the attribute's validators of its kind with its value.
func runValidators(ctx context.Context, config tfsdk.Config, a schemaAttribute, p path.Path, v attr.Value, diags *diag.Diagnostics) {
	expr := p.Expression()
	switch a := a.(type) {
	case interface{ StringValidators() []validator.String }:
		val, _ := v.(types.String)
		for _, vv := range a.StringValidators() {
			resp := &validator.StringResponse{}
			vv.ValidateString(ctx, validator.StringRequest{Config: config, ConfigValue: val, Path: p, PathExpression: expr}, resp)
			diags.Append(resp.Diagnostics...)
		}
	case interface{ NumberValidators() []validator.Number }:
		val, _ := v.(types.Number)
		for _, vv := range a.NumberValidators() {
			resp := &validator.NumberResponse{}
			vv.ValidateNumber(ctx, validator.NumberRequest{Config: config, ConfigValue: val, Path: p, PathExpression: expr}, resp)
			diags.Append(resp.Diagnostics...)
		}
	case interface{ Int64Validators() []validator.Int64 }:
		val, _ := v.(types.Int64)
		for _, vv := range a.Int64Validators() {
			resp := &validator.Int64Response{}
			vv.ValidateInt64(ctx, validator.Int64Request{Config: config, ConfigValue: val, Path: p, PathExpression: expr}, resp)
			diags.Append(resp.Diagnostics...)
		}
	case interface{ Float64Validators() []validator.Float64 }:
		val, _ := v.(types.Float64)
		for _, vv := range a.Float64Validators() {
			resp := &validator.Float64Response{}
			vv.ValidateFloat64(ctx, validator.Float64Request{Config: config, ConfigValue: val, Path: p, PathExpression: expr}, resp)
			diags.Append(resp.Diagnostics...)
		}
	case interface{ BoolValidators() []validator.Bool }:
		val, _ := v.(types.Bool)
		for _, vv := range a.BoolValidators() {
			resp := &validator.BoolResponse{}
			vv.ValidateBool(ctx, validator.BoolRequest{Config: config, ConfigValue: val, Path: p, PathExpression: expr}, resp)
			diags.Append(resp.Diagnostics...)
		}
	case interface{ ListValidators() []validator.List }:
		val, _ := v.(types.List)
		for _, vv := range a.ListValidators() {
			resp := &validator.ListResponse{}
			vv.ValidateList(ctx, validator.ListRequest{Config: config, ConfigValue: val, Path: p, PathExpression: expr}, resp)
			diags.Append(resp.Diagnostics...)
		}
	case interface{ SetValidators() []validator.Set }:
		val, _ := v.(types.Set)
		for _, vv := range a.SetValidators() {
			resp := &validator.SetResponse{}
			vv.ValidateSet(ctx, validator.SetRequest{Config: config, ConfigValue: val, Path: p, PathExpression: expr}, resp)
			diags.Append(resp.Diagnostics...)
		}
	case interface{ MapValidators() []validator.Map }:
		val, _ := v.(types.Map)
		for _, vv := range a.MapValidators() {
			resp := &validator.MapResponse{}
			vv.ValidateMap(ctx, validator.MapRequest{Config: config, ConfigValue: val, Path: p, PathExpression: expr}, resp)
			diags.Append(resp.Diagnostics...)
		}
	case interface{ ObjectValidators() []validator.Object }:
		val, _ := v.(types.Object)
		runObjectValidators(ctx, config, a.ObjectValidators(), p, val, diags)
	case interface{ DynamicValidators() []validator.Dynamic }:
		val, _ := v.(types.Dynamic)
		for _, vv := range a.DynamicValidators() {
			resp := &validator.DynamicResponse{}
			vv.ValidateDynamic(ctx, validator.DynamicRequest{Config: config, ConfigValue: val, Path: p, PathExpression: expr}, resp)
			diags.Append(resp.Diagnostics...)
		}
	}
}

func runObjectValidators(ctx context.Context, config tfsdk.Config, vs []validator.Object, p path.Path, v types.Object, diags *diag.Diagnostics) {
	for _, vv := range vs {
		resp := &validator.ObjectResponse{}
		vv.ValidateObject(ctx, validator.ObjectRequest{Config: config, ConfigValue: v, Path: p, PathExpression: p.Expression()}, resp)
		diags.Append(resp.Diagnostics...)
	}
}
