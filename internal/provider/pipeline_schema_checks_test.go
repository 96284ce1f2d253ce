package provider

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// invalidConfigs are configurations of the type typ (the data source's or
// the resource's) that trip every validator in the schema, one or a few at
// a time, and a few that trip none.
func invalidConfigs(t testing.TB, typ tftypes.Type) map[string]tftypes.Value {
	t.Helper()
	nested := func(attribute string, set map[string]tftypes.Value) tftypes.Value {
		return objectValue(t, attributeType(t, typ, attribute), set)
	}
	num := func(f float64) tftypes.Value { return tftypes.NewValue(tftypes.Number, big.NewFloat(f)) }
	numbers := func(fs ...float64) []tftypes.Value {
		out := make([]tftypes.Value, len(fs))
		for i, f := range fs {
			out[i] = num(f)
		}
		return out
	}
	list := func(fs ...float64) tftypes.Value {
		return tftypes.NewValue(tftypes.List{ElementType: tftypes.Number}, numbers(fs...))
	}
	set := func(fs ...float64) tftypes.Value {
		return tftypes.NewValue(tftypes.Set{ElementType: tftypes.Number}, numbers(fs...))
	}
	unknown := func(t tftypes.Type) tftypes.Value { return tftypes.NewValue(t, tftypes.UnknownValue) }
	aList := tftypes.NewValue(tftypes.List{ElementType: tftypes.String}, []tftypes.Value{tfStr("talker")})
	seed := func(extra map[string]tftypes.Value) tftypes.Value { return objectValue(t, typ, seedWith(extra)) }
	return map[string]tftypes.Value{
		"seed":            seed(nil),
		"nothing set":     objectValue(t, typ, nil),
		"empty strings":   seed(map[string]tftypes.Value{"model": tfStr(""), "config_path": tfStr(""), "base_config": tfStr("")}),
		"preset and base": seed(map[string]tftypes.Value{"preset": tfStr("qwen3_omni_moe"), "base_config": tfStr("stage_args: []\n")}),
		"bad enums":       seed(map[string]tftypes.Value{"format": tfStr("yaml"), "pipeline": tfStr("a b")}),
		"bad numbers": seed(map[string]tftypes.Value{
			"split_stage": num(1.5), "gpus": num(0), "api_port": num(70000), "reserved_ports": set(0, 25201, 70000),
		}),
		"not objects": seed(map[string]tftypes.Value{"stage_overrides": aList}),
		"connector": seed(map[string]tftypes.Value{"connector": nested("connector", map[string]tftypes.Value{
			"name": tfStr(""), "protocol": tfStr("udp"), "device_name": tfStr(""), "extra_config": aList,
		})}),
		"port range reversed": seed(map[string]tftypes.Value{"port_range": nested("port_range", map[string]tftypes.Value{
			"first": num(30100), "last": num(30000),
		})}),
		"port range out of bounds": seed(map[string]tftypes.Value{"port_range": nested("port_range", map[string]tftypes.Value{
			"first": num(0), "last": num(70000),
		})}),
		"roles": seed(map[string]tftypes.Value{
			"prefill": nested("prefill", map[string]tftypes.Value{
				"devices": list(1, 1), "tensor_parallel_size": num(0), "max_num_seqs": num(2.5),
			}),
			"decode": nested("decode", map[string]tftypes.Value{
				"devices": list(), "gpu_memory_utilization": num(1.5), "bootstrap_port": num(0),
				"host": tfStr(""), "engine_args": aList,
			}),
		}),
		"negative device": seed(map[string]tftypes.Value{"decode": nested("decode", map[string]tftypes.Value{"devices": list(-1)})}),
		"unknowns": seed(map[string]tftypes.Value{
			"model":          unknown(tftypes.String),
			"reserved_ports": unknown(tftypes.Set{ElementType: tftypes.Number}),
			"decode":         nested("decode", map[string]tftypes.Value{"devices": unknown(tftypes.List{ElementType: tftypes.Number})}),
			"port_range":     unknown(attributeType(t, typ, "port_range")),
		}),
		"unknown dynamic": seed(map[string]tftypes.Value{"stage_overrides": unknown(tftypes.DynamicPseudoType)}),
		"outputs set":     seed(map[string]tftypes.Value{"id": tfStr("x"), "gpu_count": num(3)}),
	}
}

// diagnosticStrings renders diagnostics for comparison, sorted: the
// framework reports them in map order.
func diagnosticStrings(ds []*tfprotov6.Diagnostic) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = fmt.Sprintf("%s|%s|%s|%v", d.Severity, d.Summary, d.Detail, d.Attribute)
	}
	sort.Strings(out)
	return out
}

// frameworkDiagnosticStrings renders framework diagnostics as
// diagnosticStrings renders the protocol's.
func frameworkDiagnosticStrings(t *testing.T, diags diag.Diagnostics) []string {
	t.Helper()
	out := make([]*tfprotov6.Diagnostic, len(diags))
	for i, d := range diags {
		severity := tfprotov6.DiagnosticSeverityError
		if d.Severity() == diag.SeverityWarning {
			severity = tfprotov6.DiagnosticSeverityWarning
		}
		out[i] = &tfprotov6.Diagnostic{Severity: severity, Summary: d.Summary(), Detail: d.Detail()}
		if wp, ok := d.(diag.DiagnosticWithPath); ok {
			var steps []tftypes.AttributePathStep
			for _, step := range wp.Path().Steps() {
				switch s := step.(type) {
				case path.PathStepAttributeName:
					steps = append(steps, tftypes.AttributeName(string(s)))
				case path.PathStepElementKeyInt:
					steps = append(steps, tftypes.ElementKeyInt(int64(s)))
				case path.PathStepElementKeyString:
					steps = append(steps, tftypes.ElementKeyString(string(s)))
				case path.PathStepElementKeyValue:
					v, err := s.ToTerraformValue(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					steps = append(steps, tftypes.ElementKeyValue(v))
				default:
					t.Fatalf("unknown path step %s", step)
				}
			}
			out[i].Attribute = tftypes.NewAttributePathWithSteps(steps)
		}
	}
	return diagnosticStrings(out)
}

// TestSchemaChecks_MatchFramework: validateConfig finds what the
// framework's own schema checks find, with the same diagnostics at the
// same paths, for every validator in both schemas, so the entities'
// ValidateConfig knows which attributes the framework faults: the
// framework's whole answer is validateConfig's and the engine's errors
// beside them.
func TestSchemaChecks_MatchFramework(t *testing.T) {
	ctx := context.Background()
	framework := providerserver.NewProtocol6(New("test")())()
	if _, err := framework.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{}); err != nil {
		t.Fatal(err)
	}
	for _, entity := range []struct {
		name     string
		typ      tftypes.Type
		empty    tfsdk.Config
		vs       validationSchema
		validate func(*tfprotov6.DynamicValue) []*tfprotov6.Diagnostic
	}{
		{"data source", pdPipelineDataSourceType(), tfsdk.Config{Schema: pdPipelineDataSourceSchema()}, dataSourceValidationSchema(),
			func(c *tfprotov6.DynamicValue) []*tfprotov6.Diagnostic {
				resp, err := framework.ValidateDataResourceConfig(ctx, &tfprotov6.ValidateDataResourceConfigRequest{TypeName: pdPipelineTypeName, Config: c})
				if err != nil {
					t.Fatal(err)
				}
				return resp.Diagnostics
			}},
		{"resource", pdPipelineResourceType(), tfsdk.Config{Schema: pdPipelineResourceSchema()}, resourceValidationSchema(),
			func(c *tfprotov6.DynamicValue) []*tfprotov6.Diagnostic {
				resp, err := framework.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: pdPipelineTypeName, Config: c})
				if err != nil {
					t.Fatal(err)
				}
				return resp.Diagnostics
			}},
	} {
		configs := invalidConfigs(t, entity.typ)
		if entity.name == "resource" {
			configs["triggers"] = objectValue(t, entity.typ, map[string]tftypes.Value{
				"model":    tfStr(seedModel),
				"triggers": tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{"rev": tfStr("1")}),
			})
		}
		reported := 0
		for name, config := range configs {
			t.Run(entity.name+"/"+name, func(t *testing.T) {
				dv, err := tfprotov6.NewDynamicValue(entity.typ, config)
				if err != nil {
					t.Fatal(err)
				}
				want := diagnosticStrings(entity.validate(&dv))
				c := entity.empty
				c.Raw = config
				got := frameworkDiagnosticStrings(t, validateWithEngine(ctx, c, entity.vs))
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("diagnostics differ:\n validateConfig %q\n framework      %q", got, want)
				}
				reported += len(want)
			})
		}
		// The cases must trip validators, or the comparison proves little.
		if reported < 25 {
			t.Errorf("%s: the cases produced only %d diagnostics", entity.name, reported)
		}
	}
}
