package pipeline

import (
	"strings"
	"testing"
)

// Ports the machine hands to others: a port_range in the kernel's default
// ephemeral range or over a well-known service's port, and a port the user
// gives there, plan with a warning at the attribute that names the range or
// the service; before, they planned with no word.
func TestPortsTheMachineHandsToOthers(t *testing.T) {
	m := seedModel
	for _, tc := range []struct {
		name string
		spec Spec
		code string // "" for no such warning
		path string
		says []string
	}{
		{"the default range", Spec{Model: m}, "", "", nil},
		{"a range below the ephemeral one", Spec{Model: m, PortRange: &PortRange{First: 30000, Last: 32767}}, "", "", nil},
		{"a range above it", Spec{Model: m, PortRange: &PortRange{First: 61000, Last: 61100}}, "", "", nil},
		{"a range inside it", Spec{Model: m, PortRange: &PortRange{First: 40000, Last: 40100}}, "port_ephemeral", "port_range",
			[]string{"40000-40100 of port_range 40000-40100", "net.ipv4.ip_local_port_range, 32768-60999", "EADDRINUSE", "below 32768", "net.ipv4.ip_local_reserved_ports"}},
		{"a range across its start", Spec{Model: m, PortRange: &PortRange{First: 32000, Last: 32768}}, "port_ephemeral", "port_range", []string{"32768-32768 of port_range 32000-32768"}},
		{"a range across its end", Spec{Model: m, PortRange: &PortRange{First: 60999, Last: 61100}}, "port_ephemeral", "port_range", []string{"60999-60999 of"}},
		{"a range over ssh", Spec{Model: m, PortRange: &PortRange{First: 20, Last: 120}}, "port_well_known", "port_range",
			[]string{"port_range 20-120 holds 22 (ssh), 25 (smtp), 53 (DNS), 80 (http), 111 (rpcbind (sunrpc))", "reserved_ports"}},
		{"a range over PostgreSQL", Spec{Model: m, PortRange: &PortRange{First: 5400, Last: 5500}}, "port_well_known", "port_range", []string{"5432 (PostgreSQL)"}},
		{"a range over torch.distributed's port", Spec{Model: m, PortRange: &PortRange{First: 29400, Last: 29600}}, "port_well_known", "port_range", []string{"29500 (torch.distributed"}},
		{"well-known ports reserved", Spec{Model: m, PortRange: &PortRange{First: 5400, Last: 5500}, ReservedPorts: []int{5432}}, "", "", nil},
		{"api_port inside the ephemeral range", Spec{Model: m, APIPort: ptr(45000)}, "port_ephemeral", "api_port",
			[]string{"45000 is in Linux's default net.ipv4.ip_local_port_range, 32768-60999", "below 32768"}},
		{"a bootstrap_port inside it", Spec{Model: m, Connector: ConnectorSpec{Name: "MooncakeConnector"}, Prefill: RoleSpec{BootstrapPort: ptr(50000)}}, "port_ephemeral", "prefill.bootstrap_port", []string{"50000 is in"}},
		{"api_port 22", Spec{Model: m, APIPort: ptr(22)}, "port_well_known", "api_port", []string{"22 is the port of ssh"}},
		{"api_port 8091", Spec{Model: m, APIPort: ptr(8091)}, "", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := Plan(tc.spec)
			var found *Diagnostic
			for i, d := range ds {
				if d.Code.String() == "port_ephemeral" || d.Code.String() == "port_well_known" {
					if tc.code == "" {
						t.Errorf("unexpected %s", d)
					}
					if d.Code.String() == tc.code && d.Path.String() == tc.path {
						found = &ds[i]
					}
				}
			}
			if tc.code == "" {
				return
			}
			if found == nil {
				t.Fatalf("no %s at %s:\n%s", tc.code, tc.path, describeDiags(ds))
			}
			if found.Severity != SeverityWarning {
				t.Errorf("%s is not a warning", found)
			}
			for _, s := range tc.says {
				if !strings.Contains(found.Detail, s) {
					t.Errorf("%s\ndoes not say %q", found, s)
				}
			}
		})
	}
}
