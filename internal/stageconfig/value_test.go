package stageconfig

import (
	"math"
	"strings"
	"testing"
)

// TestOrderedValues: a Map keeps its entries' order and a Quoted string
// its double quotes, which map[string]any and string do not.
func TestOrderedValues(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"Map keeps its order", Map{{"zeta", 1}, {"alpha", 2}}, "zeta: 1\nalpha: 2\n"},
		{"nested Map", Map{{"kv", Map{{"role", "kv_producer"}, {"port", 25201}}}}, "kv:\n  role: kv_producer\n  port: 25201\n"},
		{"Quoted", Quoted("kv_producer"), "\"kv_producer\"\n"},
		{"Quoted in a list", []any{Quoted("0"), "a"}, "[\"0\", a]\n"},
		{"Map inside a map", map[string]any{"b": Map{{"z", nil}, {"x", true}}, "a": Quoted("x")}, "a: \"x\"\nb:\n  z: null\n  x: true\n"},
		{"empty Map", Map{}, "{}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := valueYAML(t, tc.v); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			if err := CheckValue(tc.v); err != nil {
				t.Errorf("CheckValue = %v for a value valueNode writes", err)
			}
		})
	}
}

// valueYAML writes v with valueNode, alone.
func valueYAML(t *testing.T, v any) string {
	t.Helper()
	n, err := valueNode(v)
	if err != nil {
		t.Fatal(err)
	}
	return renderNode(t, n)
}

func TestCheckValue(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    any
		want string
	}{
		{"NaN in a Map names its key", Map{{"a", Map{{"b", math.NaN()}}}}, "a: b: NaN is not a finite number"},
		{"unsupported type in a Map", Map{{"port", uint16(1)}}, "port: values of type uint16 cannot be written"},
		{"a KV alone is not a value", KV{"a", 1}, "values of type stageconfig.KV cannot be written"},
		{"infinity", math.Inf(-1), "-Inf is not a finite number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckValue(tc.v)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("CheckValue = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
