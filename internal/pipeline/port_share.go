package pipeline

import (
	"fmt"
	"slices"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
)

// The kernel's default ephemeral range, net.ipv4.ip_local_port_range
// (Linux Documentation/networking/ip-sysctl.rst, ip_local_port_range: "The
// default values are 32768 and 60999 respectively"). The kernel hands a
// port from it to every outgoing connection and every bind to port 0, and
// vLLM binds such ports itself for its internal sockets (get_open_port binds
// ("", 0): vllm/utils/network_utils.py@28be48fa:190, 215), so a planned port in
// it can be taken before its stage binds it: the stage then fails with
// EADDRINUSE (vllm-omni issue #3794).
const (
	ephemeralFirst = 32768
	ephemeralLast  = 60999
)

// wellKnownPorts are services a GPU host commonly runs, whose port a planned
// listener would take or lose: the IANA Service Name and Port Number
// registry's names, and, where the registry has none, the project's own
// documentation.
var wellKnownPorts = map[int]string{
	22:    "ssh",
	25:    "smtp",
	53:    "DNS",
	80:    "http",
	111:   "rpcbind (sunrpc)",
	443:   "https",
	2049:  "NFS",
	2379:  "etcd's clients (etcd-client)",
	2380:  "etcd's peers (etcd-server)",
	3306:  "MySQL",
	5432:  "PostgreSQL",
	6379:  "Redis",
	6443:  "the Kubernetes API server (kubernetes.io, Ports and Protocols)",
	10250: "the kubelet (kubernetes.io, Ports and Protocols)",
	29500: "torch.distributed's default MASTER_PORT (torchrun --master-port)",
}

// warnSharedPorts warns where the plan may hand out, or the user gave, a
// port the machine hands to others: one in the kernel's default ephemeral
// range, or a well-known service's. Warnings, not errors: a host may have
// moved its ephemeral range (or reserved the ports in
// net.ipv4.ip_local_reserved_ports) or run none of those services.
func warnSharedPorts(s Spec, ds *Diagnostics) {
	if r := s.PortRange; r != nil && r.First >= 1 && r.Last <= 65535 && r.First <= r.Last {
		path := AttrPath("port_range")
		if lo, hi := max(r.First, ephemeralFirst), min(r.Last, ephemeralLast); lo <= hi {
			ds.warnf(diagcode.PortEphemeral, path, "port_range is inside the kernel's ephemeral range",
				"%d-%d of port_range %d-%d is in Linux's default net.ipv4.ip_local_port_range, %d-%d, from which the kernel hands ports to outgoing connections and to binds of port 0, as vLLM makes for its own sockets: a planned port there can be taken before its stage starts, which then fails with EADDRINUSE. Move port_range below %d (the default is %d-%d), or, where this host's range differs or lists these ports in net.ipv4.ip_local_reserved_ports, ignore this.",
				lo, hi, r.First, r.Last, ephemeralFirst, ephemeralLast, ephemeralFirst, DefaultPortRangeFirst, DefaultPortRangeLast)
		}
		var covered []string
		for _, port := range sortedKeys(wellKnownPorts) {
			if port >= r.First && port <= r.Last && !slices.Contains(s.ReservedPorts, port) {
				covered = append(covered, fmt.Sprintf("%d (%s)", port, wellKnownPorts[port]))
			}
		}
		if len(covered) > 0 {
			ds.warnf(diagcode.PortWellKnown, path, "port_range covers a well-known service's port",
				"port_range %d-%d holds %s: the plan may hand it to a stage, which then fails to bind, or takes it from the service. List it in reserved_ports, which the plan keeps free, or move port_range.",
				r.First, r.Last, strings.Join(covered, ", "))
		}
	}
	for _, given := range []struct {
		path Path
		v    *int
	}{
		{AttrPath("api_port"), s.APIPort},
		{AttrPath(prefillKey, "bootstrap_port"), s.Prefill.BootstrapPort},
		{AttrPath(decodeKey, "bootstrap_port"), s.Decode.BootstrapPort},
	} {
		if given.v == nil {
			continue
		}
		port, name := *given.v, given.path.String()
		if port >= ephemeralFirst && port <= ephemeralLast {
			ds.warnf(diagcode.PortEphemeral, given.path, name+" is inside the kernel's ephemeral range",
				"%d is in Linux's default net.ipv4.ip_local_port_range, %d-%d, from which the kernel hands ports to outgoing connections and to binds of port 0, as vLLM makes for its own sockets: it can be taken before the stage binds it, which then fails with EADDRINUSE. Choose a port below %d, or, where this host's range differs or lists it in net.ipv4.ip_local_reserved_ports, ignore this.",
				port, ephemeralFirst, ephemeralLast, ephemeralFirst)
		}
		if svc, ok := wellKnownPorts[port]; ok {
			ds.warnf(diagcode.PortWellKnown, given.path, name+" is a well-known service's port",
				"%d is the port of %s: where the host runs it, the stage fails to bind, or takes the port from it. Choose another port unless this host runs no such service.", port, svc)
		}
	}
}
