package provider

import (
	"context"
	"maps"
	"math/big"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// dataSourceConfig is an omni_pd_pipeline configuration as Terraform sends
// it: every attribute not in set is null.
func dataSourceConfig(t testing.TB, set map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	return objectValue(t, pdPipelineDataSourceType(), set)
}

// attrObject is a value for a nested-object attribute of the data source,
// such as prefill: the attributes in set, the others null.
func attrObject(t testing.TB, attribute string, set map[string]tftypes.Value) tftypes.Value {
	t.Helper()
	return objectValue(t, attributeType(t, pdPipelineDataSourceType(), attribute), set)
}

// tfNumber is a number value; strings are tfStr's, from pipeline_outputs.go.
func tfNumber(n int64) tftypes.Value {
	return tftypes.NewValue(tftypes.Number, big.NewFloat(float64(n)))
}

// seedWith is the seed's inputs (its model) with extra set over them.
func seedWith(extra map[string]tftypes.Value) map[string]tftypes.Value {
	out := map[string]tftypes.Value{"model": tfStr(seedModel)}
	maps.Copy(out, extra)
	return out
}

// TestDirectRead_MatchesFramework: directServer answers exactly what the
// framework's own ReadDataSource answers, byte for byte, for outputs,
// warnings, errors at nested paths and unknown inputs alike.
func TestDirectRead_MatchesFramework(t *testing.T) {
	seed := map[string]tftypes.Value{"model": tfStr(seedModel)}
	cases := map[string]map[string]tftypes.Value{
		"seed": seed,
		"reserved port": seedWith(map[string]tftypes.Value{
			"reserved_ports": tftypes.NewValue(tftypes.Set{ElementType: tftypes.Number}, []tftypes.Value{tfNumber(25201)}),
		}),
		"stages format and overrides": seedWith(map[string]tftypes.Value{
			"format":          tfStr("stages"),
			"stage_overrides": talkerOverride("max_num_seqs", tfNumber(8)),
		}),
		"memory warning": seedWith(map[string]tftypes.Value{
			"stage_overrides": talkerOverride("gpu_memory_utilization", tftypes.NewValue(tftypes.Number, big.NewFloat(0.88))),
		}),
		"errors at nested paths": seedWith(map[string]tftypes.Value{
			"gpus":   tfNumber(2),
			"decode": attrObject(t, "decode", map[string]tftypes.Value{"tensor_parallel_size": tfNumber(3)}),
		}),
		"broken base_config": {"base_config": tfStr("stage_args: [\n")},
		"unknown model":      {"model": tftypes.NewValue(tftypes.String, tftypes.UnknownValue)},
		"no model":           {},
	}

	ctx := context.Background()
	framework, direct := parityServers(t)
	sawDiagnostics := map[tfprotov6.DiagnosticSeverity]bool{}
	for name, set := range cases {
		t.Run(name, func(t *testing.T) {
			config, err := tfprotov6.NewDynamicValue(pdPipelineDataSourceType(), dataSourceConfig(t, set))
			if err != nil {
				t.Fatal(err)
			}
			req := &tfprotov6.ReadDataSourceRequest{TypeName: pdPipelineTypeName, Config: &config}
			want, err := framework.ReadDataSource(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			got, err := direct.ReadDataSource(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Diagnostics, want.Diagnostics) {
				t.Errorf("diagnostics differ:\n direct    %v\n framework %v", got.Diagnostics, want.Diagnostics)
			}
			if got.Deferred != nil || want.Deferred != nil {
				t.Errorf("deferred: direct %v, framework %v; want neither", got.Deferred, want.Deferred)
			}
			if (got.State == nil) != (want.State == nil) ||
				got.State != nil && string(got.State.MsgPack) != string(want.State.MsgPack) {
				t.Errorf("states differ")
			}
			if want.State == nil {
				t.Errorf("the framework returned no state")
			}
			for _, d := range want.Diagnostics {
				sawDiagnostics[d.Severity] = true
			}
		})
	}
	// The table must exercise both kinds of diagnostics, or the comparison
	// above proves less than it claims.
	if !sawDiagnostics[tfprotov6.DiagnosticSeverityError] || !sawDiagnostics[tfprotov6.DiagnosticSeverityWarning] {
		t.Errorf("the cases produced diagnostics of severities %v; want errors and warnings", sawDiagnostics)
	}
}

// TestDirectRead_FallsBack: reads the direct path was not built for go to
// the framework unchanged; the seed read does not.
func TestDirectRead_FallsBack(t *testing.T) {
	seed, err := tfprotov6.NewDynamicValue(pdPipelineDataSourceType(), dataSourceConfig(t, map[string]tftypes.Value{"model": tfStr(seedModel)}))
	if err != nil {
		t.Fatal(err)
	}
	meta, err := tfprotov6.NewDynamicValue(tftypes.Object{}, tftypes.NewValue(tftypes.Object{}, map[string]tftypes.Value{}))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name        string
		req         *tfprotov6.ReadDataSourceRequest
		toFramework bool
	}{
		{"the seed", &tfprotov6.ReadDataSourceRequest{TypeName: pdPipelineTypeName, Config: &seed}, false},
		{"another type", &tfprotov6.ReadDataSourceRequest{TypeName: "omni_nothing", Config: &seed}, true},
		{"no configuration", &tfprotov6.ReadDataSourceRequest{TypeName: pdPipelineTypeName}, true},
		{"a provider_meta", &tfprotov6.ReadDataSourceRequest{TypeName: pdPipelineTypeName, Config: &seed, ProviderMeta: &meta}, true},
		{"a configuration that does not decode", &tfprotov6.ReadDataSourceRequest{TypeName: pdPipelineTypeName,
			Config: &tfprotov6.DynamicValue{MsgPack: []byte{0xc1}}}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			inner := &recordingServer{ProviderServer: providerserver.NewProtocol6(New("test")())()}
			if _, err := (directServer{inner}).ReadDataSource(context.Background(), tc.req); err != nil {
				t.Fatal(err)
			}
			if got := inner.calls == 1; got != tc.toFramework {
				t.Errorf("reached the framework: %v, want %v", got, tc.toFramework)
			}
		})
	}
}
