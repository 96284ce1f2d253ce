package provider

import (
	"context"
	"errors"
	"math"
	"math/big"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestGoValue(t *testing.T) {
	ctx := context.Background()
	num := func(s string) types.Number {
		f, _, err := big.ParseFloat(s, 10, 512, big.ToNearestEven)
		if err != nil {
			t.Fatal(err)
		}
		return types.NumberValue(f)
	}
	obj := func(attrs map[string]attr.Value) types.Object {
		ts := map[string]attr.Type{}
		for k, v := range attrs {
			ts[k] = v.Type(ctx)
		}
		return types.ObjectValueMust(ts, attrs)
	}

	cases := []struct {
		name string
		in   attr.Value
		want any
	}{
		{"nil", nil, nil},
		{"null dynamic", types.DynamicNull(), nil},
		{"dynamic holding null string", types.DynamicValue(types.StringNull()), nil},
		{"string", types.DynamicValue(types.StringValue("mp")), "mp"},
		{"bool", types.DynamicValue(types.BoolValue(true)), true},
		{"integral number is int64", types.DynamicValue(num("16")), int64(16)},
		{"negative integral number", types.DynamicValue(num("-3")), int64(-3)},
		{"fraction is float64", types.DynamicValue(num("0.9")), 0.9},
		{"integer too big for int64 is float64", types.DynamicValue(num("1e30")), 1e30},
		{"int64 attribute", types.Int64Value(7), int64(7)},
		{"float64 attribute", types.Float64Value(0.5), 0.5},
		{"tuple", types.DynamicValue(types.TupleValueMust(
			[]attr.Type{types.NumberType, types.StringType},
			[]attr.Value{num("1"), types.StringValue("a")})), []any{int64(1), "a"}},
		{"list", types.ListValueMust(types.Int64Type, []attr.Value{types.Int64Value(0), types.Int64Value(2)}), []any{int64(0), int64(2)}},
		{"empty list", types.ListValueMust(types.Int64Type, nil), []any{}},
		{"set", types.SetValueMust(types.StringType, []attr.Value{types.StringValue("x")}), []any{"x"}},
		{"map", types.MapValueMust(types.StringType, map[string]attr.Value{"k": types.StringValue("v")}), map[string]any{"k": "v"}},
		{"nested object", types.DynamicValue(obj(map[string]attr.Value{
			"max_num_seqs":  num("8"),
			"enforce_eager": types.BoolValue(false),
			"nested":        obj(map[string]attr.Value{"port": num("25201"), "nothing": types.StringNull()}),
		})), map[string]any{
			"max_num_seqs":  int64(8),
			"enforce_eager": false,
			"nested":        map[string]any{"port": int64(25201), "nothing": nil},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := goValue(ctx, path.Root("x"), c.in)
			if err != nil {
				t.Fatalf("goValue: %v", err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("goValue = %#v (%T), want %#v (%T)", got, got, c.want, c.want)
			}
		})
	}
}

// An unknown anywhere, even deep inside an object, is reported with its path.
func TestGoValue_Unknown(t *testing.T) {
	ctx := context.Background()
	inner := types.ObjectValueMust(map[string]attr.Type{"port": types.NumberType},
		map[string]attr.Value{"port": types.NumberUnknown()})
	outer := types.DynamicValue(types.TupleValueMust([]attr.Type{inner.Type(ctx)}, []attr.Value{inner}))

	for name, v := range map[string]attr.Value{
		"unknown dynamic":    types.DynamicUnknown(),
		"dynamic of unknown": types.DynamicValue(types.StringUnknown()),
		"deep unknown":       outer,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := goValue(ctx, path.Root("engine_args"), v)
			var ue unknownValueError
			if !errors.As(err, &ue) {
				t.Fatalf("err = %v, want unknownValueError", err)
			}
		})
	}
	_, err := goValue(ctx, path.Root("engine_args"), outer)
	if want := "value at engine_args[0].port is not known yet"; err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

func TestGoObject(t *testing.T) {
	ctx := context.Background()
	got, err := goObject(ctx, path.Root("e"), types.DynamicNull())
	if err != nil || got != nil {
		t.Fatalf("null: got %v, %v; want nil, nil", got, err)
	}
	m := types.MapValueMust(types.StringType, map[string]attr.Value{"a": types.StringValue("b")})
	got, err = goObject(ctx, path.Root("e"), types.DynamicValue(m))
	if err != nil || !reflect.DeepEqual(got, map[string]any{"a": "b"}) {
		t.Fatalf("map: got %v, %v", got, err)
	}
	_, err = goObject(ctx, path.Root("prefill").AtName("engine_args"), types.DynamicValue(types.StringValue("x")))
	if want := "prefill.engine_args must be an object such as { key = value }, not a string"; err == nil || err.Error() != want {
		t.Fatalf("string: err = %v, want %q", err, want)
	}
}

// FuzzGoNumber: any number Terraform can hold converts to an int64 equal to
// it, a finite float64 that is zero only when it is, or an error at its
// path; never an infinity or a silent zero. Numbers are built from a
// mantissa and a binary exponent, so that huge ones cost the harness
// nothing to make: parsing "1e999999999" from text would dominate the run.
func FuzzGoNumber(f *testing.F) {
	f.Add(int64(0), int32(0))
	f.Add(int64(16), int32(0))
	f.Add(int64(-3), int32(-1))
	f.Add(int64(9), int32(-4))
	f.Add(int64(1), int32(-1330))
	f.Add(int64(1), int32(1330))
	f.Add(int64(-1), int32(1<<30))
	f.Add(int64(1), int32(63))
	f.Add(int64(1), int32(-1074))
	f.Add(int64(7), int32(15503385))
	f.Fuzz(func(t *testing.T, mant int64, exp int32) {
		x := new(big.Float).SetPrec(512).SetMantExp(new(big.Float).SetInt64(mant), int(exp))
		got, err := goNumber(path.Root("n"), x)
		if err != nil {
			var nre numberRangeError
			if !errors.As(err, &nre) || !nre.Path.Equal(path.Root("n")) || nre.Text == "" {
				t.Fatalf("error %v, want a range error at n", err)
			}
			// Refused only when a float64 cannot hold it.
			if f64, _ := x.Float64(); !math.IsInf(f64, 0) && (f64 != 0 || x.Sign() == 0) {
				t.Fatalf("%v was refused, but reads as the float64 %v", x, f64)
			}
			return
		}
		switch v := got.(type) {
		case int64:
			if new(big.Float).SetInt64(v).Cmp(x) != 0 {
				t.Fatalf("%v became %d", x, v)
			}
		case float64:
			if math.IsInf(v, 0) || math.IsNaN(v) || (v == 0) != (x.Sign() == 0) {
				t.Fatalf("%v became %v", x, v)
			}
		default:
			t.Fatalf("%v became %T", x, got)
		}
	})
}

// Numbers far beyond a float64 are described near enough, to four digits,
// instead of exactly (7e4666666 has millions of digits); within a float64's
// range they are written as given.
func TestNumberText_Huge(t *testing.T) {
	for in, want := range map[string]string{
		"7e4666666":       "7e+4666666",
		"1.23456789e5000": "1.235e+5000",
		"1.23456789e300":  "1.23456789e+300",
		"-2.5e-9000":      "-2.5e-9000",
		"1e400":           "1e+400",
		"8091.5":          "8091.5",
		"70000":           "70000",
	} {
		x, _ := new(big.Float).SetPrec(512).SetString(in)
		if got := numberText(x); got != want {
			t.Errorf("numberText(%s) = %s, want %s", in, got, want)
		}
	}
}

// Every number out of range is its own error at its own path, however deep
// the joins of the levels above it nest (the plan reports each one).
func TestAddValueErrors_EachNumberAtItsPath(t *testing.T) {
	ctx := context.Background()
	huge, _, err := big.ParseFloat("1e400", 10, 512, big.ToNearestEven)
	if err != nil {
		t.Fatal(err)
	}
	obj := func(attrs map[string]attr.Value) types.Object {
		ts := map[string]attr.Type{}
		for k, v := range attrs {
			ts[k] = v.Type(ctx)
		}
		return types.ObjectValueMust(ts, attrs)
	}
	over := types.NumberValue(huge)
	under := types.NumberValue(new(big.Float).Neg(huge))
	engineArgs := types.DynamicValue(obj(map[string]attr.Value{
		"x": obj(map[string]attr.Value{"a": over, "b": under, "c": obj(map[string]attr.Value{"d": over})}),
		"y": types.TupleValueMust([]attr.Type{types.NumberType}, []attr.Value{over}),
		"z": types.NumberValue(big.NewFloat(1)),
	}))
	p := path.Root("prefill").AtName("engine_args")
	_, err = goObject(ctx, p, engineArgs)
	if err == nil {
		t.Fatal("no error for numbers out of range")
	}
	var diags diag.Diagnostics
	addValueErrors(&diags, p, "Invalid engine_args", err)
	var got []string
	for _, d := range diags {
		wp, _ := d.(diag.DiagnosticWithPath)
		got = append(got, wp.Path().String()+": "+d.Summary())
	}
	want := []string{
		"prefill.engine_args.x.a: Number out of range",
		"prefill.engine_args.x.b: Number out of range",
		"prefill.engine_args.x.c.d: Number out of range",
		"prefill.engine_args.y[0]: Number out of range",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diagnostics\n %q\nwant\n %q", got, want)
	}
}
