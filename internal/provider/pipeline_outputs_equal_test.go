package provider

import (
	"bytes"
	"context"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// outputCorpus are data source configurations covering what the outputs
// can hold: one host and several, every connector, both dialects, base
// configs, overrides, the units' settings, the benchmark's instances.
func outputCorpus(t *testing.T) map[string]map[string]tftypes.Value {
	t.Helper()
	obj := func(attribute string, set map[string]tftypes.Value) tftypes.Value {
		return attrObject(t, attribute, set)
	}
	dyn := func(attrs map[string]tftypes.Value) tftypes.Value {
		types := map[string]tftypes.Type{}
		for k, v := range attrs {
			types[k] = v.Type()
		}
		return tftypes.NewValue(tftypes.Object{AttributeTypes: types}, attrs)
	}
	numbers := func(xs ...int64) tftypes.Value {
		elems := make([]tftypes.Value, len(xs))
		for i, x := range xs {
			elems[i] = tfNumber(x)
		}
		return tftypes.NewValue(tftypes.List{ElementType: tftypes.Number}, elems)
	}
	upstream := func(name string) tftypes.Value {
		b, err := os.ReadFile(filepath.Join("..", "stageconfig", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return tfStr(string(b))
	}
	child := func(name string) tftypes.Value { return dyn(map[string]tftypes.Value{"kv_connector": tfStr(name)}) }
	tuple := func(elems ...tftypes.Value) tftypes.Value {
		types := make([]tftypes.Type, len(elems))
		for i, e := range elems {
			types[i] = e.Type()
		}
		return tftypes.NewValue(tftypes.Tuple{ElementTypes: types}, elems)
	}
	// MultiConnector passes the handoff gate through its NIXL child; the
	// other child keeps its own wiring (Mooncake's bootstrap ports,
	// P2pNccl's kv_port and proxy).
	children := tuple(child("NixlConnector"), child("MooncakeConnector"))
	p2pChildren := tuple(child("NixlConnector"), dyn(map[string]tftypes.Value{
		"kv_connector":              tfStr("P2pNcclConnector"),
		"kv_connector_extra_config": dyn(map[string]tftypes.Value{"proxy_ip": tfStr("10.0.0.9"), "proxy_port": tfNumber(30001)}),
	}))

	return map[string]map[string]tftypes.Value{
		"seed":         seedWith(nil),
		"bench seed":   benchSeedInputs(),
		"qwen2.5 omni": {"model": tfStr("Qwen/Qwen2.5-Omni-7B")},
		// The first release with PD: one process per stage, no replica flags.
		"first release": seedWith(map[string]tftypes.Value{"vllm_omni_version": tfStr("0.20.0")}),
		// A release that applies runtime.env in one whole-pipeline process.
		"whole pipeline release": seedWith(map[string]tftypes.Value{"vllm_omni_version": tfStr("0.22.0")}),
		"tp2 both sides": seedWith(map[string]tftypes.Value{
			"prefill": obj("prefill", map[string]tftypes.Value{"tensor_parallel_size": tfNumber(2)}),
			"decode":  obj("decode", map[string]tftypes.Value{"tensor_parallel_size": tfNumber(2)}),
		}),
		"nixl": seedWith(map[string]tftypes.Value{"connector": obj("connector", map[string]tftypes.Value{"name": tfStr("NixlConnector")})}),
		// P2pNcclConnector alone fails the handoff gate; as a
		// MultiConnector child, on a release whose vLLM still has it.
		"p2p nccl child": seedWith(map[string]tftypes.Value{
			"vllm_omni_version": tfStr("0.22"),
			"connector": obj("connector", map[string]tftypes.Value{
				"name":         tfStr("MultiConnector"),
				"extra_config": dyn(map[string]tftypes.Value{"connectors": p2pChildren}),
			}),
		}),
		"multi connector": seedWith(map[string]tftypes.Value{"connector": obj("connector", map[string]tftypes.Value{
			"name":         tfStr("MultiConnector"),
			"extra_config": dyn(map[string]tftypes.Value{"connectors": children}),
		})}),
		"stages format": seedWith(map[string]tftypes.Value{
			"format": tfStr("stages"), "pipeline": tfStr("qwen3_omni_moe_pd"), "vllm_omni_version": tfStr("0.28.0"),
		}),
		"stage overrides":    seedWith(map[string]tftypes.Value{"stage_overrides": talkerOverride("max_num_seqs", tfNumber(8))}),
		"legacy base config": seedWith(map[string]tftypes.Value{"base_config": upstream("legacy_stage_configs__qwen3_omni_moe-be81443c.yaml")}),
		"stages base config": seedWith(map[string]tftypes.Value{
			"base_config": upstream("deploy__qwen3_omni_moe-e2aa6aad.yaml"), "split_stage": tfNumber(0),
		}),
		"multi host": seedWith(map[string]tftypes.Value{
			"prefill": obj("prefill", map[string]tftypes.Value{"host": tfStr("10.0.0.1")}),
			"decode":  obj("decode", map[string]tftypes.Value{"host": tfStr("10.0.0.2")}),
		}),
		// MooncakeConnector alone fails the handoff gate; its RDMA
		// settings reach it as a MultiConnector child.
		"multi host rdma and units": seedWith(map[string]tftypes.Value{
			"prefill": obj("prefill", map[string]tftypes.Value{"host": tfStr("::ffff:10.0.0.1")}),
			"decode":  obj("decode", map[string]tftypes.Value{"host": tfStr("::ffff:a00:2")}),
			"connector": obj("connector", map[string]tftypes.Value{
				"name": tfStr("MultiConnector"), "protocol": tfStr("rdma"), "device_name": tfStr("mlx5_0"),
				"extra_config": dyn(map[string]tftypes.Value{"connectors": children}),
			}),
			"stage_overrides": dyn(map[string]tftypes.Value{
				"code2wav": dyn(map[string]tftypes.Value{"host": tfStr("10.0.0.3")}),
			}),
			"systemd": obj("systemd", map[string]tftypes.Value{
				"user": tfStr("omni"), "cache_dir": tfStr("/srv/hf"), "environment_file": tfStr("/etc/omni/secrets.env"),
				"unit_prefix": tfStr("qwen-pd"), "head_wait_seconds": tfNumber(120),
			}),
		}),
		"everything placed": seedWith(map[string]tftypes.Value{
			"gpus":        tfNumber(4),
			"api_port":    tfNumber(9100),
			"config_path": tfStr("/opt/omni/pd.yaml"),
			"port_range":  obj("port_range", map[string]tftypes.Value{"first": tfNumber(31000), "last": tfNumber(31010)}),
			"prefill": obj("prefill", map[string]tftypes.Value{
				"devices": numbers(1), "bootstrap_port": tfNumber(31005), "max_num_seqs": tfNumber(8),
				"gpu_memory_utilization": tftypes.NewValue(tftypes.Number, big.NewFloat(0.5)),
				"engine_args":            dyn(map[string]tftypes.Value{"enforce_eager": tftypes.NewValue(tftypes.Bool, true)}),
			}),
			"decode":          obj("decode", map[string]tftypes.Value{"devices": numbers(0)}),
			"stage_overrides": dyn(map[string]tftypes.Value{"code2wav": dyn(map[string]tftypes.Value{"devices": numbers(3)})}),
			"reserved_ports": tftypes.NewValue(tftypes.Set{ElementType: tftypes.Number},
				[]tftypes.Value{tfNumber(31001), tfNumber(31002)}),
		}),
		// An instance of scripts/bench.sh's count layout.
		"bench count instance": seedWith(map[string]tftypes.Value{
			"api_port":   tfNumber(10007),
			"port_range": obj("port_range", map[string]tftypes.Value{"first": tfNumber(40070), "last": tfNumber(40079)}),
			"prefill":    obj("prefill", map[string]tftypes.Value{"tensor_parallel_size": tfNumber(2)}),
			"decode":     obj("decode", map[string]tftypes.Value{"tensor_parallel_size": tfNumber(2)}),
		}),
	}
}

// TestOutputsFromResult_MatchesFrameworkBuilder: the Terraform values
// outputsFromResult builds are those the same outputs built as framework
// values (frameworkOutputValues) convert to, attribute by attribute
// (tftypes.Value.Equal) and in the msgpack Terraform receives, byte for
// byte, for every configuration of the corpus.
func TestOutputsFromResult_MatchesFrameworkBuilder(t *testing.T) {
	ctx := context.Background()
	sawMap := false
	for name, set := range outputCorpus(t) {
		t.Run(name, func(t *testing.T) {
			config := dataSourceConfig(t, set)
			in, diags := readInputs(ctx, config, dataSourceValidationSchema())
			if diags.HasError() {
				t.Fatal(diags)
			}
			spec, overrideDiags, diags := specFromInputs(ctx, in)
			result, pds := pipeline.Plan(spec)
			addPipelineDiagnostics(&diags, append(overrideDiags, pds...))
			if result == nil || diags.HasError() {
				t.Fatalf("the case does not plan: %v", diags)
			}

			got, diags := outputsFromResult(ctx, in, result)
			if diags.HasError() {
				t.Fatal(diags)
			}
			want, diags := frameworkOutputValues(ctx, in, result)
			if diags.HasError() {
				t.Fatal(diags)
			}
			if len(got) != len(want) {
				t.Errorf("%d attributes, want %d", len(got), len(want))
			}
			for attr, w := range want {
				if g, ok := got[attr]; !ok || !g.Equal(w) {
					t.Errorf("%s differs:\n got  %v\n want %v", attr, g, w)
				}
			}

			// The states as the data source's Read writes them.
			gotState := tfsdk.State{Schema: pdPipelineDataSourceSchema(), Raw: config}
			wantState := gotState
			if d := setOutputs(ctx, &gotState, got); d.HasError() {
				t.Fatal(d)
			}
			if d := setOutputs(ctx, &wantState, want); d.HasError() {
				t.Fatal(d)
			}
			g, w := sortedMsgPack(t, gotState.Raw), sortedMsgPack(t, wantState.Raw)
			if !bytes.Equal(g, w) {
				t.Errorf("msgpack differs: %d bytes, want %d", len(g), len(w))
			}
			if bytes.Contains(w, []byte("VLLM_HOST_IP")) && bytes.Contains(w, []byte("VLLM_NIXL_SIDE_CHANNEL_PORT")) &&
				bytes.Contains(w, []byte("VLLM_MOONCAKE_BOOTSTRAP_PORT")) {
				sawMap = true
			}
		})
	}
	if !sawMap {
		t.Error("no case has an env map of several keys: the sorted encoding is not exercised")
	}
}

// sortedMsgPack is v in msgpack as Terraform receives it, with each map's
// keys in sorted order: tftypes writes a map's keys in Go's random map
// order, so two encodings of the same map differ from run to run. Each map
// becomes an object of the same keys and each list or set a tuple, which
// tftypes writes the same way, keys sorted; attributes declared dynamic
// keep their type, so their encoding still names it.
func sortedMsgPack(t *testing.T, v tftypes.Value) []byte {
	t.Helper()
	var sorted func(v tftypes.Value, declared tftypes.Type) (tftypes.Value, tftypes.Type)
	sorted = func(v tftypes.Value, declared tftypes.Type) (tftypes.Value, tftypes.Type) {
		if declared.Is(tftypes.DynamicPseudoType) || !v.IsKnown() || v.IsNull() || v.Type().Is(tftypes.String) ||
			v.Type().Is(tftypes.Number) || v.Type().Is(tftypes.Bool) {
			return v, declared
		}
		elemType := func(i int, k string) tftypes.Type {
			switch typ := declared.(type) {
			case tftypes.List:
				return typ.ElementType
			case tftypes.Set:
				return typ.ElementType
			case tftypes.Map:
				return typ.ElementType
			case tftypes.Tuple:
				return typ.ElementTypes[i]
			case tftypes.Object:
				return typ.AttributeTypes[k]
			}
			t.Fatalf("unexpected type %s", declared)
			return nil
		}
		var elems []tftypes.Value
		if v.As(&elems) == nil {
			elems = slices.Clone(elems) // As hands out v's own slice
			types := make([]tftypes.Type, len(elems))
			for i, e := range elems {
				elems[i], types[i] = sorted(e, elemType(i, ""))
			}
			tuple := tftypes.Tuple{ElementTypes: types}
			return tftypes.NewValue(tuple, elems), tuple
		}
		var attrs map[string]tftypes.Value
		if err := v.As(&attrs); err != nil {
			t.Fatalf("%s: %v", v.Type(), err)
		}
		keys := make([]string, 0, len(attrs))
		for k := range attrs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		out := make(map[string]tftypes.Value, len(attrs))
		types := make(map[string]tftypes.Type, len(attrs))
		for _, k := range keys {
			out[k], types[k] = sorted(attrs[k], elemType(0, k))
		}
		obj := tftypes.Object{AttributeTypes: types}
		return tftypes.NewValue(obj, out), obj
	}
	s, typ := sorted(v, v.Type())
	dv, err := tfprotov6.NewDynamicValue(typ, s)
	if err != nil {
		t.Fatal(err)
	}
	return dv.MsgPack
}
