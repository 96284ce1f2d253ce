package pipeline

import (
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// digPath reads decoded YAML by a dotted path whose numeric parts are list
// indices: "stage_args.0.engine_args.kv_transfer_config.kv_role".
func digPath(v any, path string) any {
	var steps []any
	for _, part := range strings.Split(path, ".") {
		if n, err := strconv.Atoi(part); err == nil {
			steps = append(steps, n)
		} else {
			steps = append(steps, part)
		}
	}
	return dig(v, steps...)
}

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
			got := decodeYAML(t, res.ConfigYAML)
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

// Across hosts each side binds on its own address, ports are unique per host
// only, and every host launches its stages with the stage-based CLI.
func TestMultiHost(t *testing.T) {
	res := mustPlan(t, Spec{Model: seedModel, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}})
	got := decodeYAML(t, res.ConfigYAML)
	want := map[string]any{
		"stage_args.0.engine_args.kv_transfer_config.kv_ip":            "10.0.0.1",
		"stage_args.1.engine_args.kv_transfer_config.kv_ip":            "10.0.0.2",
		"stage_args.0.runtime.env.VLLM_HOST_IP":                        "10.0.0.1",
		"stage_args.3.runtime.env.VLLM_HOST_IP":                        "10.0.0.2",
		"stage_args.0.runtime.env.VLLM_MOONCAKE_BOOTSTRAP_PORT":        "25202",
		"stage_args.1.runtime.env.VLLM_MOONCAKE_BOOTSTRAP_PORT":        "25201",
		"stage_args.1.runtime.devices":                                 "0",
		"stage_args.2.runtime.devices":                                 "1",
		"stage_args.1.engine_args.kv_transfer_config.kv_role":          "kv_consumer",
		"stage_args.0.engine_args.kv_transfer_config.kv_parallel_size": 2,
		// The prefill → decode edge crosses hosts, so it names a connector
		// that can (a shared-memory one is what it would get otherwise).
		"stage_args.0.output_connectors.to_stage_1":        "cross_host_0_1",
		"stage_args.1.input_connectors.from_stage_0":       "cross_host_0_1",
		"runtime.connectors.cross_host_0_1.name":           "MooncakeTransferEngineConnector",
		"runtime.connectors.cross_host_0_1.extra.host":     "10.0.0.1",
		"runtime.connectors.cross_host_0_1.extra.zmq_port": 25203,
		"runtime.connectors.cross_host_0_1.extra.protocol": "tcp",
	}
	for path, w := range want {
		if g := digPath(got, path); !reflect.DeepEqual(g, w) {
			t.Errorf("%s = %#v, want %#v", path, g, w)
		}
	}
	wantPorts := map[string]int{"10.0.0.1/api": 8091, "10.0.0.1/omni_master": 25201, "10.0.0.1/prefill_bootstrap": 25202,
		"10.0.0.1/edge_0_1": 25203, "10.0.0.2/decode_bootstrap": 25201}
	if g := portsByName(res); !reflect.DeepEqual(g, wantPorts) {
		t.Errorf("ports = %v, want %v", g, wantPorts)
	}
	if len(res.Launches) != 2 {
		t.Fatalf("%d launches, want one per host", len(res.Launches))
	}
	head, worker := res.Launches[0], res.Launches[1]
	wantHead := []string{"vllm", "serve", seedModel, "--omni", "--port", "8091", "--stage-configs-path", DefaultConfigPath,
		"--stage-id", "0", "--omni-master-address", "10.0.0.1", "--omni-master-port", "25201"}
	if head.Host != "10.0.0.1" || !reflect.DeepEqual(head.Argv, wantHead) || head.Command != ShellJoin(wantHead) {
		t.Errorf("head launch = %+v", head)
	}
	if !reflect.DeepEqual(res.ServeArgs, head.Argv) {
		t.Errorf("serve_args %v should be the head's launch", res.ServeArgs)
	}
	// The worker runs three processes, one per stage, and so has no single
	// command: no shell supervises them.
	if worker.Host != "10.0.0.2" || !reflect.DeepEqual(worker.StageIDs, []int{1, 2, 3}) || worker.Argv != nil || worker.Command != "" {
		t.Errorf("worker launch = %+v", worker)
	}
	if len(worker.Processes) != 3 {
		t.Fatalf("worker has %d processes, want one per stage", len(worker.Processes))
	}
	for i, proc := range worker.Processes {
		id := strconv.Itoa(i + 1)
		if proc.Role != ProcessHeadless || proc.StageID == nil || *proc.StageID != i+1 || proc.UnitName != "vllm-omni-stage-"+id+".service" ||
			!strings.HasSuffix(proc.Command, "--stage-id "+id+" --headless --omni-master-address 10.0.0.1 --omni-master-port 25201 --omni-replica-address 10.0.0.2") {
			t.Errorf("worker process %d = %+v", i, proc)
		}
	}
	if len(head.Processes) != 1 || head.Processes[0].Role != ProcessHead || head.Processes[0].Command != head.Command {
		t.Errorf("head processes = %+v", head.Processes)
	}
	if !reflect.DeepEqual(worker.Ports, []int{25201}) || worker.Env["VLLM_HOST_IP"] != "10.0.0.2" {
		t.Errorf("worker ports %v env %v", worker.Ports, worker.Env)
	}
	// Each process has what it needs: the decode stage its bootstrap port
	// and address, the head the API and master ports.
	dec := worker.Processes[0]
	if dec.Env["VLLM_MOONCAKE_BOOTSTRAP_PORT"] != "25201" || dec.Env["VLLM_HOST_IP"] != "10.0.0.2" ||
		!reflect.DeepEqual(dec.Ports, []NamedPort{{"decode_bootstrap", 25201}}) || !reflect.DeepEqual(dec.Devices, []int{0}) {
		t.Errorf("decode process = %+v", dec)
	}
	if got := head.Processes[0].Ports; !reflect.DeepEqual(got, []NamedPort{{"api", 8091}, {"omni_master", 25201}, {"prefill_bootstrap", 25202}, {"edge_0_1", 25203}}) {
		t.Errorf("head process ports = %v", got)
	}
	if res.GPUCount != 2 || head.GPUCount != 1 || worker.GPUCount != 2 {
		t.Errorf("gpu counts: pipeline %d, head %d, worker %d; want the most any host needs (2), 1, 2", res.GPUCount, head.GPUCount, worker.GPUCount)
	}
	if errs := Check([]byte(res.ConfigYAML)).Errors(); len(errs) > 0 {
		t.Errorf("planned config fails the checks: %v", errs)
	}
}

// The planner and the config checks share one tensor-parallel rule:
// vllm-omni's PD validator demands equal sizes whatever the connector.
func TestTPProblem(t *testing.T) {
	nixlOnly := connector{name: connectorMulti}
	tests := []struct {
		conn             connector
		prefill, decode  int
		wantOK           bool
		wantMentionsName bool
	}{
		{connectorTable[connectorMooncake], 2, 2, true, false},
		{connectorTable[connectorMooncake], 1, 2, false, true},
		{connectorTable[connectorNixl], 1, 2, false, true},
		{connectorTable[connectorNixl], 2, 1, false, true},
		{connectorTable[connectorNixl], 2, 2, true, false},
		{nixlOnly, 2, 4, false, true},
		{nixlOnly, 4, 2, false, true},
		{connector{name: "SomeFutureConnector"}, 1, 2, false, true},
	}
	for _, tc := range tests {
		msg := tpProblem(tc.conn, tc.prefill, tc.decode)
		if (msg == "") != tc.wantOK {
			t.Errorf("%s prefill %d decode %d: %q", tc.conn.name, tc.prefill, tc.decode, msg)
		}
		if tc.wantMentionsName && !strings.Contains(msg, tc.conn.name) {
			t.Errorf("%q does not name %s", msg, tc.conn.name)
		}
	}
}

// Hosts are compared as addresses: two spellings of one machine are one
// host, and every output writes the canonical one.
func TestHostsCanonical(t *testing.T) {
	res := mustPlan(t, Spec{Model: seedModel, Prefill: RoleSpec{Host: "::ffff:10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.1"}})
	if len(res.Launches) != 1 || res.Launches[0].Host != "10.0.0.1" || strings.Contains(res.ConfigYAML, "ffff") {
		t.Errorf("one machine in two spellings: launches %+v", res.Launches)
	}
	// IPv6 on one host is written canonically; across hosts vllm-omni's
	// unbracketed ZMQ endpoints cannot take it.
	res = mustPlan(t, Spec{Model: seedModel, Prefill: RoleSpec{Host: "FD00:0000::0001"}})
	if res.Launches[0].Host != "fd00::1" {
		t.Errorf("IPv6 host is not canonical: %s", res.Launches[0].Host)
	}
	if _, ds := Plan(Spec{Model: seedModel, Prefill: RoleSpec{Host: "fd00::1"}, Decode: RoleSpec{Host: "10.0.0.2"}}); !hasCode(ds, "host_ipv6_unsupported", "prefill.host") {
		t.Errorf("IPv6 across hosts: %v", ds.Codes())
	}
	// No host at all: the launch still has a key.
	if res := mustPlan(t, Spec{Model: seedModel}); res.Launches[0].Host != SingleHost {
		t.Errorf("single-host launch host %q, want %q", res.Launches[0].Host, SingleHost)
	}
}

// checkConnector refuses a connector block vLLM or vllm-omni would not run.
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
