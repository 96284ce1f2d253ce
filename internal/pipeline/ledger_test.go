package pipeline

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// p2pChild is a MultiConnector of NIXL and P2pNccl with this proxy, on the
// last release line whose vLLM has P2pNcclConnector.
func p2pChild(ip any, port any) Spec {
	return Spec{Model: seedModel, VLLMOmniVersion: "0.22", Connector: ConnectorSpec{Name: connectorMulti, ExtraConfig: map[string]any{"connectors": []any{
		map[string]any{"kv_connector": connectorNixl},
		map[string]any{"kv_connector": connectorP2pNccl, "kv_connector_extra_config": map[string]any{"proxy_ip": ip, "proxy_port": port}},
	}}}}
}

// talkerKV is the seed preset with this kv_transfer_config on the talker,
// a stage the plan keeps as written.
func talkerKV(t *testing.T, kv string) string {
	t.Helper()
	base := readPreset(t, "qwen3_omni_moe")
	at := "      hf_config_name: talker_config\n"
	if !strings.Contains(base, at) {
		t.Fatal("the preset has no talker_config line")
	}
	return strings.Replace(base, at, at+"      kv_transfer_config: "+kv+"\n", 1)
}

// withConnectorDef is the seed preset with one connector definition.
func withConnectorDef(t *testing.T, extra string) string {
	t.Helper()
	return strings.Replace(readPreset(t, "qwen3_omni_moe"), "stage_args:\n",
		"runtime:\n  connectors:\n    mine:\n      name: MooncakeTransferEngineConnector\n      extra: "+extra+"\nstage_args:\n", 1)
}

const proxyAt = "connector.extra_config.connectors[1].kv_connector_extra_config."

// Every port the plan writes or accepts is a port, and a listener's port
// is used once on its host: the P2pNccl proxy's from Terraform, and the
// ports of a base config's (or an override's) kv_transfer_config and
// connector definitions.
func TestForeignPortErrors(t *testing.T) {
	two := func(s Spec) Spec { s.Prefill.Host, s.Decode.Host = "10.0.0.1", "10.0.0.2"; return s }
	runPlanDiagnostics(t, []planDiagCase{
		{"proxy_port above 65535", func(*testing.T) Spec { return p2pChild("127.0.0.1", int64(70000)) },
			"connector_proxy_invalid", proxyAt + "proxy_port"},
		{"proxy_port text that is no number", func(*testing.T) Spec { return p2pChild("127.0.0.1", "abc") },
			"connector_proxy_invalid", proxyAt + "proxy_port"},
		{"proxy_port a fraction", func(*testing.T) Spec { return p2pChild("127.0.0.1", 300.5) },
			"connector_proxy_invalid", proxyAt + "proxy_port"},
		{"proxy_ip IPv6", func(*testing.T) Spec { return p2pChild("::1", int64(30001)) },
			"connector_proxy_invalid", proxyAt + "proxy_ip"},
		{"proxy_ip a DNS name", func(*testing.T) Spec { return p2pChild("proxy.internal", int64(30001)) },
			"connector_proxy_invalid", proxyAt + "proxy_ip"},
		{"proxy_ip a number", func(*testing.T) Spec { return p2pChild(int64(10), int64(30001)) },
			"connector_proxy_invalid", proxyAt + "proxy_ip"},
		{"P2pNccl alone: proxy_port 0, beside the handoff gate", func(*testing.T) Spec {
			return Spec{Model: seedModel, Connector: ConnectorSpec{Name: connectorP2pNccl, ExtraConfig: map[string]any{"proxy_ip": "127.0.0.1", "proxy_port": int64(0)}}}
		}, "connector_proxy_invalid", "connector.extra_config.proxy_port"},
		{"the proxy on the API port", func(*testing.T) Spec { return p2pChild("127.0.0.1", int64(8091)) },
			"port_collision", proxyAt + "proxy_port"},
		{"the proxy on the API port, named by the head's address", func(*testing.T) Spec { return two(p2pChild("10.0.0.1", "8091")) },
			"port_collision", proxyAt + "proxy_port"},
		{"the proxy on decode's bootstrap_port", func(*testing.T) Spec {
			s := two(p2pChild("10.0.0.2", int64(30001)))
			s.Decode.BootstrapPort = ptr(30001)
			return s
		}, "port_collision", proxyAt + "proxy_port"},
		{"a loopback proxy dialed from two hosts", func(*testing.T) Spec { return two(p2pChild("127.0.0.1", int64(30001))) },
			"connector_proxy_loopback", proxyAt + "proxy_ip"},
		{"a base stage's kv_port above 65535", func(t *testing.T) Spec {
			return Spec{Model: seedModel, BaseConfig: talkerKV(t, "{kv_connector: P2pNcclConnector, kv_role: kv_producer, kv_port: 70000}")}
		}, "base_port_invalid", "base_config"},
		{"a base stage's proxy on the API port", func(t *testing.T) Spec {
			return Spec{Model: seedModel, BaseConfig: talkerKV(t, `{kv_connector: P2pNcclConnector, kv_role: kv_producer, kv_port: 21001, kv_connector_extra_config: {proxy_ip: 127.0.0.1, proxy_port: "8091"}}`)}
		}, "port_collision", "base_config"},
		{"a base stage's P2pNccl kv_port on the API port", func(t *testing.T) Spec {
			return Spec{Model: seedModel, BaseConfig: talkerKV(t, "{kv_connector: P2pNcclConnector, kv_role: kv_producer, kv_port: 8091}")}
		}, "port_collision", "base_config"},
		{"a kv_port block past 65535", func(t *testing.T) Spec {
			return Spec{Model: seedModel, BaseConfig: talkerKV(t, "{kv_connector: P2pNcclConnector, kv_role: kv_producer, kv_port: 65535}"),
				StageOverrides: map[string]StageOverride{"talker": {EngineArgs: map[string]any{"tensor_parallel_size": int64(2)}}}}
		}, "base_port_invalid", "base_config"},
		{"an override's kv_port on the API port", func(*testing.T) Spec {
			return Spec{Model: seedModel, StageOverrides: map[string]StageOverride{"talker": {EngineArgs: map[string]any{
				"kv_transfer_config": map[string]any{"kv_connector": connectorP2pNccl, "kv_role": "kv_producer", "kv_port": int64(8091)}}}}}
		}, "port_collision", "stage_overrides.talker.engine_args.kv_transfer_config"},
		{"an override's port above 65535", func(*testing.T) Spec {
			return Spec{Model: seedModel, StageOverrides: map[string]StageOverride{"talker": {EngineArgs: map[string]any{
				"kv_transfer_config": map[string]any{"kv_connector_extra_config": map[string]any{"page_port": "99999"}}}}}}
		}, "base_port_invalid", "stage_overrides.talker.engine_args.kv_transfer_config"},
		{"api_port on a port a base stage names", func(t *testing.T) Spec {
			return Spec{Model: seedModel, APIPort: ptr(8998), BaseConfig: talkerKV(t, "{kv_connector: OmniNixlKVConnector, kv_role: kv_consumer, kv_connector_extra_config: {page_port: 8998}}")}
		}, "port_collision", "api_port"},
		{"api_port where the proxy may run", func(*testing.T) Spec {
			s := p2pChild("10.0.0.9", int64(9000))
			s.APIPort = ptr(9000)
			return s
		}, "port_collision", "api_port"},
		{"a connector definition's zmq_port 0", func(t *testing.T) Spec {
			return Spec{Model: seedModel, BaseConfig: withConnectorDef(t, "{zmq_port: 0}")}
		}, "base_port_invalid", "base_config"},
	})
}

// The ports foreign to the allocator are never handed to a stage where
// they may be taken, and are not listed as the plan's own.
func TestForeignPortsAvoided(t *testing.T) {
	two := func(s Spec) Spec { s.Prefill.Host, s.Decode.Host = "10.0.0.1", "10.0.0.2"; return s }
	tests := []struct {
		name  string
		spec  func(*testing.T) Spec
		ports []string
	}{
		{"a local proxy in the range", func(*testing.T) Spec { return p2pChild("127.0.0.1", int64(25202)) },
			[]string{"api=8091", "prefill_side_channel=25201", "prefill_kv_port=25203", "decode_side_channel=25204", "decode_kv_port=25205"}},
		{"a proxy that may be this unnamed host", func(*testing.T) Spec { return p2pChild("10.0.0.9", int64(25202)) },
			[]string{"api=8091", "prefill_side_channel=25201", "prefill_kv_port=25203", "decode_side_channel=25204", "decode_kv_port=25205"}},
		{"a proxy on another machine than the plan's", func(*testing.T) Spec { return two(p2pChild("10.0.0.9", int64(25202))) },
			[]string{"api=8091", "prefill_side_channel=25201", "prefill_kv_port=25202", "decode_side_channel=25201", "decode_kv_port=25202", "omni_master=25203", "edge_0_1=25204"}},
		{"a proxy on decode's host", func(*testing.T) Spec { return two(p2pChild("10.0.0.2", int64(25202))) },
			[]string{"api=8091", "prefill_side_channel=25201", "prefill_kv_port=25202", "decode_side_channel=25201", "decode_kv_port=25203", "omni_master=25203", "edge_0_1=25204"}},
		{"a proxy on a reserved port is no error", func(*testing.T) Spec {
			s := p2pChild("127.0.0.1", int64(25202))
			s.ReservedPorts = []int{25202}
			return s
		}, []string{"api=8091", "prefill_side_channel=25201", "prefill_kv_port=25203", "decode_side_channel=25204", "decode_kv_port=25205"}},
		{"a P2pNccl side of two ranks takes a block", func(*testing.T) Spec {
			s := p2pChild("127.0.0.1", int64(30001))
			s.Prefill.TensorParallelSize, s.Decode.TensorParallelSize = ptr(2), ptr(2)
			return s
		}, []string{"api=8091", "prefill_side_channel=25201", "prefill_kv_port_rank0=25202", "prefill_kv_port_rank1=25203",
			"decode_side_channel=25204", "decode_kv_port_rank0=25205", "decode_kv_port_rank1=25206"}},
		{"a base stage's P2pNccl kv_port", func(t *testing.T) Spec {
			return Spec{Model: seedModel, BaseConfig: talkerKV(t, "{kv_connector: P2pNcclConnector, kv_role: kv_producer, kv_port: 25202}")}
		}, []string{"api=8091", "prefill_side_channel=25201", "decode_side_channel=25203", "omni_master=25204"}},
		{"a base stage's other port", func(t *testing.T) Spec {
			return Spec{Model: seedModel, BaseConfig: talkerKV(t, "{kv_connector: OmniNixlKVConnector, kv_role: kv_consumer, kv_connector_extra_config: {page_port: 25201}}")}
		}, []string{"api=8091", "prefill_side_channel=25202", "decode_side_channel=25203", "omni_master=25204"}},
		{"a base stage's port on another host is free here", func(t *testing.T) Spec {
			s := Spec{Model: seedModel, BaseConfig: talkerKV(t, "{kv_connector: OmniNixlKVConnector, kv_role: kv_consumer, kv_connector_extra_config: {page_port: 25201}}")}
			s.Prefill.Host, s.Decode.Host = "10.0.0.1", "10.0.0.2"
			s.StageOverrides = map[string]StageOverride{"talker": {Host: "10.0.0.2"}, "code2wav": {Host: "10.0.0.2"}}
			return s
		}, []string{"api=8091", "prefill_side_channel=25201", "decode_side_channel=25202", "omni_master=25202", "edge_0_1=25203"}},
		{"a connector definition's port, on every host", func(t *testing.T) Spec {
			s := Spec{Model: seedModel, BaseConfig: withConnectorDef(t, "{zmq_port: 25201}")}
			s.Prefill.Host, s.Decode.Host = "10.0.0.1", "10.0.0.2"
			return s
		}, []string{"api=8091", "prefill_side_channel=25202", "decode_side_channel=25202", "omni_master=25203", "edge_0_1=25204"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustPlan(t, tc.spec(t))
			if got := portList(res); !reflect.DeepEqual(got, tc.ports) {
				t.Errorf("ports = %v\nwant    %v", got, tc.ports)
			}
		})
	}
}

// The proxy_port the plan writes is text, as vLLM joins it to the address;
// the base's and a child's other settings are written as given.
func TestProxyPortWrittenAsText(t *testing.T) {
	for _, port := range []any{int64(30001), "30001", float64(30001)} {
		res := mustPlan(t, p2pChild("10.0.0.9", port))
		cfg := config(t, res.ConfigYAML)
		for _, stage := range []int{0, 1} {
			path := fmt.Sprintf("stage_args.%d.engine_args.kv_transfer_config.kv_connector_extra_config.connectors.1.kv_connector_extra_config.proxy_port", stage)
			if got := digPath(cfg, path); got != "30001" {
				t.Errorf("%T %v: %s = %#v, want \"30001\"", port, port, path, got)
			}
		}
	}
}

// checkForeignPorts plans a pipeline whose P2pNccl child dials a proxy at
// proxyIP:proxyPort and whose talker keeps a kv_transfer_config naming
// basePort under key, and checks the ledger's promise from the outside: no
// listed port leaves 1-65535 or is used twice on a host, none is the
// proxy's on the proxy's host, none is the talker's on the talker's host,
// and the proxy_port written is text. A plan that fails says where.
func checkForeignPorts(t *testing.T, proxyIP string, proxyPort int, key string, basePort int, hosts bool, api int) {
	t.Helper()
	spec := p2pChild(proxyIP, int64(proxyPort))
	spec.APIPort = ptr(api)
	spec.BaseConfig = talkerKV(t, fmt.Sprintf("{kv_connector: P2pNcclConnector, kv_role: kv_producer, %s: %d}", key, basePort))
	talkerHost := ""
	if hosts {
		spec.Prefill.Host, spec.Decode.Host = "10.0.0.1", "10.0.0.2"
		spec.StageOverrides = map[string]StageOverride{"talker": {Host: "10.0.0.1"}}
		talkerHost = "10.0.0.1"
	}
	res, ds := Plan(spec)
	if res == nil {
		for _, d := range ds.Errors() {
			if d.Path == nil || d.Code.String() == "render_failed" {
				t.Fatalf("an error without an attribute path: %s", d)
			}
		}
		return
	}
	seen := map[string]string{}
	for _, p := range res.Ports {
		if p.Port < 1 || p.Port > 65535 {
			t.Errorf("%s = %d is not a port", p.Name, p.Port)
		}
		k := fmt.Sprintf("%s/%d", p.Host, p.Port)
		if other, dup := seen[k]; dup {
			t.Errorf("%s and %s both take %s", other, p.Name, k)
		}
		seen[k] = p.Name
	}
	// Where the proxy listens, as the address says: the dialers' own host
	// for a local address (one host here, or the plan failed), a plan
	// host by its address, any host on an unnamed single host.
	var proxyHosts []string
	switch {
	case proxyIP == "127.0.0.1" || proxyIP == "0.0.0.0" || proxyIP == "localhost":
		proxyHosts = []string{res.Stages[0].Host}
	case !hosts:
		proxyHosts = []string{""}
	case proxyIP == "10.0.0.1" || proxyIP == "10.0.0.2":
		proxyHosts = []string{proxyIP}
	}
	for _, h := range proxyHosts {
		if name, taken := seen[fmt.Sprintf("%s/%d", h, proxyPort)]; taken {
			t.Errorf("%s takes the proxy's port %d on %q", name, proxyPort, h)
		}
	}
	if basePort >= 1 && basePort <= 65535 {
		if name, taken := seen[fmt.Sprintf("%s/%d", talkerHost, basePort)]; taken {
			t.Errorf("%s takes the talker's %s %d on %q", name, key, basePort, talkerHost)
		}
	}
	cfg := config(t, res.ConfigYAML)
	if got := digPath(cfg, "stage_args.0.engine_args.kv_transfer_config.kv_connector_extra_config.connectors.1.kv_connector_extra_config.proxy_port"); got != fmt.Sprint(proxyPort) {
		t.Errorf("proxy_port written as %#v, want the text %q", got, fmt.Sprint(proxyPort))
	}
}

var (
	foreignIPs  = []string{"127.0.0.1", "0.0.0.0", "localhost", "10.0.0.1", "10.0.0.2", "10.0.0.9", "::1", "proxy"}
	foreignKeys = []string{"kv_port", "page_port", "zmq_port"}
)

// TestForeignPortsProperty: the promise over every proxy address, a proxy
// and a base port on each of the ports that matter (the API's, the first
// ones of the range, out of range), each key, one host and two.
func TestForeignPortsProperty(t *testing.T) {
	ports := []int{0, 8091, 25201, 25202, 25203, 25204, 30001, 65535, 70000}
	tried := 0
	for _, ip := range foreignIPs {
		for _, pp := range ports {
			for _, key := range foreignKeys {
				for _, bp := range []int{25201, 25203, 8091, -3} {
					for _, hosts := range []bool{false, true} {
						checkForeignPorts(t, ip, pp, key, bp, hosts, 8091)
						tried++
					}
				}
			}
		}
	}
	t.Logf("%d configurations", tried)
}

// FuzzForeignPorts is the same promise over any proxy port, base port and
// API port.
func FuzzForeignPorts(f *testing.F) {
	f.Add(uint8(0), uint16(25202), uint8(0), uint16(25201), false, uint16(8091))
	f.Add(uint8(3), uint16(8091), uint8(1), uint16(25203), true, uint16(25201))
	f.Fuzz(func(t *testing.T, ip uint8, proxyPort uint16, key uint8, basePort uint16, hosts bool, api uint16) {
		if api == 0 {
			return // api_port is checked by the schema
		}
		checkForeignPorts(t, foreignIPs[int(ip)%len(foreignIPs)], int(proxyPort), foreignKeys[int(key)%len(foreignKeys)], int(basePort), hosts, int(api))
	})
}

// A config's own ports are checked wherever it comes from: the same rule
// for a base config and for a config handed to validate_stage_config
// (Check), P2pNccl's proxy_port as text included.
func TestConfigPortsChecked(t *testing.T) {
	tests := []struct {
		name, base, detail string
	}{
		{"a kv_port above 65535", talkerKV(t, "{kv_connector: P2pNcclConnector, kv_role: kv_producer, kv_port: 70000}"), "kv_transfer_config.kv_port (line"},
		{"a numeric proxy_port", talkerKV(t, "{kv_connector: P2pNcclConnector, kv_role: kv_producer, kv_connector_extra_config: {proxy_ip: 10.0.0.9, proxy_port: 30001}}"), `write it as text: proxy_port: "30001"`},
		{"a child's numeric proxy_port", talkerKV(t, "{kv_connector: MultiConnector, kv_role: kv_producer, kv_connector_extra_config: {connectors: [{kv_connector: P2pNcclConnector, kv_connector_extra_config: {proxy_ip: 10.0.0.9, proxy_port: 30001}}]}}"), "write it as text"},
		{"a connector's zmq_port of 0", withConnectorDef(t, "{zmq_port: 0}"), "connector mine's extra.zmq_port"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for what, ds := range map[string]Diagnostics{"Check": Check([]byte(tc.base)), "Plan": planDiags(Spec{Model: seedModel, BaseConfig: tc.base})} {
				found := false
				for _, d := range ds.Errors() {
					found = found || d.Code.String() == "base_port_invalid" && strings.Contains(d.Detail, tc.detail)
				}
				if !found {
					t.Errorf("%s: no base_port_invalid mentioning %q:\n%s", what, tc.detail, describeDiags(ds))
				}
			}
		})
	}
	// Text that names a port, and text that names none, pass.
	if ds := Check([]byte(talkerKV(t, `{kv_connector: P2pNcclConnector, kv_role: kv_producer, kv_connector_extra_config: {proxy_ip: 10.0.0.9, proxy_port: "30001", rpc_port: auto}}`))); hasCodeAny(ds, "base_port_invalid") {
		t.Errorf("text ports refused: %s", describeDiags(ds))
	}
}

func planDiags(spec Spec) Diagnostics { _, ds := Plan(spec); return ds }
