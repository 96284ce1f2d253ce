package provider

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// Validators the framework-validators module has no ready-made form of. Like
// those, they skip null and unknown values: an unknown is checked again once
// it is known, at apply time.

// isObject requires a dynamic value to be an object or a map. engine_args,
// extra_config and stage_overrides are free-form inside, but their top level
// is always a set of keys.
func isObject() validator.Dynamic { return objectValidator{} }

type objectValidator struct{}

func (objectValidator) Description(context.Context) string {
	return "value must be an object, such as { key = value }"
}

func (v objectValidator) MarkdownDescription(ctx context.Context) string {
	return "value must be an object, such as `{ key = value }`"
}

func (v objectValidator) ValidateDynamic(ctx context.Context, req validator.DynamicRequest, resp *validator.DynamicResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() ||
		req.ConfigValue.IsUnderlyingValueNull() || req.ConfigValue.IsUnderlyingValueUnknown() {
		return
	}
	var got string
	switch req.ConfigValue.UnderlyingValue().(type) {
	case basetypes.ObjectValue, basetypes.MapValue:
		return
	case basetypes.StringValue:
		got = "a string"
	case basetypes.NumberValue:
		got = "a number"
	case basetypes.BoolValue:
		got = "a bool"
	default:
		got = "a list"
	}
	resp.Diagnostics.AddAttributeError(req.Path, "Invalid Attribute Value",
		fmt.Sprintf("Attribute %s must be an object, such as { key = value }; got %s.", req.Path, got))
}

// fractionValidator accepts 0 < x ≤ 1, the range of gpu_memory_utilization
// (float64validator.Between includes 0, which vLLM rejects). The attribute
// is a number, not a float64: Terraform's numbers have arbitrary precision,
// and the framework's float64 conversion of one such as 1e-400 fails with
// an internal error before any validator runs. vLLM reads the value as a
// 64-bit float, so the check is made on that reading: 1e-400 reads as 0.
func fractionValidator() validator.Number { return fraction{} }

type fraction struct{}

func (fraction) Description(context.Context) string {
	return "value must be greater than 0 and at most 1"
}

func (f fraction) MarkdownDescription(ctx context.Context) string { return f.Description(ctx) }

func (f fraction) ValidateNumber(ctx context.Context, req validator.NumberRequest, resp *validator.NumberResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() || req.ConfigValue.ValueBigFloat() == nil {
		return
	}
	x := req.ConfigValue.ValueBigFloat()
	if f64, _ := x.Float64(); f64 <= 0 || f64 > 1 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Attribute Value",
			fmt.Sprintf("Attribute %s %s, got: %s (for 90%% of the GPU write 0.9).", req.Path, f.Description(ctx), numberText(x)))
	}
}

// Whole numbers. Every numeric input is a whole number, but the schema
// declares them as numbers (Terraform's one numeric type) and checks
// wholeness here: with an Int64 attribute, a fraction such as `gpus =
// var.gpus / 2` fails inside the framework's conversion, before any
// validator runs, with "This is always an error in the provider" and a
// garbled value. Checked here, the error names the attribute and the value.
// The upper bound keeps every accepted value within a Go int everywhere.

// maxWhole is the largest value a numeric input may take when its meaning
// gives it no smaller bound; stage_overrides holds the engine to the same.
const maxWhole = pipeline.MaxWhole

// wholeNumber accepts whole numbers from lo to hi, both included.
func wholeNumber(lo, hi int64) wholeNumberValidator {
	return wholeNumberValidator{min: lo, max: hi}
}

type wholeNumberValidator struct{ min, max int64 }

var (
	_ validator.Number = wholeNumberValidator{}
	_ validator.List   = wholeNumberValidator{}
	_ validator.Set    = wholeNumberValidator{}
)

func (v wholeNumberValidator) Description(context.Context) string {
	if v.max == maxWhole {
		return fmt.Sprintf("value must be a whole number of at least %d", v.min)
	}
	return fmt.Sprintf("value must be a whole number between %d and %d", v.min, v.max)
}

func (v wholeNumberValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

// problem says what is wrong with x, or returns "".
func (v wholeNumberValidator) problem(x *big.Float) string {
	if x == nil {
		return ""
	}
	if !x.IsInt() {
		return fmt.Sprintf("must be a whole number, got: %s", numberText(x))
	}
	i, acc := x.Int64()
	// Beyond the int64 range Int64 rounds toward it: Above means x is
	// smaller than the result, Below that it is larger.
	tooSmall := i < v.min || acc == big.Above
	tooBig := i > v.max || acc == big.Below
	switch {
	case tooSmall && v.max == maxWhole:
		return fmt.Sprintf("value must be at least %d, got: %s", v.min, numberText(x))
	case tooSmall || tooBig:
		return fmt.Sprintf("value must be between %d and %d, got: %s", v.min, v.max, numberText(x))
	}
	return ""
}

// numberText writes a number as a user wrote it: 8091.5, 70000, 1e+30.
// Beyond any float64 it writes an approximation instead (7e+4666666):
// the exact decimal form of such a number has as many digits as its
// exponent, and a message must not wait on printing them all.
func numberText(x *big.Float) string {
	if i, acc := x.Int64(); acc == big.Exact {
		return strconv.FormatInt(i, 10)
	}
	mant := new(big.Float)
	if exp := x.MantExp(mant); exp < -1100 || exp > 1100 {
		m, _ := mant.Float64() // in [0.5, 1), by magnitude
		l := math.Log10(math.Abs(m)) + float64(exp)*math.Log10(2)
		d := math.Floor(l)
		lead := math.Round(math.Pow(10, l-d)*1000) / 1000
		if lead >= 10 {
			lead, d = lead/10, d+1
		}
		return fmt.Sprintf("%se%+d", strconv.FormatFloat(math.Copysign(lead, m), 'g', 4, 64), int64(d))
	}
	return x.Text('g', -1)
}

func (v wholeNumberValidator) ValidateNumber(_ context.Context, req validator.NumberRequest, resp *validator.NumberResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if msg := v.problem(req.ConfigValue.ValueBigFloat()); msg != "" {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Attribute Value", fmt.Sprintf("Attribute %s %s", req.Path, msg))
	}
}

// ValidateList checks each element and names it by index.
func (v wholeNumberValidator) ValidateList(_ context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	for i, e := range req.ConfigValue.Elements() {
		if n, ok := e.(basetypes.NumberValue); ok && !n.IsNull() && !n.IsUnknown() {
			if msg := v.problem(n.ValueBigFloat()); msg != "" {
				p := req.Path.AtListIndex(i)
				resp.Diagnostics.AddAttributeError(p, "Invalid Attribute Value", fmt.Sprintf("Attribute %s %s", p, msg))
			}
		}
	}
}

// ValidateSet checks each element. A set element has no index, so the
// message names the set and the value.
func (v wholeNumberValidator) ValidateSet(_ context.Context, req validator.SetRequest, resp *validator.SetResponse) {
	for _, e := range req.ConfigValue.Elements() {
		if n, ok := e.(basetypes.NumberValue); ok && !n.IsNull() && !n.IsUnknown() {
			if msg := v.problem(n.ValueBigFloat()); msg != "" {
				resp.Diagnostics.AddAttributeError(req.Path, "Invalid Attribute Value", fmt.Sprintf("Attribute %s: each element %s", req.Path, msg))
			}
		}
	}
}

// uniqueDevices rejects a device list that names a GPU twice, saying which
// one. (listvalidator.UniqueValues says "This attribute contains duplicate
// values", and Terraform shows a nested attribute's block, not its line, so
// the user would not learn which attribute.)
func uniqueDevices() validator.List { return uniqueDevicesValidator{} }

type uniqueDevicesValidator struct{}

func (uniqueDevicesValidator) Description(context.Context) string {
	return "each device must be listed once"
}

func (v uniqueDevicesValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (uniqueDevicesValidator) ValidateList(_ context.Context, req validator.ListRequest, resp *validator.ListResponse) {
	seen := map[string]bool{}
	for i, e := range req.ConfigValue.Elements() {
		if e.IsNull() || e.IsUnknown() {
			continue
		}
		key := e.String()
		if seen[key] {
			p := req.Path.AtListIndex(i)
			resp.Diagnostics.AddAttributeError(p, "Duplicate Device",
				fmt.Sprintf("Attribute %s lists GPU %s a second time; list each GPU once.", req.Path, key))
		}
		seen[key] = true
	}
}

// portRangeOrder requires port_range.first <= port_range.last.
func portRangeOrder() validator.Object { return portRangeOrderValidator{} }

type portRangeOrderValidator struct{}

func (portRangeOrderValidator) Description(context.Context) string {
	return "first must not be above last"
}

func (v portRangeOrderValidator) MarkdownDescription(ctx context.Context) string {
	return v.Description(ctx)
}

func (portRangeOrderValidator) ValidateObject(_ context.Context, req validator.ObjectRequest, resp *validator.ObjectResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	attrs := req.ConfigValue.Attributes()
	first, ok1 := attrs["first"].(basetypes.NumberValue)
	last, ok2 := attrs["last"].(basetypes.NumberValue)
	if !ok1 || !ok2 || first.IsNull() || first.IsUnknown() || last.IsNull() || last.IsUnknown() {
		return
	}
	if first.ValueBigFloat().Cmp(last.ValueBigFloat()) > 0 {
		p := req.Path.AtName("last")
		resp.Diagnostics.AddAttributeError(p, "Invalid Attribute Value",
			fmt.Sprintf("Attribute %s (%s) is below %s (%s), which leaves no port to allocate; swap them or raise last.",
				p, numberText(last.ValueBigFloat()), req.Path.AtName("first"), numberText(first.ValueBigFloat())))
	}
}
