package pipeline

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func portsByName(res *Result) map[string]int {
	out := map[string]int{}
	for _, p := range res.Ports {
		out[p.Host+"/"+p.Name] = p.Port
	}
	return out
}

// Each connector the provider wires gets its own ports and settings on both
// sides of the pair, as the connector table in the docs says.
func TestConnectorWiring(t *testing.T) {
	kv := "stage_args.%d.engine_args.kv_transfer_config."
	at := func(stage int, rest string) string { return strings.Replace(kv, "%d", strconv.Itoa(stage), 1) + rest }
	env := func(stage int, name string) string {
		return "stage_args." + strconv.Itoa(stage) + ".runtime.env." + name
	}
	tests := []struct {
		name    string
		version string // "" for the default release
		conn    ConnectorSpec
		yaml    map[string]any
		ports   map[string]int
	}{
		{
			name: "NIXL, the default: a side-channel port per side, in each side's env",
			yaml: map[string]any{
				at(0, "kv_connector"): "NixlConnector", at(0, "kv_role"): "kv_producer", at(1, "kv_role"): "kv_consumer",
				at(0, "kv_connector_extra_config"):    nil,
				env(0, "VLLM_NIXL_SIDE_CHANNEL_PORT"): "25201", env(1, "VLLM_NIXL_SIDE_CHANNEL_PORT"): "25202",
				env(0, "VLLM_NIXL_SIDE_CHANNEL_HOST"): nil,
			},
			ports: map[string]int{"/api": 8091, "/prefill_side_channel": 25201, "/decode_side_channel": 25202, "/omni_master": 25203},
		},
		{
			// P2pNccl alone fails the handoff gate; as a child beside NIXL its
			// own wiring still goes into its entry.
			name:    "P2pNccl child: a ZMQ port per side, http_port from the API port, the user's proxy",
			version: "0.22",
			conn: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": []any{
				map[string]any{"kv_connector": "NixlConnector"},
				map[string]any{"kv_connector": "P2pNcclConnector", "kv_connector_extra_config": map[string]any{"proxy_ip": "10.0.0.9", "proxy_port": int64(30001)}},
			}}},
			yaml: map[string]any{
				at(0, "kv_connector"): "MultiConnector",
				at(0, "kv_connector_extra_config.connectors.1.kv_connector"):                        "P2pNcclConnector",
				at(0, "kv_connector_extra_config.connectors.1.kv_port"):                             25202,
				at(1, "kv_connector_extra_config.connectors.1.kv_port"):                             25204,
				at(0, "kv_connector_extra_config.connectors.1.kv_connector_extra_config.http_port"): 8091,
				at(1, "kv_connector_extra_config.connectors.1.kv_connector_extra_config.proxy_ip"):  "10.0.0.9",
				// vLLM joins proxy_ip + ":" + proxy_port as text.
				at(1, "kv_connector_extra_config.connectors.1.kv_connector_extra_config.proxy_port"): "30001",
				at(1, "kv_connector_extra_config.connectors.1.kv_role"):                              "kv_consumer",
				env(0, "VLLM_NIXL_SIDE_CHANNEL_PORT"):                                                "25201",
				env(1, "VLLM_NIXL_SIDE_CHANNEL_PORT"):                                                "25203",
			},
			// 0.22.0 applies each stage's runtime.env in one process: no master port.
			ports: map[string]int{"/api": 8091, "/prefill_side_channel": 25201, "/prefill_kv_port": 25202, "/decode_side_channel": 25203, "/decode_kv_port": 25204},
		},
		{
			name: "LMCache child: proxy and peer ports, roles in each side's env",
			conn: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": []any{
				map[string]any{"kv_connector": "NixlConnector"},
				map[string]any{"kv_connector": "LMCacheConnectorV1"},
			}}},
			yaml: map[string]any{
				at(0, "kv_connector"): "MultiConnector",
				at(0, "kv_connector_extra_config.connectors.1.kv_connector"): "LMCacheConnectorV1",
				env(0, "LMCACHE_PD_ROLE"):                                    "sender", env(1, "LMCACHE_PD_ROLE"): "receiver",
				env(0, "LMCACHE_PD_PROXY_PORT"): "25206", env(0, "LMCACHE_PD_PEER_INIT_PORT"): "25203",
				env(1, "LMCACHE_PD_PEER_ALLOC_PORT"): "25204", env(1, "LMCACHE_PD_PEER_HOST"): "localhost",
				env(0, "VLLM_NIXL_SIDE_CHANNEL_PORT"): "25201", env(1, "VLLM_NIXL_SIDE_CHANNEL_PORT"): "25202",
			},
			// The PD pair's ports first, then the master's, then the proxy's.
			ports: map[string]int{"/api": 8091, "/prefill_side_channel": 25201, "/decode_side_channel": 25202,
				"/decode_peer_init": 25203, "/decode_peer_alloc": 25204, "/omni_master": 25205, "/lmcache_proxy": 25206},
		},
		{
			name: "MultiConnector: each child wired in its own entry, kv_both on both sides",
			conn: ConnectorSpec{Name: "MultiConnector", KVBoth: true, ExtraConfig: map[string]any{"connectors": []any{
				map[string]any{"kv_connector": "NixlConnector"},
				map[string]any{"kv_connector": "MooncakeConnector", "kv_buffer_size": int64(1000000000)},
			}}},
			yaml: map[string]any{
				at(0, "kv_connector"): "MultiConnector", at(0, "kv_role"): "kv_both", at(1, "kv_role"): "kv_both",
				at(0, "kv_connector_extra_config.connectors.0.kv_connector"):                                      "NixlConnector",
				at(0, "kv_connector_extra_config.connectors.1.kv_connector_extra_config.mooncake_bootstrap_port"): 25202,
				at(1, "kv_connector_extra_config.connectors.1.kv_connector_extra_config.mooncake_bootstrap_port"): 25204,
				at(1, "kv_connector_extra_config.connectors.1.kv_buffer_size"):                                    1000000000,
				env(0, "VLLM_NIXL_SIDE_CHANNEL_PORT"):                                                             "25201",
				env(1, "VLLM_NIXL_SIDE_CHANNEL_PORT"):                                                             "25203",
				env(0, "VLLM_MOONCAKE_BOOTSTRAP_PORT"):                                                            "25202",
				env(1, "VLLM_MOONCAKE_BOOTSTRAP_PORT"):                                                            "25204",
			},
			ports: map[string]int{"/api": 8091, "/prefill_side_channel": 25201, "/prefill_bootstrap": 25202, "/decode_side_channel": 25203, "/decode_bootstrap": 25204, "/omni_master": 25205},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustPlan(t, Spec{Model: seedModel, VLLMOmniVersion: tc.version, Connector: tc.conn})
			got := config(t, res.ConfigYAML)
			for path, want := range tc.yaml {
				if g := digPath(got, path); !reflect.DeepEqual(g, want) {
					t.Errorf("%s = %#v, want %#v", path, g, want)
				}
			}
			if g := portsByName(res); !reflect.DeepEqual(g, tc.ports) {
				t.Errorf("ports = %v, want %v", g, tc.ports)
			}
			if errs := Check([]byte(res.ConfigYAML)).Errors(); len(errs) > 0 {
				t.Errorf("planned config fails the checks: %v", errs)
			}
		})
	}
}

// chooseConnector refuses a connector block vLLM or vllm-omni would not run.
func TestConnectorDiagnostics(t *testing.T) {
	m := seedModel
	runPlanDiagnostics(t, []planDiagCase{
		{"P2pNccl proxy_ip null", func(*testing.T) Spec {
			return Spec{Model: m, VLLMOmniVersion: "0.22", Connector: ConnectorSpec{Name: "P2pNcclConnector", ExtraConfig: map[string]any{"proxy_ip": nil, "proxy_port": int64(30001)}}}
		}, "connector_extra_missing", "connector.extra_config"},
		{"MultiConnector child sets a role", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": []any{
				map[string]any{"kv_connector": "NixlConnector", "kv_role": "kv_both"}}}}}
		}, "multi_connector_child_managed_key", "connector.extra_config.connectors[0].kv_role"},
		{"MultiConnector child sets a bootstrap port", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": []any{
				map[string]any{"kv_connector": "MooncakeConnector", "kv_connector_extra_config": map[string]any{"mooncake_bootstrap_port": int64(9000)}}}}}}
		}, "multi_connector_child_managed_key", "connector.extra_config.connectors[0].kv_connector_extra_config.mooncake_bootstrap_port"},
		{"unknown connector", func(*testing.T) Spec { return Spec{Model: m, Connector: ConnectorSpec{Name: "RedisConnector"}} }, "connector_unknown", "connector.name"},
		// A P2pNccl child reads its proxy from its own entry.
		{"MultiConnector P2pNccl child without its proxy", func(*testing.T) Spec {
			return Spec{Model: m, VLLMOmniVersion: "0.22", Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": []any{
				map[string]any{"kv_connector": "NixlConnector"}, map[string]any{"kv_connector": "P2pNcclConnector", "kv_connector_extra_config": map[string]any{"proxy_port": int64(30001)}}}}}}
		}, "connector_extra_missing", "connector.extra_config.connectors[1]"},
		{"unknown protocol for a Mooncake child", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MultiConnector", Protocol: "udp", ExtraConfig: map[string]any{"connectors": []any{
				map[string]any{"kv_connector": "NixlConnector"}, map[string]any{"kv_connector": "MooncakeConnector"}}}}}
		}, "connector_protocol_unknown", "connector.protocol"},
		{"protocol on NIXL", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "NixlConnector", Protocol: "tcp"}}
		}, "connector_protocol_unsupported", "connector.protocol"},
		// protocol and device_name are Mooncake's (which the handoff gate
		// refuses too; each error is reported).
		{"unknown protocol", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MooncakeConnector", Protocol: "udp"}}
		}, "connector_protocol_unknown", "connector.protocol"},
		{"protocol on the default connector", func(*testing.T) Spec { return Spec{Model: m, Connector: ConnectorSpec{Protocol: "rdma"}} },
			"connector_protocol_unsupported", "connector.protocol"},
		{"device_name over tcp", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MooncakeConnector", Protocol: "tcp", DeviceName: "mlx5_0"}}
		}, "connector_device_name_unused", "connector.device_name"},
		{"device_name on the default connector", func(*testing.T) Spec { return Spec{Model: m, Connector: ConnectorSpec{DeviceName: "mlx5_0"}} },
			"connector_device_name_unused", "connector.device_name"},
		{"managed extra_config key", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{ExtraConfig: map[string]any{"mooncake_bootstrap_port": int64(1)}}}
		}, "connector_extra_managed_key", "connector.extra_config.mooncake_bootstrap_port"},
		{"extra_config value not writable", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{ExtraConfig: map[string]any{"x": math.NaN()}}}
		}, "engine_args_value", "connector.extra_config.x"},
		{"kv_both on P2pNccl", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "P2pNcclConnector", KVBoth: true,
				ExtraConfig: map[string]any{"proxy_ip": "10.0.0.9", "proxy_port": int64(30001)}}}
		}, "connector_kv_both_unsupported", "connector.kv_both"},
		{"P2pNccl without its proxy", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "P2pNcclConnector"}}
		}, "connector_extra_missing", "connector.extra_config"},
		{"MultiConnector without children", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MultiConnector"}}
		}, "multi_connector_children", "connector.extra_config.connectors"},
		// The handoff gate: vllm-omni's orchestrator fails every PD request
		// whose prefill returns no remote_request_id, which only NIXL does.
		{"MooncakeConnector fails the handoff gate", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MooncakeConnector"}}
		}, "connector_handoff_gate", "connector.name"},
		{"MooncakeConnector over rdma fails the handoff gate", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MooncakeConnector", Protocol: "rdma", DeviceName: "mlx5_0"}}
		}, "connector_handoff_gate", "connector.name"},
		{"P2pNcclConnector fails the handoff gate", func(*testing.T) Spec {
			return Spec{Model: m, VLLMOmniVersion: "0.22", Connector: ConnectorSpec{Name: "P2pNcclConnector",
				ExtraConfig: map[string]any{"proxy_ip": "10.0.0.9", "proxy_port": int64(30001)}}}
		}, "connector_handoff_gate", "connector.name"},
		{"LMCacheConnectorV1 fails the handoff gate", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "LMCacheConnectorV1"}}
		}, "connector_handoff_gate", "connector.name"},
		{"MultiConnector without a NIXL child fails the handoff gate", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": []any{
				map[string]any{"kv_connector": "MooncakeConnector"}, map[string]any{"kv_connector": "LMCacheConnectorV1"}}}}}
		}, "connector_handoff_gate", "connector.name"},
		{"the handoff gate on every release: the first with PD", func(*testing.T) Spec {
			return Spec{Model: m, VLLMOmniVersion: "0.20.0", Connector: ConnectorSpec{Name: "MooncakeConnector"}}
		}, "connector_handoff_gate", "connector.name"},
		{"MultiConnector with an unknown child", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MultiConnector",
				ExtraConfig: map[string]any{"connectors": []any{map[string]any{"kv_connector": "Nope"}}}}}
		}, "multi_connector_children", "connector.extra_config.connectors[0].kv_connector"},
		{"MultiConnector children written as class names", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MultiConnector",
				ExtraConfig: map[string]any{"connectors": []any{"NixlConnector", "MooncakeConnector"}}}}
		}, "multi_connector_children", "connector.extra_config.connectors[0]"},
	})
}

// A child written as its class name alone, not as an object, is refused at
// its own entry, with what was written and how to write it; nothing is
// said of a kv_connector it does not have, nor of the handoff gate, which
// the children the user meant would pass.
func TestMultiConnectorChildNotAnObject(t *testing.T) {
	_, ds := Plan(Spec{Model: seedModel, Connector: ConnectorSpec{Name: "MultiConnector",
		ExtraConfig: map[string]any{"connectors": []any{"NixlConnector", int64(3)}}}})
	want := map[string]string{
		"connector.extra_config.connectors[0]": `this entry is the string "NixlConnector"; write it as { kv_connector = "NixlConnector" }.`,
		"connector.extra_config.connectors[1]": `this entry is the number 3; write it as { kv_connector = "NixlConnector" }.`,
	}
	errs := ds.Errors()
	if len(errs) != len(want) {
		t.Fatalf("want %d errors, got:\n%s", len(want), describeDiags(ds))
	}
	for _, d := range errs {
		if d.Code.String() != "multi_connector_children" || d.Detail != want[d.Path.String()] ||
			d.Summary != "each child connector must be an object with kv_connector" {
			t.Errorf("got %s", d)
		}
	}
}

// The handoff gate's error names the connector that returns no
// remote_request_id (or a MultiConnector's children) and the way out, on
// every release the default plan runs on; NixlConnector, alone or as a
// MultiConnector child, passes it there.
func TestConnectorHandoffGate(t *testing.T) {
	multi := func(children ...string) ConnectorSpec {
		var list []any
		for _, c := range children {
			list = append(list, map[string]any{"kv_connector": c})
		}
		return ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": list}}
	}
	for _, v := range pdNativeQwen3Releases {
		t.Run(v, func(t *testing.T) {
			for _, tc := range []struct {
				conn ConnectorSpec
				want []string
			}{
				{ConnectorSpec{Name: "MooncakeConnector"}, []string{"vllm-omni " + v, "remote_request_id", "MooncakeConnector returns no remote_request_id", "Use NixlConnector"}},
				{ConnectorSpec{Name: "LMCacheConnectorV1"}, []string{"LMCacheConnectorV1 returns no remote_request_id"}},
				{multi("MooncakeConnector", "LMCacheConnectorV1"), []string{"no child of this MultiConnector (MooncakeConnector, LMCacheConnectorV1) returns remote_request_id", "MultiConnector with a NixlConnector child"}},
			} {
				_, ds := Plan(Spec{Model: seedModel, VLLMOmniVersion: v, Connector: tc.conn})
				gate := codesOf(ds, "connector_handoff_gate")
				if len(gate) != 1 {
					t.Errorf("%s: %d connector_handoff_gate, want 1:\n%s", tc.conn.Name, len(gate), describeDiags(ds))
					continue
				}
				for _, w := range tc.want {
					if !strings.Contains(gate[0].Detail, w) {
						t.Errorf("%s: detail %q does not say %q", tc.conn.Name, gate[0].Detail, w)
					}
				}
			}
			for _, conn := range []ConnectorSpec{{}, {Name: "NixlConnector"}, multi("NixlConnector", "MooncakeConnector"), multi("MooncakeConnector", "NixlConnector")} {
				if _, ds := Plan(Spec{Model: seedModel, VLLMOmniVersion: v, Connector: conn}); hasCodeAny(ds, "connector_handoff_gate") || ds.HasErrors() {
					t.Errorf("%+v is refused:\n%s", conn, describeDiags(ds))
				}
			}
		})
	}
}

// Mooncake over RDMA as a MultiConnector child beside NIXL: protocol and
// device_name reach the Mooncake child's entry, and the plan passes.
func TestMooncakeChildOverRDMA(t *testing.T) {
	res := mustPlan(t, Spec{Model: seedModel, Connector: ConnectorSpec{Name: "MultiConnector", Protocol: "rdma", DeviceName: "mlx5_0", ExtraConfig: map[string]any{"connectors": []any{
		map[string]any{"kv_connector": "NixlConnector"}, map[string]any{"kv_connector": "MooncakeConnector"}}}}})
	cfg := config(t, res.ConfigYAML)
	children, _ := dig(stageList(t, cfg)[0], "engine_args", "kv_transfer_config", "kv_connector_extra_config", "connectors").([]any)
	if len(children) != 2 {
		t.Fatalf("want two children, got %v", children)
	}
	mooncake, _ := children[1].(map[string]any)
	extra, _ := mooncake["kv_connector_extra_config"].(map[string]any)
	if extra["mooncake_protocol"] != "rdma" || extra["device_name"] != "mlx5_0" {
		t.Errorf("the Mooncake child's extra config = %v, want mooncake_protocol rdma and device_name mlx5_0", extra)
	}
	if nixl, _ := children[0].(map[string]any); nixl["kv_connector_extra_config"] != nil {
		t.Errorf("the NIXL child got Mooncake's settings: %v", nixl)
	}
}
