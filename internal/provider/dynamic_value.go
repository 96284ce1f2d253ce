package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
)

// The free-form inputs (engine_args, connector.extra_config, stage_overrides)
// are Terraform dynamic values. The engine takes plain Go values instead, so
// that it never imports the framework: nil, bool, string, int64, float64,
// []any and map[string]any. This file is the only place that knows both.

// unknownValueError reports an unknown value where a known one is needed.
// Callers check that the whole configuration is known before converting, so
// meeting one is a bug in the caller, not a user mistake.
type unknownValueError struct{ Path path.Path }

func (e unknownValueError) Error() string {
	return fmt.Sprintf("value at %s is not known yet", e.Path)
}

// goValue converts a framework value (typically a types.Dynamic) to a plain Go
// value. p is the attribute path of v, used only in errors.
func goValue(ctx context.Context, p path.Path, v attr.Value) (any, error) {
	if v == nil || v.IsNull() {
		return nil, nil
	}
	if v.IsUnknown() {
		return nil, unknownValueError{Path: p}
	}
	switch t := v.(type) {
	case basetypes.DynamicValue:
		if t.IsUnderlyingValueNull() {
			return nil, nil
		}
		if t.IsUnderlyingValueUnknown() {
			return nil, unknownValueError{Path: p}
		}
		return goValue(ctx, p, t.UnderlyingValue())
	case basetypes.StringValue:
		return t.ValueString(), nil
	case basetypes.BoolValue:
		return t.ValueBool(), nil
	case basetypes.NumberValue:
		return goNumber(p, t.ValueBigFloat())
	case basetypes.Int64Value:
		return t.ValueInt64(), nil
	case basetypes.Int32Value:
		return int64(t.ValueInt32()), nil
	case basetypes.Float64Value:
		return t.ValueFloat64(), nil
	case basetypes.Float32Value:
		return float64(t.ValueFloat32()), nil
	case basetypes.ListValue:
		return goSlice(ctx, p, t.Elements())
	case basetypes.SetValue:
		return goSlice(ctx, p, t.Elements())
	case basetypes.TupleValue:
		return goSlice(ctx, p, t.Elements())
	case basetypes.MapValue:
		return goMap(ctx, p, t.Elements(), path.Path.AtMapKey)
	case basetypes.ObjectValue:
		return goMap(ctx, p, t.Attributes(), path.Path.AtName)
	}
	// Dynamic values hold only the framework's base types; anything else is
	// a caller passing a typed attribute this function was not built for.
	return nil, fmt.Errorf("value at %s has unsupported type %T", p, v)
}

// goNumber keeps integers integers: engine args such as max_num_seqs must
// render as 16, not 16.0. Integral numbers that fit an int64 become int64;
// everything else becomes the nearest float64, which is how vllm-omni reads
// a number. Terraform's numbers are arbitrary precision: one a float64
// cannot hold (1e400, or 1e-400, which would read as 0) is an error at its
// path rather than a value that changed on the way.
func goNumber(p path.Path, f *big.Float) (any, error) {
	if f == nil {
		return nil, nil
	}
	if f.IsInt() {
		if i, acc := f.Int64(); acc == big.Exact {
			return i, nil
		}
	}
	x, _ := f.Float64()
	switch {
	case math.IsInf(x, 0):
		return nil, numberRangeError{Path: p, Text: numberText(f), Detail: "is too large for a 64-bit float, which is how vllm-omni reads numbers; write one of at most 1.7e308 in magnitude"}
	case x == 0 && f.Sign() != 0:
		return nil, numberRangeError{Path: p, Text: numberText(f), Detail: "is too small for a 64-bit float and would be read as 0; write a number of at least 2.3e-308 in magnitude (or 0 where 0 is meant)"}
	}
	return x, nil
}

// numberRangeError reports a number a 64-bit float cannot hold.
type numberRangeError struct {
	Path   path.Path
	Text   string
	Detail string
}

func (e numberRangeError) Error() string {
	return fmt.Sprintf("Attribute %s: the number %s %s.", e.Path, e.Text, e.Detail)
}

// goSlice and goMap convert every element and join the errors of all of
// them, map keys in sorted order, so that one plan reports every bad value
// in the same order each time.
func goSlice(ctx context.Context, p path.Path, elems []attr.Value) ([]any, error) {
	out := make([]any, len(elems))
	var errs []error
	for i, e := range elems {
		v, err := goValue(ctx, p.AtListIndex(i), e)
		if err != nil {
			errs = append(errs, err)
		}
		out[i] = v
	}
	return out, errors.Join(errs...)
}

func goMap(ctx context.Context, p path.Path, elems map[string]attr.Value, step func(path.Path, string) path.Path) (map[string]any, error) {
	out := make(map[string]any, len(elems))
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(elems)) {
		v, err := goValue(ctx, step(p, k), elems[k])
		if err != nil {
			errs = append(errs, err)
		}
		out[k] = v
	}
	return out, errors.Join(errs...)
}

// addValueErrors reports what goValue or goObject returned: a number out
// of range at its own path, anything else at p.
func addValueErrors(diags *diag.Diagnostics, p path.Path, summary string, err error) {
	for _, e := range leafErrors(err) {
		if nre, ok := e.(numberRangeError); ok {
			diags.AddAttributeError(nre.Path, "Number out of range", nre.Error())
			continue
		}
		diags.AddAttributeError(p, summary, e.Error())
	}
}

// leafErrors flattens the joins goSlice and goMap nest, one per level of
// the value, into the errors they hold, in order.
func leafErrors(err error) []error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range joined.Unwrap() {
		out = append(out, leafErrors(e)...)
	}
	return out
}

// goObject converts a dynamic value that must be an object or a map (or
// null) to map[string]any. The schema's isObject validator already rejects
// other shapes at validate time; this is the backstop at plan time.
func goObject(ctx context.Context, p path.Path, v attr.Value) (map[string]any, error) {
	g, err := goValue(ctx, p, v)
	if err != nil || g == nil {
		return nil, err
	}
	m, ok := g.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an object such as { key = value }, not a %s", p, goTypeName(g))
	}
	return m, nil
}

// goTypeName names a plain Go value's kind the way a Terraform user thinks of it.
func goTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "bool"
	case string:
		return "string"
	case int64, float64:
		return "number"
	case []any:
		return "list"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
