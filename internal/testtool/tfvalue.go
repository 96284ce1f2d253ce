package testtool

import (
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Object is a value of the object type typ, as Terraform sends a
// configuration: every attribute not in set is null. An attribute set
// that typ does not have fails the test.
func Object(t testing.TB, typ tftypes.Type, set map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	obj, ok := typ.(tftypes.Object)
	if !ok {
		t.Fatalf("%s is not an object type", typ)
	}
	vals := make(map[string]tftypes.Value, len(obj.AttributeTypes))
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

// AttributeType is the type of the attribute name of the object type typ.
func AttributeType(t testing.TB, typ tftypes.Type, name string) tftypes.Type {
	t.Helper()
	obj, ok := typ.(tftypes.Object)
	if !ok || obj.AttributeTypes[name] == nil {
		t.Fatalf("%s has no attribute %q", typ, name)
	}
	return obj.AttributeTypes[name]
}
