package pipeline

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

// portList renders Result.Ports as name=port for comparison.
func portList(res *Result) []string {
	var out []string
	for _, p := range res.Ports {
		out = append(out, fmt.Sprintf("%s=%d", p.Name, p.Port))
	}
	return out
}

// handshakePorts reads the port each side of the PD pair's peer dials, for
// stages 0 and 1 from the rendered config: with NIXL, the default, the
// side-channel port in the stage's environment.
func handshakePorts(t *testing.T, res *Result) [2]any {
	t.Helper()
	st := stageList(t, config(t, res.ConfigYAML))
	key := []any{"runtime", "env", "VLLM_NIXL_SIDE_CHANNEL_PORT"}
	return [2]any{dig(st[0], key...), dig(st[1], key...)}
}

// The PD pair's ports come first (prefill's, decode's), then the omni
// master's, which the default release (0.24.0) launches each stage with on
// one host.
func TestPortAllocation(t *testing.T) {
	tests := []struct {
		name  string
		spec  Spec
		ports []string
	}{
		{"defaults", Spec{Model: seedModel},
			[]string{"api=8091", "prefill_side_channel=25201", "decode_side_channel=25202", "omni_master=25203"}},
		{"reserved ports are skipped", Spec{Model: seedModel, ReservedPorts: []int{25201, 25202, 25204}},
			[]string{"api=8091", "prefill_side_channel=25203", "decode_side_channel=25205", "omni_master=25206"}},
		{"port_range is respected", Spec{Model: seedModel, PortRange: &PortRange{First: 30000, Last: 30002}},
			[]string{"api=8091", "prefill_side_channel=30000", "decode_side_channel=30001", "omni_master=30002"}},
		{"user bootstrap ports", Spec{Model: seedModel, Prefill: RoleSpec{BootstrapPort: ptr(26000)}, Decode: RoleSpec{BootstrapPort: ptr(26001)}},
			[]string{"api=8091", "prefill_side_channel=26000", "decode_side_channel=26001", "omni_master=25201"}},
		{"a given port outside port_range is allowed", Spec{Model: seedModel, Decode: RoleSpec{BootstrapPort: ptr(25201)}},
			[]string{"api=8091", "prefill_side_channel=25202", "decode_side_channel=25201", "omni_master=25203"}},
		{"the allocator steps over the API port", Spec{Model: seedModel, APIPort: ptr(25201)},
			[]string{"api=25201", "prefill_side_channel=25202", "decode_side_channel=25203", "omni_master=25204"}},
		{"50051 is never handed out", Spec{Model: seedModel, PortRange: &PortRange{First: 50050, Last: 50053}},
			[]string{"api=8091", "prefill_side_channel=50050", "decode_side_channel=50052", "omni_master=50053"}},
		{"previous ports are kept", Spec{Model: seedModel, Previous: prevPorts("", map[string]int{
			"prefill_side_channel": 25250, "decode_side_channel": 25240, "omni_master": 25260})},
			[]string{"api=8091", "prefill_side_channel=25250", "decode_side_channel=25240", "omni_master=25260"}},
		{"previous ports now reserved are dropped", Spec{Model: seedModel, ReservedPorts: []int{25250},
			Previous: prevPorts("", map[string]int{"prefill_side_channel": 25250, "decode_side_channel": 25240})},
			[]string{"api=8091", "prefill_side_channel=25201", "decode_side_channel=25240", "omni_master=25202"}},
		{"previous ports outside a new range are dropped", Spec{Model: seedModel, PortRange: &PortRange{First: 31000, Last: 31010},
			Previous: prevPorts("", map[string]int{"prefill_side_channel": 25201, "decode_side_channel": 31005})},
			[]string{"api=8091", "prefill_side_channel=31000", "decode_side_channel=31005", "omni_master=31001"}},
		{"a previous port now given to another is dropped", Spec{Model: seedModel, Prefill: RoleSpec{BootstrapPort: ptr(25202)},
			Previous: prevPorts("", map[string]int{"decode_side_channel": 25202})},
			[]string{"api=8091", "prefill_side_channel=25202", "decode_side_channel=25201", "omni_master=25203"}},
		// Mooncake's bootstrap ports name no port now: they are planned
		// afresh. A NIXL block planned when it had one port per
		// tensor-parallel rank is found under its old first name.
		{"previous Mooncake ports are ignored", Spec{Model: seedModel, Previous: prevPorts("", map[string]int{
			"prefill_bootstrap": 25250, "decode_bootstrap": 25240})},
			[]string{"api=8091", "prefill_side_channel=25201", "decode_side_channel=25202", "omni_master=25203"}},
		{"a side channel kept under its per-rank name", Spec{Model: seedModel, Previous: prevPorts("", map[string]int{
			"prefill_side_channel_rank0": 25230})},
			[]string{"api=8091", "prefill_side_channel=25230", "decode_side_channel=25201", "omni_master=25202"}},
		// An earlier multi-host plan took the master port first: kept, the
		// side channels keep theirs, and nothing takes another's port.
		{"an earlier plan's master port is kept before new ports are drawn", Spec{Model: seedModel,
			Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"},
			Previous: prevPorts("10.0.0.1", map[string]int{"10.0.0.1/omni_master": 25201, "10.0.0.1/prefill_side_channel_rank0": 25202, "10.0.0.2/decode_side_channel_rank0": 25201, "10.0.0.1/edge_0_1": 25203})},
			[]string{"api=8091", "prefill_side_channel=25202", "decode_side_channel=25201", "omni_master=25201", "edge_0_1=25203"}},
		// The upgrade from a Mooncake plan across hosts: the side channels
		// are new, and do not take the master port the machines run with.
		{"new ports do not take an earlier plan's master port", Spec{Model: seedModel,
			Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"},
			Previous: prevPorts("10.0.0.1", map[string]int{"10.0.0.1/omni_master": 25201, "10.0.0.1/prefill_bootstrap": 25202, "10.0.0.2/decode_bootstrap": 25201, "10.0.0.1/edge_0_1": 25203})},
			[]string{"api=8091", "prefill_side_channel=25202", "decode_side_channel=25201", "omni_master=25201", "edge_0_1=25203"}},
		// A whole-pipeline launch (0.22.0 applies runtime.env in it) has no
		// master port.
		{"no master port in one whole-pipeline process", Spec{Model: seedModel, VLLMOmniVersion: "0.22.0"},
			[]string{"api=8091", "prefill_side_channel=25201", "decode_side_channel=25202"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustPlan(t, tc.spec)
			if got := portList(res); !reflect.DeepEqual(got, tc.ports) {
				t.Errorf("ports = %v, want %v", got, tc.ports)
			}
			// The config and the port list agree.
			p := strings.SplitN(tc.ports[1], "=", 2)[1]
			d := strings.SplitN(tc.ports[2], "=", 2)[1]
			if got := handshakePorts(t, res); got != [2]any{p, d} {
				t.Errorf("config side-channel ports = %v, want [%s %s]", got, p, d)
			}
			for _, port := range res.Ports {
				if (port.Name == portAPI || port.Name == portOmniMaster) != (port.StageID == nil) {
					t.Errorf("port %s: StageID %v (only the API and master ports have none)", port.Name, port.StageID)
				}
			}
			// The head's master flag names the master port.
			for _, port := range res.Ports {
				if port.Name == portOmniMaster && !strings.HasSuffix(res.ServeCommand, fmt.Sprintf("--omni-master-port %d", port.Port)) {
					t.Errorf("serve command %q does not name master port %d", res.ServeCommand, port.Port)
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
			Spec{Model: seedModel, APIPort: ptr(26000), Prefill: RoleSpec{BootstrapPort: ptr(26000)}}, "port 26000 is both api and prefill_side_channel"},
		// Under a MultiConnector, bootstrap_port is NIXL's side channel even
		// with Mooncake listed first.
		{"api_port equals a MultiConnector's bootstrap port", "port_collision", "prefill.bootstrap_port",
			Spec{Model: seedModel, APIPort: ptr(26000), Prefill: RoleSpec{BootstrapPort: ptr(26000)}, Connector: ConnectorSpec{Name: "MultiConnector",
				ExtraConfig: map[string]any{"connectors": []any{map[string]any{"kv_connector": "MooncakeConnector"}, map[string]any{"kv_connector": "NixlConnector"}}}}},
			"port 26000 is both api and prefill_side_channel"},
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
				Prefill: RoleSpec{EngineArgs: map[string]any{"data_parallel_size": int64(2)}, BootstrapPort: ptr(27000)},
				Decode:  RoleSpec{EngineArgs: map[string]any{"data_parallel_size": int64(2)}, BootstrapPort: ptr(27001)}}, "27001"},
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
				if d.Code.String() == tc.code && d.Path.String() == tc.path && !strings.Contains(d.Detail, tc.detail) {
					t.Errorf("detail %q does not mention %q", d.Detail, tc.detail)
				}
			}
		})
	}
}

// TestNixlSideChannelBlocks: NIXL's handshake listener is one per engine,
// at the side-channel port plus the engine's data-parallel index, with no
// tensor-parallel term, so each side gets a block of one port per
// data-parallel rank (named _dp<N> only when there are several) and the
// stage's env names the block's base.
func TestNixlSideChannelBlocks(t *testing.T) {
	dp := func(n int) map[string]any { return map[string]any{"data_parallel_size": int64(n)} }
	tests := []struct {
		name         string
		ptp, dtp     int
		pea, dea     map[string]any
		ports        []string
		prefEnv, dec string
	}{
		{"TP 1", 1, 1, nil, nil, []string{"api=8091", "prefill_side_channel=25201", "decode_side_channel=25202", "omni_master=25203"}, "25201", "25202"},
		{"TP 2: still one port a side", 2, 2, nil, nil, []string{"api=8091", "prefill_side_channel=25201", "decode_side_channel=25202", "omni_master=25203"}, "25201", "25202"},
		{"DP 2", 1, 1, dp(2), dp(2), []string{"api=8091",
			"prefill_side_channel_dp0=25201", "prefill_side_channel_dp1=25202",
			"decode_side_channel_dp0=25203", "decode_side_channel_dp1=25204", "omni_master=25205"}, "25201", "25203"},
		{"DP 2 with TP 2", 2, 2, dp(2), dp(2), []string{"api=8091",
			"prefill_side_channel_dp0=25201", "prefill_side_channel_dp1=25202",
			"decode_side_channel_dp0=25203", "decode_side_channel_dp1=25204", "omni_master=25205"}, "25201", "25203"},
		{"DP 3 on decode only", 1, 1, nil, dp(3), []string{"api=8091",
			"prefill_side_channel=25201",
			"decode_side_channel_dp0=25202", "decode_side_channel_dp1=25203", "decode_side_channel_dp2=25204", "omni_master=25205"}, "25201", "25202"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustPlan(t, Spec{Model: seedModel, Connector: ConnectorSpec{Name: "NixlConnector"},
				Prefill: RoleSpec{TensorParallelSize: ptr(tc.ptp), EngineArgs: tc.pea}, Decode: RoleSpec{TensorParallelSize: ptr(tc.dtp), EngineArgs: tc.dea}})
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
	// A block must fit whole: with DP 2, a range of four free ports holds
	// the two blocks of two but not the master's port too.
	_, ds := Plan(Spec{Model: seedModel, Connector: ConnectorSpec{Name: "NixlConnector"}, PortRange: &PortRange{First: 30000, Last: 30003},
		Prefill: RoleSpec{EngineArgs: dp(2)}, Decode: RoleSpec{EngineArgs: dp(2)}})
	if !hasCode(ds, "port_range_exhausted", "port_range") {
		t.Errorf("want port_range_exhausted, got %v", ds.Codes())
	}
	// ... nor can three free ports hold two blocks of two.
	_, ds = Plan(Spec{Model: seedModel, Connector: ConnectorSpec{Name: "NixlConnector"}, PortRange: &PortRange{First: 30000, Last: 30002},
		Prefill: RoleSpec{EngineArgs: dp(2)}, Decode: RoleSpec{EngineArgs: dp(2)}})
	if !hasCode(ds, "port_range_exhausted", "port_range") {
		t.Errorf("want port_range_exhausted, got %v", ds.Codes())
	}
	// A block's ports are kept by their first's name.
	res := mustPlan(t, Spec{Model: seedModel, Prefill: RoleSpec{EngineArgs: dp(2)}, Decode: RoleSpec{EngineArgs: dp(2)},
		Previous: prevPorts("", map[string]int{"decode_side_channel_dp0": 25250})})
	if got, want := portList(res), []string{"api=8091", "prefill_side_channel_dp0=25201", "prefill_side_channel_dp1=25202",
		"decode_side_channel_dp0=25250", "decode_side_channel_dp1=25251", "omni_master=25203"}; !reflect.DeepEqual(got, want) {
		t.Errorf("ports = %v, want %v", got, want)
	}
}

// allocatePorts and checkPorts refuse ports that collide, are reserved,
// do not fit the range, or are not used; they run alone here, on the
// layout, the connector and the release.
func TestPortDiagnostics(t *testing.T) {
	m := seedModel
	runStepDiagnostics(t, []planDiagCase{
		{"api_port is a bootstrap port", func(*testing.T) Spec {
			return Spec{Model: m, APIPort: ptr(25300), Decode: RoleSpec{BootstrapPort: ptr(25300)}}
		}, "port_collision", "decode.bootstrap_port"},
		{"given port reserved", func(*testing.T) Spec {
			return Spec{Model: m, Prefill: RoleSpec{BootstrapPort: ptr(26000)}, ReservedPorts: []int{26000}}
		}, "port_reserved", "prefill.bootstrap_port"},
		{"no room in port_range", func(*testing.T) Spec { return Spec{Model: m, PortRange: &PortRange{First: 30000, Last: 30000}} }, "port_range_exhausted", "port_range"},
		{"NIXL replicas of the PD pair share one port", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "  - stage_id: 0\n", "  - stage_id: 0\n    num_replicas: 2\n")}
		}, "nixl_replicas_one_port", "base_config"},
		{"NIXL replicas as a MultiConnector child", func(t *testing.T) Spec {
			return Spec{Model: m, BaseConfig: miniBaseWith(t, "  - stage_id: 0\n", "  - stage_id: 0\n    num_replicas: 3\n"),
				Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": []any{
					map[string]any{"kv_connector": "NixlConnector"}, map[string]any{"kv_connector": "MooncakeConnector"}}}}}
		}, "nixl_replicas_one_port", "base_config"},
	}, func(t *testing.T, spec Spec) Diagnostics {
		base, laid := laidOut(t, spec)
		var ds Diagnostics
		conn := chooseConnector(spec.Connector, &ds)
		release, _, ok := chooseRelease(spec, base, laid, conn, &ds)
		if !ok {
			t.Fatal(describeDiags(ds))
		}
		handoff := release.Release.Handoff
		ports := allocatePorts(spec, base, laid, conn, handoff, stageBasedLaunch(laid, release.Release))
		checkPorts(laid, conn, handoff, base.path, ports, &ds)
		return ds
	})
}

// In a MultiConnector the port a side's peer dials is the first handshake
// port of any child: LMCache's prefill listens on none, NIXL's does, so
// prefill.bootstrap_port sets NIXL's side channel.
func TestMultiConnectorHandshakeFromAnyChild(t *testing.T) {
	res := mustPlan(t, Spec{Model: seedModel, Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": []any{
		map[string]any{"kv_connector": "LMCacheConnectorV1"}, map[string]any{"kv_connector": "NixlConnector"}}}},
		Prefill: RoleSpec{BootstrapPort: ptr(26000)}, PortRange: &PortRange{First: 25201, Last: 26100}})
	got := map[string]int{}
	for _, p := range res.Ports {
		got[p.Name] = p.Port
	}
	if got["prefill_side_channel"] != 26000 || res.Prefill.BootstrapPort == nil || *res.Prefill.BootstrapPort != 26000 {
		t.Errorf("prefill.bootstrap_port = 26000 should be NIXL's side channel: ports %v, prefill %v", got, res.Prefill.BootstrapPort)
	}
}

// bootstrap_port on a side that listens on nothing is refused. No connector
// that passes the handoff gate has such a side today (NIXL's both listen),
// so the step is called directly with LMCache, whose prefill only dials.
func TestBootstrapPortOnASideWithNoPort(t *testing.T) {
	conn, _ := lookupConnector(connectorLMCache)
	handoff := releases.NewestFinal().Handoff
	one := parallel{tp: 1, pp: 1, dp: 1, replicas: 1}
	pre := &plannedStage{key: prefillKey, role: RolePrefill, path: AttrPath("prefill"), par: one, pd: &RoleSpec{BootstrapPort: ptr(26000)}}
	dec := &plannedStage{key: decodeKey, role: RoleDecode, path: AttrPath("decode"), par: one, pd: &RoleSpec{}}
	pp := portPlan{sides: map[string]map[string]int{}, handshake: map[string]int{}}
	reqs := sidePortRequests(pre, conn, handoff, &pp)
	var ds Diagnostics
	checkPorts(stageLayout{stages: []*plannedStage{pre, dec}}, conn, handoff, AttrPath("preset"), pp, &ds)
	if len(reqs) != 0 || !hasCode(ds, "bootstrap_port_unused", "prefill.bootstrap_port") {
		t.Errorf("want bootstrap_port_unused at prefill.bootstrap_port and no port requested; got %d requests, %v", len(reqs), ds)
	}
}

// prevPorts is an earlier plan's ports, each named "<host>/<name>", or
// "<name>" on a single host that no stage names; head is that plan's first
// stage's host.
func prevPorts(head string, ports map[string]int) *Allocations {
	a := &Allocations{Ports: map[HostKey]int{}, Head: head}
	for k, port := range ports {
		host, name, ok := strings.Cut(k, "/")
		if !ok {
			host, name = "", k
		}
		a.Ports[HostKey{host, name}] = port
	}
	return a
}
