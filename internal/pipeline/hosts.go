package pipeline

import (
	"net/netip"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
)

// Hosts are IP addresses: vLLM binds and advertises VLLM_HOST_IP and kv_ip
// as given, and a DNS name there is resolved differently by each side, or
// not at all. They are compared as addresses and written in canonical
// form: IPv6 shortened, an IPv4-mapped address as the IPv4 it maps.

// canonicalHost returns the canonical spelling of a host address, or "" and
// why it is not one.
func canonicalHost(h string) (string, string) {
	if strings.Contains(h, "%") {
		return "", "a zoned IPv6 address names an interface of one machine; pass the address other hosts reach it at"
	}
	addr, err := netip.ParseAddr(h)
	if err != nil {
		if ap, perr := netip.ParseAddrPort(h); perr == nil {
			return "", "it holds a port (" + ap.String() + "); pass the address alone, ports come from port_range and api_port"
		}
		if strings.ContainsAny(h, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") && !strings.Contains(h, ":") {
			return "", "it is not an IP address; vLLM needs the machine's private IP for VLLM_HOST_IP and kv_ip, so pass that instead of a DNS name"
		}
		return "", "it is not an IP address; pass one such as 10.0.0.1 or fd00::1"
	}
	addr = addr.Unmap()
	switch {
	case addr.IsUnspecified():
		return "", "it is the wildcard address, which names no machine; pass the machine's own address"
	case addr.IsMulticast() || addr == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "", "it is a multicast or broadcast address, which names no one machine"
	}
	return addr.String(), ""
}

// isLoopback reports whether a canonical host is a loopback address.
func isLoopback(h string) bool {
	addr, err := netip.ParseAddr(h)
	return err == nil && addr.IsLoopback()
}

func checkHost(ds *Diagnostics, path Path, h string) {
	if _, why := canonicalHost(h); why != "" {
		ds.errorf(diagcode.HostInvalid, path, "host is not a usable IP address", "%q: %s.", h, why)
	}
}

// hostOrCanonical is the canonical form of a host that checkHost
// accepted, or the host itself.
func hostOrCanonical(h string) string {
	if c, why := canonicalHost(h); why == "" {
		return c
	}
	return h
}
