package provider

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// TestFillModel_MatchesFramework: fillModel reads every model the way the
// framework's ObjectValue.As does, on configurations that set, leave null
// and leave unknown each kind of attribute, nested objects included: the
// inputs as readInputs reads them from either entity's configuration, and
// each nested input's object.
func TestFillModel_MatchesFramework(t *testing.T) {
	ctx := context.Background()
	checked := 0
	for _, entity := range []struct {
		name string
		typ  attr.Type
		read func(t *testing.T, obj types.Object)
	}{
		{"data source", pdPipelineDataSourceSchemaType(), func(t *testing.T, obj types.Object) { compareInputs(ctx, t, obj) }},
		{"resource", pdPipelineResourceSchemaType(), func(t *testing.T, obj types.Object) { compareInputs(ctx, t, obj) }},
	} {
		for name, config := range invalidConfigs(t, tfType(t, entity.typ)) {
			t.Run(entity.name+"/"+name, func(t *testing.T) {
				obj := frameworkObject(ctx, t, entity.typ, config)
				entity.read(t, obj)
				attrs := obj.Attributes()
				for attribute, read := range map[string]func(*testing.T, types.Object){
					"prefill":    func(t *testing.T, o types.Object) { compareFill[roleModel](ctx, t, o) },
					"decode":     func(t *testing.T, o types.Object) { compareFill[roleModel](ctx, t, o) },
					"connector":  func(t *testing.T, o types.Object) { compareFill[connectorModel](ctx, t, o) },
					"systemd":    func(t *testing.T, o types.Object) { compareFill[systemdModel](ctx, t, o) },
					"port_range": func(t *testing.T, o types.Object) { compareFill[portRangeModel](ctx, t, o) },
				} {
					if o, ok := attrs[attribute].(types.Object); ok && !o.IsNull() && !o.IsUnknown() {
						read(t, o)
						checked++
					}
				}
			})
		}
	}
	if checked < 6 {
		t.Errorf("only %d nested objects were compared", checked)
	}
}

// compareInputs compares the inputs among a configuration's attributes,
// as an object of their own, read both ways (compareFill).
func compareInputs(ctx context.Context, t *testing.T, config types.Object) {
	t.Helper()
	attrs := inputsOf(config.Attributes())
	attrTypes := make(map[string]attr.Type, len(attrs))
	for name, v := range attrs {
		attrTypes[name] = v.Type(ctx)
	}
	obj, diags := types.ObjectValue(attrTypes, attrs)
	if diags.HasError() {
		t.Fatal(diags)
	}
	compareFill[pipelineInputs](ctx, t, obj)
}

// compareFill reads obj into the model M with fillModel and with the
// framework, and fails when they differ.
func compareFill[M any](ctx context.Context, t *testing.T, obj types.Object) {
	t.Helper()
	var want, got M
	if diags := obj.As(ctx, &want, basetypes.ObjectAsOptions{}); diags.HasError() {
		t.Fatalf("framework: %v", diags)
	}
	if err := fillModel(obj.Attributes(), &got); err != nil {
		t.Fatalf("fillModel: %v", err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%T differs:\n fillModel %+v\n framework %+v", got, got, want)
	}
}

// TestFillModel_Refuses: an object that does not fit the model is an
// error naming the attribute, as the framework's is.
func TestFillModel_Refuses(t *testing.T) {
	null := types.NumberNull()
	for name, tc := range map[string]struct {
		attrs map[string]attr.Value
		want  string
	}{
		"missing field":  {map[string]attr.Value{"first": null, "extra": null}, `no attribute "last"`},
		"extra":          {map[string]attr.Value{"first": null, "last": null, "extra": null}, "3 attributes"},
		"wrong type":     {map[string]attr.Value{"first": null, "last": types.StringNull()}, `attribute "last" is basetypes.StringValue`},
		"nil value":      {map[string]attr.Value{"first": null, "last": nil}, `attribute "last"`},
		"fewer than all": {map[string]attr.Value{"first": null}, "1 attributes"},
	} {
		t.Run(name, func(t *testing.T) {
			var m portRangeModel
			err := fillModel(tc.attrs, &m)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func tfType(t testing.TB, typ attr.Type) tftypes.Type {
	t.Helper()
	return typ.TerraformType(context.Background())
}

func frameworkObject(ctx context.Context, t testing.TB, typ attr.Type, v tftypes.Value) types.Object {
	t.Helper()
	value, err := typ.ValueFromTerraform(ctx, v)
	if err != nil {
		t.Fatal(err)
	}
	obj, ok := value.(types.Object)
	if !ok {
		t.Fatalf("%T is not an object", value)
	}
	return obj
}
