package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
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
// (float64validator.Between includes 0, which vLLM rejects).
func fractionValidator() validator.Float64 { return fraction{} }

type fraction struct{}

func (fraction) Description(context.Context) string {
	return "value must be greater than 0 and at most 1"
}

func (f fraction) MarkdownDescription(ctx context.Context) string { return f.Description(ctx) }

func (f fraction) ValidateFloat64(ctx context.Context, req validator.Float64Request, resp *validator.Float64Response) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if x := req.ConfigValue.ValueFloat64(); x <= 0 || x > 1 {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Attribute Value",
			fmt.Sprintf("Attribute %s %s, got: %g (for 90%% of the GPU write 0.9).", req.Path, f.Description(ctx), x))
	}
}
