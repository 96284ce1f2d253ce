package pipeline

import (
	"strings"
	"testing"
)

// checkHost takes a host only as one IP address a machine can be reached
// at, in the roles and in stage_overrides.
func TestHostDiagnostics(t *testing.T) {
	m := seedModel
	runPlanDiagnostics(t, []planDiagCase{
		{"bad host", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Host: "gpu node"}} }, "host_invalid", "prefill.host"},
		{"host a DNS name", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Host: "gpu-0.internal"}} }, "host_invalid", "prefill.host"},
		{"host with a port", func(*testing.T) Spec { return Spec{Model: m, Decode: RoleSpec{Host: "10.0.0.1:8080"}} }, "host_invalid", "decode.host"},
		{"host not an address", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Host: "999.999.999.999"}} }, "host_invalid", "prefill.host"},
		{"host the IPv4 wildcard", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Host: "0.0.0.0"}} }, "host_invalid", "prefill.host"},
		{"host the IPv6 wildcard", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Host: "::"}} }, "host_invalid", "prefill.host"},
		{"host zoned", func(*testing.T) Spec { return Spec{Model: m, Prefill: RoleSpec{Host: "fe80::1%eth0"}} }, "host_invalid", "prefill.host"},
		{"override host a DNS name", func(*testing.T) Spec {
			return Spec{Model: m, StageOverrides: map[string]StageOverride{"talker": {Host: "talker.local"}}}
		}, "host_invalid", "stage_overrides.talker.host"},
	})
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
