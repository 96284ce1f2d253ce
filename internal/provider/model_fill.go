package provider

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
)

// fillModel sets each field of the model *m from the attribute its tfsdk
// tag names, as the framework's ObjectValue.As and Config.Get do for these
// models, whose fields are all framework values and whose embedded structs
// add their fields. Like the framework, it refuses an attribute without a
// field, a field without an attribute, and a value of another type.
//
// The framework's reflection checks every tag of every model with a
// freshly compiled regular expression on each call, which made reading the
// inputs a large share of each instance's read (PERFORMANCE.md); the
// fields here are looked up once per model type.
// TestFillModel_MatchesFramework holds the two to the same models.
func fillModel[M any](attrs map[string]attr.Value, m *M) error {
	fields := modelFields(reflect.TypeFor[M]())
	if len(attrs) != len(fields) {
		return fmt.Errorf("the object has %d attributes, the model %T %d fields", len(attrs), *m, len(fields))
	}
	target := reflect.ValueOf(m).Elem()
	for _, f := range fields {
		v, ok := attrs[f.tag]
		if !ok {
			return fmt.Errorf("the object has no attribute %q for the model %T", f.tag, *m)
		}
		value := reflect.ValueOf(v)
		field := target.FieldByIndex(f.index)
		if !value.IsValid() || !value.Type().AssignableTo(field.Type()) {
			return fmt.Errorf("attribute %q is %T, the model %T wants %s", f.tag, v, *m, field.Type())
		}
		field.Set(value)
	}
	return nil
}

// modelField is one tagged field of a model, at its index path.
type modelField struct {
	tag   string
	index []int
}

var modelFieldCache sync.Map // reflect.Type → []modelField

// modelFields lists the tagged fields of a model struct type, those of
// embedded structs included, once per type.
func modelFields(t reflect.Type) []modelField {
	if cached, ok := modelFieldCache.Load(t); ok {
		if fields, ok := cached.([]modelField); ok {
			return fields
		}
	}
	var fields []modelField
	var walk func(t reflect.Type, prefix []int)
	walk = func(t reflect.Type, prefix []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			index := append(append([]int(nil), prefix...), i)
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				walk(f.Type, index)
				continue
			}
			if tag := f.Tag.Get("tfsdk"); tag != "" && tag != "-" {
				fields = append(fields, modelField{tag: tag, index: index})
			}
		}
	}
	walk(t, nil)
	modelFieldCache.Store(t, fields)
	return fields
}
