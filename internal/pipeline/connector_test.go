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
		name  string
		conn  ConnectorSpec
		yaml  map[string]any
		ports map[string]int
	}{
		{
			name: "P2pNccl: a ZMQ port per side, http_port from the API port, the user's proxy",
			conn: ConnectorSpec{Name: "P2pNcclConnector", ExtraConfig: map[string]any{"proxy_ip": "10.0.0.9", "proxy_port": int64(30001)}},
			yaml: map[string]any{
				at(0, "kv_connector"): "P2pNcclConnector", at(0, "kv_port"): 25201, at(1, "kv_port"): 25202,
				at(0, "kv_connector_extra_config.http_port"): 8091, at(1, "kv_connector_extra_config.proxy_ip"): "10.0.0.9",
				at(1, "kv_role"): "kv_consumer",
			},
			ports: map[string]int{"/api": 8091, "/prefill_kv_port": 25201, "/decode_kv_port": 25202},
		},
		{
			name: "LMCache: proxy and peer ports, roles in each side's env",
			conn: ConnectorSpec{Name: "LMCacheConnectorV1"},
			yaml: map[string]any{
				at(0, "kv_connector"):     "LMCacheConnectorV1",
				env(0, "LMCACHE_PD_ROLE"): "sender", env(1, "LMCACHE_PD_ROLE"): "receiver",
				env(0, "LMCACHE_PD_PROXY_PORT"): "25201", env(0, "LMCACHE_PD_PEER_INIT_PORT"): "25202",
				env(1, "LMCACHE_PD_PEER_ALLOC_PORT"): "25203", env(1, "LMCACHE_PD_PEER_HOST"): "localhost",
			},
			ports: map[string]int{"/api": 8091, "/lmcache_proxy": 25201, "/decode_peer_init": 25202, "/decode_peer_alloc": 25203},
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
			},
			ports: map[string]int{"/api": 8091, "/prefill_side_channel_rank0": 25201, "/prefill_bootstrap": 25202, "/decode_side_channel_rank0": 25203, "/decode_bootstrap": 25204},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustPlan(t, Spec{Model: seedModel, Connector: tc.conn})
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
		{"protocol on NIXL", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "NixlConnector", Protocol: "tcp"}}
		}, "connector_protocol_unsupported", "connector.protocol"},
		{"unknown protocol", func(*testing.T) Spec { return Spec{Model: m, Connector: ConnectorSpec{Protocol: "udp"}} }, "connector_protocol_unknown", "connector.protocol"},
		{"device_name over tcp", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Protocol: "tcp", DeviceName: "mlx5_0"}}
		}, "connector_device_name_unused", "connector.device_name"},
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
		{"MultiConnector with an unknown child", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "MultiConnector",
				ExtraConfig: map[string]any{"connectors": []any{map[string]any{"kv_connector": "Nope"}}}}}
		}, "multi_connector_children", "connector.extra_config.connectors[0].kv_connector"},
	})
}
