package provider

import (
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// inputsKnown reports whether every input attribute of a configuration or
// plan is wholly known, down to the leaves of dynamic values. Outputs
// (unknown in a plan by construction) and the names in ignore are skipped.
// One unknown anywhere may change every output (a port allocation, the
// hash, ...), so the caller then leaves all outputs unknown.
func inputsKnown(raw tftypes.Value, ignore ...string) bool {
	if !raw.IsKnown() {
		return false
	}
	if raw.IsNull() {
		return true
	}
	var attrs map[string]tftypes.Value
	if err := raw.As(&attrs); err != nil {
		return false
	}
	skip := map[string]bool{}
	for _, n := range pipelineOutputNames {
		skip[n] = true
	}
	for _, n := range ignore {
		skip[n] = true
	}
	for name, v := range attrs {
		if !skip[name] && !v.IsFullyKnown() {
			return false
		}
	}
	return true
}

// attributeOf is a top-level attribute of an object value; the zero Value
// when v is null, unknown or not an object.
func attributeOf(v tftypes.Value, name string) tftypes.Value {
	var attrs map[string]tftypes.Value
	if v.IsNull() || !v.IsKnown() || v.As(&attrs) != nil {
		return tftypes.Value{}
	}
	return attrs[name]
}
