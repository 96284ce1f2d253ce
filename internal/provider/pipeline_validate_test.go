package provider

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// What validation reports beside a schema error is exactly the engine's
// errors on the other attributes: nothing on what the schema faulted (the
// engine sees it unset), nothing that follows from leaving it out, nothing
// for a valid or not yet known configuration, which are planned at plan.
func TestValidateWithEngine(t *testing.T) {
	t.Run("data source", func(t *testing.T) {
		testValidateWithEngine(t, tfsdk.Config{Schema: pdPipelineDataSourceSchema()}, pdPipelineDataSourceType(), dataSourceValidationSchema())
	})
	t.Run("resource", func(t *testing.T) {
		testValidateWithEngine(t, tfsdk.Config{Schema: pdPipelineResourceSchema()}, pdPipelineResourceType(), resourceValidationSchema())
	})
}

// testValidateWithEngine runs the cases on one entity's schema (empty
// carries it, typ is its type).
func testValidateWithEngine(t *testing.T, empty tfsdk.Config, typ tftypes.Type, vs validationSchema) {
	ctx := context.Background()
	num := func(f float64) tftypes.Value { return tftypes.NewValue(tftypes.Number, big.NewFloat(f)) }
	role := func(set map[string]tftypes.Value) tftypes.Value {
		return objectValue(t, attributeType(t, typ, "decode"), set)
	}
	config := func(set map[string]tftypes.Value) tftypes.Value {
		set["model"] = tfStr(seedModel)
		return objectValue(t, typ, set)
	}
	cases := []struct {
		name   string
		config tftypes.Value
		want   []string // path: summary-or-code fragments, in order
	}{
		{"valid", config(map[string]tftypes.Value{"decode": role(map[string]tftypes.Value{"tensor_parallel_size": num(1)})}),
			nil},
		{"engine error alone: left to the plan", config(map[string]tftypes.Value{"decode": role(map[string]tftypes.Value{"tensor_parallel_size": num(2)})}),
			nil},
		{"schema error beside an engine error", config(map[string]tftypes.Value{"gpus": num(4.5), "decode": role(map[string]tftypes.Value{"tensor_parallel_size": num(2)})}),
			// The framework's order: the engine's (ValidateConfig), then the schema's.
			[]string{"decode.tensor_parallel_size: Prefill and decode tensor_parallel_size", "gpus: Invalid Attribute Value"}},
		{"the faulted attribute is not judged again", config(map[string]tftypes.Value{"gpus": num(0.5)}),
			[]string{"gpus: Invalid Attribute Value"}},
		{"an unknown input: left to the plan", config(map[string]tftypes.Value{"gpus": num(4.5), "decode": role(map[string]tftypes.Value{"tensor_parallel_size": tftypes.NewValue(tftypes.Number, tftypes.UnknownValue)})}),
			[]string{"gpus: Invalid Attribute Value"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			config := empty
			config.Raw = c.config
			diags := validateWithEngine(ctx, config, vs)
			var got []string
			for _, d := range diags {
				got = append(got, diagnosticPath(d)+": "+d.Summary())
			}
			if len(got) != len(c.want) {
				t.Fatalf("got %d diagnostics, want %d:\n%s", len(got), len(c.want), strings.Join(got, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], c.want[i]) {
					t.Errorf("diagnostic %d = %q, want %q...", i, got[i], c.want[i])
				}
			}
		})
	}
}

func diagnosticPath(d diag.Diagnostic) string {
	if wp, ok := d.(diag.DiagnosticWithPath); ok {
		return wp.Path().String()
	}
	return ""
}
