package pipeline

import (
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
