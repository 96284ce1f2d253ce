package pipeline

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// portList renders Result.Ports as name=port for comparison.
func portList(res *Result) []string {
	var out []string
	for _, p := range res.Ports {
		out = append(out, fmt.Sprintf("%s=%d", p.Name, p.Port))
	}
	return out
}

// bootstrapPorts reads mooncake_bootstrap_port of stages 0 and 1 from the
// rendered config.
func bootstrapPorts(t *testing.T, res *Result) [2]any {
	t.Helper()
	st := stageList(t, config(t, res.ConfigYAML))
	key := []any{"engine_args", "kv_transfer_config", "kv_connector_extra_config", "mooncake_bootstrap_port"}
	return [2]any{dig(st[0], key...), dig(st[1], key...)}
}

func TestPortAllocation(t *testing.T) {
	tests := []struct {
		name  string
		spec  Spec
		ports []string
	}{
		{"defaults", Spec{Model: seedModel},
			[]string{"api=8091", "prefill_bootstrap=25201", "decode_bootstrap=25202"}},
		{"reserved ports are skipped", Spec{Model: seedModel, ReservedPorts: []int{25201, 25202, 25204}},
			[]string{"api=8091", "prefill_bootstrap=25203", "decode_bootstrap=25205"}},
		{"port_range is respected", Spec{Model: seedModel, PortRange: &PortRange{First: 30000, Last: 30001}},
			[]string{"api=8091", "prefill_bootstrap=30000", "decode_bootstrap=30001"}},
		{"user bootstrap ports", Spec{Model: seedModel, Prefill: RoleSpec{BootstrapPort: ptr(26000)}, Decode: RoleSpec{BootstrapPort: ptr(26001)}},
			[]string{"api=8091", "prefill_bootstrap=26000", "decode_bootstrap=26001"}},
		{"a given port outside port_range is allowed", Spec{Model: seedModel, Decode: RoleSpec{BootstrapPort: ptr(25201)}},
			[]string{"api=8091", "prefill_bootstrap=25202", "decode_bootstrap=25201"}},
		{"the allocator steps over the API port", Spec{Model: seedModel, APIPort: ptr(25201)},
			[]string{"api=25201", "prefill_bootstrap=25202", "decode_bootstrap=25203"}},
		{"50051 is never handed out", Spec{Model: seedModel, PortRange: &PortRange{First: 50050, Last: 50052}},
			[]string{"api=8091", "prefill_bootstrap=50050", "decode_bootstrap=50052"}},
		{"previous ports are kept", Spec{Model: seedModel, Previous: &Allocations{Ports: map[string]int{"prefill_bootstrap": 25250, "decode_bootstrap": 25240}}},
			[]string{"api=8091", "prefill_bootstrap=25250", "decode_bootstrap=25240"}},
		{"previous ports now reserved are dropped", Spec{Model: seedModel, ReservedPorts: []int{25250},
			Previous: &Allocations{Ports: map[string]int{"prefill_bootstrap": 25250, "decode_bootstrap": 25240}}},
			[]string{"api=8091", "prefill_bootstrap=25201", "decode_bootstrap=25240"}},
		{"previous ports outside a new range are dropped", Spec{Model: seedModel, PortRange: &PortRange{First: 31000, Last: 31010},
			Previous: &Allocations{Ports: map[string]int{"prefill_bootstrap": 25201, "decode_bootstrap": 31005}}},
			[]string{"api=8091", "prefill_bootstrap=31000", "decode_bootstrap=31005"}},
		{"a previous port now given to another is dropped", Spec{Model: seedModel, Prefill: RoleSpec{BootstrapPort: ptr(25202)},
			Previous: &Allocations{Ports: map[string]int{"decode_bootstrap": 25202}}},
			[]string{"api=8091", "prefill_bootstrap=25202", "decode_bootstrap=25201"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustPlan(t, tc.spec)
			if got := portList(res); !reflect.DeepEqual(got, tc.ports) {
				t.Errorf("ports = %v, want %v", got, tc.ports)
			}
			// The config and the port list agree.
			var p, d int
			if _, err := fmt.Sscanf(strings.SplitN(tc.ports[1], "=", 2)[1], "%d", &p); err != nil {
				t.Fatal(err)
			}
			if _, err := fmt.Sscanf(strings.SplitN(tc.ports[2], "=", 2)[1], "%d", &d); err != nil {
				t.Fatal(err)
			}
			if got := bootstrapPorts(t, res); got != [2]any{p, d} {
				t.Errorf("config bootstrap ports = %v, want [%d %d]", got, p, d)
			}
			for _, port := range res.Ports {
				if (port.Name == portAPI) != (port.StageID == nil) {
					t.Errorf("port %s: StageID %v (only the API port has none)", port.Name, port.StageID)
				}
			}
		})
	}
}

func TestPortErrors(t *testing.T) {
	tests := []struct {
		name, code, path string
		spec             Spec
		detail           string
	}{
		{"range exhausted", "port_range_exhausted", "port_range",
			Spec{Model: seedModel, PortRange: &PortRange{First: 30000, Last: 30000}}, "widen port_range"},
		{"range exhausted by reservations", "port_range_exhausted", "port_range",
			Spec{Model: seedModel, PortRange: &PortRange{First: 30000, Last: 30002}, ReservedPorts: []int{30000, 30001}}, "between 30000 and 30002"},
		{"range holding only 50051", "port_range_exhausted", "port_range",
			Spec{Model: seedModel, PortRange: &PortRange{First: 50051, Last: 50052}}, "needs 1 free port"},
		{"api_port equals a bootstrap port", "port_collision", "prefill.bootstrap_port",
			Spec{Model: seedModel, APIPort: ptr(26000), Prefill: RoleSpec{BootstrapPort: ptr(26000)}}, "port 26000 is both api and prefill_bootstrap"},
		{"both bootstrap ports equal", "port_collision", "decode.bootstrap_port",
			Spec{Model: seedModel, Prefill: RoleSpec{BootstrapPort: ptr(26000)}, Decode: RoleSpec{BootstrapPort: ptr(26000)}}, "choose another port"},
		{"api_port on 50051", "port_collision", "api_port",
			Spec{Model: seedModel, APIPort: ptr(50051)}, "50051"},
		{"bootstrap port on 50051", "port_collision", "decode.bootstrap_port",
			Spec{Model: seedModel, Decode: RoleSpec{BootstrapPort: ptr(50051)}}, "connectors"},
		{"given port reserved", "port_reserved", "api_port",
			Spec{Model: seedModel, APIPort: ptr(9000), ReservedPorts: []int{9000}}, "reserved_ports"},
		{"NIXL block overlaps a given port", "port_collision", "decode.bootstrap_port",
			Spec{Model: seedModel, Connector: ConnectorSpec{Name: "NixlConnector"},
				Prefill: RoleSpec{TensorParallelSize: ptr(2), BootstrapPort: ptr(27000)},
				Decode:  RoleSpec{TensorParallelSize: ptr(2), BootstrapPort: ptr(27001)}}, "27001"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, ds := Plan(tc.spec)
			if res != nil {
				t.Fatalf("Plan succeeded with ports %v; want %s", portList(res), tc.code)
			}
			if !hasCode(ds, tc.code, tc.path) {
				t.Fatalf("want %s at %s, got:\n%s", tc.code, tc.path, describeDiags(ds))
			}
			for _, d := range ds {
				if d.Code == tc.code && d.Path.String() == tc.path && !strings.Contains(d.Detail, tc.detail) {
					t.Errorf("detail %q does not mention %q", d.Detail, tc.detail)
				}
			}
		})
	}
}

// TestNixlSideChannelBlocks: NIXL listens on one side-channel port per
// tensor-parallel rank (base + rank), so each side gets a block of TP ports
// and the stage's env names the block's base.
func TestNixlSideChannelBlocks(t *testing.T) {
	tests := []struct {
		name         string
		ptp, dtp     int
		ports        []string
		prefEnv, dec string
	}{
		{"TP 1", 1, 1, []string{"api=8091", "prefill_side_channel_rank0=25201", "decode_side_channel_rank0=25202"}, "25201", "25202"},
		{"TP 2", 2, 2, []string{"api=8091",
			"prefill_side_channel_rank0=25201", "prefill_side_channel_rank1=25202",
			"decode_side_channel_rank0=25203", "decode_side_channel_rank1=25204"}, "25201", "25203"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustPlan(t, Spec{Model: seedModel, Connector: ConnectorSpec{Name: "NixlConnector"},
				Prefill: RoleSpec{TensorParallelSize: ptr(tc.ptp)}, Decode: RoleSpec{TensorParallelSize: ptr(tc.dtp)}})
			if got := portList(res); !reflect.DeepEqual(got, tc.ports) {
				t.Errorf("ports = %v, want %v", got, tc.ports)
			}
			st := stageList(t, config(t, res.ConfigYAML))
			env := []any{"runtime", "env", "VLLM_NIXL_SIDE_CHANNEL_PORT"}
			if got := dig(st[0], env...); got != tc.prefEnv {
				t.Errorf("prefill env = %v, want %s", got, tc.prefEnv)
			}
			if got := dig(st[1], env...); got != tc.dec {
				t.Errorf("decode env = %v, want %s", got, tc.dec)
			}
			if dig(st[0], "engine_args", "kv_transfer_config", "kv_connector_extra_config", "mooncake_bootstrap_port") != nil {
				t.Error("NIXL config carries a Mooncake bootstrap port")
			}
		})
	}
	// A block must fit whole: with TP 2, a range of three free ports cannot
	// hold two blocks of two.
	_, ds := Plan(Spec{Model: seedModel, Connector: ConnectorSpec{Name: "NixlConnector"}, PortRange: &PortRange{First: 30000, Last: 30002},
		Prefill: RoleSpec{TensorParallelSize: ptr(2)}, Decode: RoleSpec{TensorParallelSize: ptr(2)}})
	if !hasCode(ds, "port_range_exhausted", "port_range") {
		t.Errorf("want port_range_exhausted, got %v", ds.Codes())
	}
}

// allocatePorts refuses ports that collide, are reserved, do not fit the
// range, or are not used.
func TestPortDiagnostics(t *testing.T) {
	m := seedModel
	runPlanDiagnostics(t, []planDiagCase{
		{"api_port is a bootstrap port", func(*testing.T) Spec {
			return Spec{Model: m, APIPort: ptr(25300), Decode: RoleSpec{BootstrapPort: ptr(25300)}}
		}, "port_collision", "decode.bootstrap_port"},
		{"given port reserved", func(*testing.T) Spec {
			return Spec{Model: m, Prefill: RoleSpec{BootstrapPort: ptr(26000)}, ReservedPorts: []int{26000}}
		}, "port_reserved", "prefill.bootstrap_port"},
		{"no room in port_range", func(*testing.T) Spec { return Spec{Model: m, PortRange: &PortRange{First: 30000, Last: 30000}} }, "port_range_exhausted", "port_range"},
		{"bootstrap_port on a side with no port", func(*testing.T) Spec {
			return Spec{Model: m, Connector: ConnectorSpec{Name: "LMCacheConnectorV1"}, Prefill: RoleSpec{BootstrapPort: ptr(26000)}}
		}, "bootstrap_port_unused", "prefill.bootstrap_port"},
	})
}
