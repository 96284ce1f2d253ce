package pipeline

import (
	"math"
	"net/netip"
	"strconv"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/kvconnector"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// p2pProxy is where a class dials its proxy (kvconnector.Entry.ProxyPort):
// the proxy the user runs beside the pipeline, which listens on port at
// ip. The class joins the two as text, proxy_ip + ":" + proxy_port (its
// TextPorts), so the address cannot be IPv6, which would need brackets.
type p2pProxy struct {
	name             string // the proxy's port in the ledger (Entry.ProxyPort)
	ip               string
	port             int
	ipPath, portPath Path
}

// readProxy checks the proxy_ip and proxy_port of a class that dials a
// proxy (at path, an extra_config mapping). nil when either is missing,
// which ConnectorExtraMissing reports, or wrong, reported here.
func readProxy(ds *Diagnostics, e kvconnector.Entry, extra map[string]any, path Path) *p2pProxy {
	ipV, hasIP := extra["proxy_ip"]
	portV, hasPort := extra["proxy_port"]
	ok := true
	ip, _ := ipV.(string)
	if hasIP && ipV != nil && !proxyAddress(ip) {
		ds.errorf(diagcode.ConnectorProxyInvalid, path.Attr("proxy_ip"), "proxy_ip is not an IPv4 address",
			"%s: %s dials proxy_ip:proxy_port, joined as text without brackets; give the IPv4 address of the machine that runs the proxy (or localhost).", describeValue(ipV), e.Name)
		ok = false
	}
	port, portOK := proxyPort(portV)
	if hasPort && portV != nil && !portOK {
		ds.errorf(diagcode.ConnectorProxyInvalid, path.Attr("proxy_port"), "proxy_port is not a port",
			"%s: give the port the proxy listens on, 1-65535, as a number or its text.", describeValue(portV))
		ok = false
	}
	if !ok || ipV == nil || portV == nil {
		return nil
	}
	return &p2pProxy{name: e.ProxyPort, ip: ip, port: port, ipPath: path.Attr("proxy_ip"), portPath: path.Attr("proxy_port")}
}

// proxyAddress reports whether a proxy_ip is one vLLM can join with a
// port: an IPv4 address or localhost.
func proxyAddress(ip string) bool {
	if ip == "localhost" {
		return true
	}
	addr, err := netip.ParseAddr(ip)
	return err == nil && addr.Is4()
}

// proxyPort reads a proxy_port given as a whole number or its decimal text.
func proxyPort(v any) (int, bool) {
	var n float64
	switch x := v.(type) {
	case int64:
		n = float64(x)
	case int:
		n = float64(x)
	case float64:
		n = x
	case string:
		if !stageconfig.AllDigits(x) || len(x) > 5 {
			return 0, false
		}
		i, _ := strconv.Atoi(x)
		n = float64(i)
	default:
		return 0, false
	}
	if n != math.Trunc(n) || n < 1 || n > 65535 {
		return 0, false
	}
	return int(n), true
}

// describeValue quotes a string and names any other value's type, for the
// errors on proxy settings.
func describeValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return describeType(v)
}

// extraValue is the value the plan writes for an extra_config key of a
// connector class: a port the class reads as text (Entry.TextPorts) as
// text; everything else as given.
func extraValue(e kvconnector.Entry, key string, v any) any {
	if _, text := e.TextPorts[key]; text {
		if port, ok := proxyPort(v); ok {
			return strconv.Itoa(port)
		}
	}
	return v
}

// proxyHost says where a proxy at ip listens, for the stages that dial it
// (dialers, their hosts): known is true with host one of the plan's hosts
// when the address says which; on another machine, or when a single host
// that names no address may or may not be the proxy's (maybe), it is not
// in any host's ledger. across is true when a loopback or unspecified
// address is dialed from different hosts: each would reach its own.
func proxyHost(hosts []string, ip string, dialers []string) (host string, known, maybe, across bool) {
	local := ip == "localhost"
	if addr, err := netip.ParseAddr(ip); err == nil && (addr.IsLoopback() || addr.IsUnspecified()) {
		local = true
	}
	if local {
		for _, d := range dialers[1:] {
			if d != dialers[0] {
				return "", false, false, true
			}
		}
		return dialers[0], true, false, false
	}
	canonical := hostOrCanonical(ip)
	for _, h := range hosts {
		if h != "" && h == canonical {
			return h, true, false, false
		}
	}
	if len(hosts) == 1 && hosts[0] == "" {
		return "", false, true, false
	}
	return "", false, false, false
}
