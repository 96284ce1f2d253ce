package provider

import (
	"context"
	"math/big"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// planWith builds a resource plan whose attributes are null except those set.
func planWith(t *testing.T, set map[string]any) tfsdk.Plan {
	t.Helper()
	ctx := context.Background()
	s := resourceSchema(t)
	p := tfsdk.Plan{Schema: s, Raw: tftypes.NewValue(s.Type().TerraformType(ctx), nil)}
	for name, v := range set {
		if diags := p.SetAttribute(ctx, pathOf(name), v); diags.HasError() {
			t.Fatalf("set %s: %v", name, diags)
		}
	}
	return p
}

// pathOf turns "prefill.devices" into a framework path.
func pathOf(dotted string) path.Path {
	var p path.Path
	start := 0
	for i := 0; i <= len(dotted); i++ {
		if i == len(dotted) || dotted[i] == '.' {
			if start == 0 {
				p = path.Root(dotted[:i])
			} else {
				p = p.AtName(dotted[start:i])
			}
			start = i + 1
		}
	}
	return p
}

func TestSpecFromInputs(t *testing.T) {
	engineArgs := types.DynamicValue(types.ObjectValueMust(
		map[string]attr.Type{"max_num_batched_tokens": types.NumberType, "enforce_eager": types.BoolType},
		map[string]attr.Value{"max_num_batched_tokens": types.NumberValue(big.NewFloat(4096)), "enforce_eager": types.BoolValue(true)},
	))
	plan := planWith(t, map[string]any{
		"model":                          "Qwen/Qwen3-Omni-30B-A3B-Instruct",
		"format":                         "stages",
		"split_stage":                    int64(0),
		"gpus":                           int64(4),
		"prefill.devices":                []int64{1, 0},
		"prefill.max_num_seqs":           int64(8),
		"prefill.gpu_memory_utilization": 0.5,
		"prefill.engine_args":            engineArgs,
		"connector.protocol":             "rdma",
		"port_range.first":               int64(30000),
		"port_range.last":                int64(30010),
		"reserved_ports":                 []int64{30002, 30001},
		"config_path":                    "",
	})
	got := specOf(t, plan)

	zero, four, eight, half := 0, 4, 8, 0.5
	want := pipeline.Spec{
		Model:  "Qwen/Qwen3-Omni-30B-A3B-Instruct",
		Format: "stages", SplitStage: &zero, GPUs: &four,
		Prefill: pipeline.RoleSpec{
			Devices:              []int{1, 0}, // user order: it is rank order
			MaxNumSeqs:           &eight,
			GPUMemoryUtilization: &half,
			EngineArgs:           map[string]any{"max_num_batched_tokens": int64(4096), "enforce_eager": true},
		},
		Connector:     pipeline.ConnectorSpec{Protocol: "rdma"},
		PortRange:     &pipeline.PortRange{First: 30000, Last: 30010},
		ReservedPorts: []int{30001, 30002}, // sorted: a set has no order
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("spec =\n%#v\nwant\n%#v", got, want)
	}
}

// Unset inputs stay unset: the engine, not the provider, applies defaults.
func TestSpecFromInputs_Minimal(t *testing.T) {
	got := specOf(t, planWith(t, map[string]any{"model": "m"}))
	if !reflect.DeepEqual(got, pipeline.Spec{Model: "m"}) {
		t.Fatalf("spec = %#v", got)
	}
}

func TestInputsKnown(t *testing.T) {
	ctx := context.Background()
	n := func(f float64) types.Number { return types.NumberValue(big.NewFloat(f)) }
	known := planWith(t, map[string]any{"model": "m", "preset": "qwen3_omni_moe", "vllm_omni_version": "0.24", "config_path": "/etc/c.yaml", "format": "stage_args", "api_port": n(8091),
		"prefill.devices": []int64{0}, "prefill.tensor_parallel_size": n(1), "prefill.max_num_seqs": n(16), "prefill.bootstrap_port": n(25201),
		"decode.devices": []int64{1}, "decode.tensor_parallel_size": n(1), "decode.max_num_seqs": n(64), "decode.bootstrap_port": n(25202),
		"connector.name": "NixlConnector", "port_range.first": n(25201), "port_range.last": n(25300)})
	if !inputsKnown(known.Raw) {
		t.Error("all-known plan reported unknown")
	}
	// Unknown outputs do not count; a computed input that is set stays.
	if diags := writeUnknownOutputs(ctx, &known, known.Raw); diags.HasError() {
		t.Fatal(diags)
	}
	if !inputsKnown(known.Raw) {
		t.Error("unknown outputs made the inputs unknown")
	}
	deep := planWith(t, map[string]any{
		"model":               "m",
		"prefill.engine_args": types.DynamicValue(types.TupleValueMust([]attr.Type{types.StringType}, []attr.Value{types.StringUnknown()})),
	})
	if inputsKnown(deep.Raw) {
		t.Error("unknown inside a dynamic value not noticed")
	}
	triggers := planWith(t, map[string]any{"model": "m", "triggers": types.MapUnknown(types.StringType)})
	if inputsKnown(triggers.Raw) || !inputsKnown(triggers.Raw, "triggers") {
		t.Error("ignore list not honoured")
	}
}

// specOf is the Spec the provider builds from a plan's inputs; any
// diagnostic fails the test.
func specOf(t *testing.T, plan tfsdk.Plan) pipeline.Spec {
	t.Helper()
	ctx := context.Background()
	in, diags := readInputs(ctx, plan.Raw, resourceValidationSchema())
	if diags.HasError() {
		t.Fatal(diags)
	}
	spec, overrideDiags, diags := specFromInputs(ctx, in)
	if len(overrideDiags) > 0 {
		t.Fatal(overrideDiags)
	}
	if diags.HasError() {
		t.Fatal(diags)
	}
	return spec
}

// After an input that cannot be read, the nested inputs read after it are
// left unset, so the plan adds no problem that follows from the first:
// engine_args that is no object, beside a decode whose tensor-parallel
// size would not fit prefill's, reports the engine_args alone.
func TestSpecFromInputs_StopsAfterAnUnreadableInput(t *testing.T) {
	ctx := context.Background()
	plan := planWith(t, map[string]any{
		"model":                        "Qwen/Qwen3-Omni-30B-A3B-Instruct",
		"prefill.engine_args":          types.DynamicValue(types.StringValue("oops")),
		"decode.tensor_parallel_size":  int64(2),
		"connector.protocol":           "rdma",
		"port_range.first":             int64(30000),
		"port_range.last":              int64(30010),
		"systemd.head_wait_seconds":    int64(60),
		"prefill.tensor_parallel_size": int64(1),
	})
	in, diags := readInputs(ctx, plan.Raw, resourceValidationSchema())
	if diags.HasError() {
		t.Fatal(diags)
	}
	spec, _, diags := specFromInputs(ctx, in)
	if len(diags.Errors()) != 1 || diags.Errors()[0].Summary() != "Invalid engine_args" {
		t.Fatalf("diagnostics %v, want only Invalid engine_args", diags)
	}
	if !reflect.DeepEqual(spec.Decode, pipeline.RoleSpec{}) || !reflect.DeepEqual(spec.Connector, pipeline.ConnectorSpec{}) ||
		spec.PortRange != nil || !reflect.DeepEqual(spec.Service, pipeline.ServiceSpec{}) {
		t.Errorf("inputs after the unreadable one were read: decode %+v, connector %+v, port_range %v, systemd %+v",
			spec.Decode, spec.Connector, spec.PortRange, spec.Service)
	}
}
