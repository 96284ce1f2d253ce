package pipeline

import (
	"fmt"
	"slices"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/kvconnector"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// The port ledger holds, per host, every port the plan writes or accepts,
// not only those it allocates: a port is 1-65535, and used once on its
// host. Beside the API port, the given bootstrap ports and the allocated
// ones (allocatePorts), it holds the ports the plan accepts from elsewhere:
//
//   - the proxy a class dials (kvconnector.Entry.ProxyPort; in
//     connector.extra_config, or a MultiConnector child's
//     kv_connector_extra_config): on the host its proxy_ip names, a port
//     no stage may take there, nor the API;
//   - the ports a base config (or a stage override's engine_args) writes in
//     the kv_transfer_config of a stage outside the PD pair, which the plan
//     keeps as written: the block of a port its class binds once per worker
//     rank (Entry.RankPorts) is a listener of the stage's host, a
//     proxy_port its proxy's, and any other setting named like a port (but
//     one that names the API port, Entry.APIPort) is kept out of what the
//     allocator hands out there and refused as a given port there (the
//     config does not say whether the stage binds or dials it);
//   - the ports of the base's connector definitions (zmq_port, ...), the
//     same on every host: the definition does not say which stage binds
//     them.
//
// The split stage's own kv_transfer_config is rewritten for the PD pair's
// connector, which reads none of the base's ports there.

// foreignPorts records those ports, of the base, the layout's stages and
// the proxy the pair's connector dials (nil for none): it returns the ones
// the ledger holds as listeners of a host (claimed after the given ports,
// so a clash names them), and marks the others on t as ports the
// allocator avoids.
func foreignPorts(ds *Diagnostics, t *portTable, base baseConfig, lay stageLayout, proxy *p2pProxy) []*portRequest {
	var out []*portRequest
	if pr := proxy; pr != nil {
		pre, dec := lay.pdPair()
		out = append(out, proxyRequest(ds, t, lay.hosts, pr.ip, pr.port, pr.ipPath, pr.portPath, pr.name, []string{pre.host, dec.host})...)
	}
	for _, s := range lay.stages {
		if s.role == RoleStage {
			out = append(out, stagePorts(ds, t, lay.hosts, base.path, s)...)
		}
	}
	for _, def := range base.doc.ConnectorDefinitions() {
		for _, ps := range def.Settings.Ports() {
			what := fmt.Sprintf("connector %s's %s", def.Name, ps.Path)
			if checkBasePort(ds, base.path, what, ps) && t.avoidAll[ps.Port] == "" {
				t.avoidAll[ps.Port] = "the base config's " + what
			}
		}
	}
	return out
}

// proxyRequest puts a proxy's port in the ledger of its host among the
// plan's hosts, or keeps the allocator off it where the proxy may run.
func proxyRequest(ds *Diagnostics, t *portTable, hosts []string, ip string, port int, ipPath, path Path, name string, dialers []string) []*portRequest {
	host, known, maybe, across := proxyHost(hosts, ip, dialers)
	switch {
	case across:
		ds.errorf(diagcode.ConnectorProxyLoopback, ipPath, "every side would dial a proxy on its own host",
			"%s: proxy_ip %q is this machine's own address, but the stages that dial the proxy run on different hosts (%s), so each would reach a proxy of its own; give the address of the one machine that runs the proxy.", name, ip, joinHosts(dialers))
	case known:
		return []*portRequest{{name: name, host: host, count: 1, given: &port, path: path, out: new(int), external: true}}
	case maybe:
		t.avoidOn(host, port, fmt.Sprintf("%s's, at %s, which may be this machine (no stage names its address; give prefill.host and decode.host if it is another)", name, ip))
	}
	return nil
}

// stagePorts reads the ports of a stage outside the PD pair from the
// kv_transfer_config the plan writes for it: the base's, with the stage
// override's engine_args merged in. hosts are the plan's, where a proxy
// the stage dials may run.
func stagePorts(ds *Diagnostics, t *portTable, hosts []string, basePath Path, s *plannedStage) []*portRequest {
	var override any
	path := basePath
	if s.override != nil {
		if v, ok := s.override.EngineArgs["kv_transfer_config"]; ok {
			override, path = v, s.path.Attr("engine_args").Attr("kv_transfer_config")
		}
	}
	kv, err := s.base.stage.MergedEngine("kv_transfer_config", override)
	if err != nil || !kv.IsMapping() {
		return nil // apply reports a value it cannot merge
	}
	var out []*portRequest
	for _, ps := range kv.Ports() {
		what := fmt.Sprintf("%s's kv_transfer_config.%s", s.describe(), ps.Path)
		if !checkBasePort(ds, path, what, ps) {
			continue
		}
		switch key := lastKey(ps.Path); {
		case key == "proxy_port":
			ip, _ := ps.In.String("proxy_ip")
			out = append(out, proxyRequest(ds, t, hosts, ip, ps.Port, path, path, what, []string{s.host})...)
		case rankPort(ps.Connector, key):
			port, count := ps.Port, sideOf(s).WorkerRanks()
			if port+count-1 > 65535 {
				ds.errorf(diagcode.BasePortInvalid, path, "a port in the config is not a port",
					"%s (line %d) is %d, and %s binds it plus each of the stage's %d worker ranks, up to %d; use a port at most %d.", what, ps.Line, port, ps.Connector, count, port+count-1, 65536-count)
				continue
			}
			out = append(out, &portRequest{name: what, host: s.host, count: count, given: &port, path: path, out: new(int), external: true})
		case apiPortKey(key):
			// A class's name for the API port (kvconnector.Entry.APIPort).
		default:
			t.avoidOn(s.host, ps.Port, "the base config's "+what)
		}
	}
	return out
}

// apiPortKey reports whether key is where a class reads the API port.
func apiPortKey(key string) bool {
	for _, e := range kvconnector.Entries {
		if e.APIPort != "" && e.APIPort == key {
			return true
		}
	}
	return false
}

// rankPort reports whether class binds key's port once per worker rank
// (kvconnector.Entry.RankPorts).
func rankPort(class, key string) bool {
	e, _ := kvconnector.Lookup(class)
	return slices.Contains(e.RankPorts, key)
}

// checkBasePort reports a port setting that is a number but no port; true
// when it is a port to record.
func checkBasePort(ds *Diagnostics, path Path, what string, ps stageconfig.PortSetting) bool {
	if !ps.Number {
		return false
	}
	if ps.Port < 1 || ps.Port > 65535 {
		shown := fmt.Sprint(ps.Port)
		if ps.Port < 0 {
			shown = "a number beyond any port"
		}
		ds.errorf(diagcode.BasePortInvalid, path, "a port in the config is not a port",
			"%s (line %d) is %s; use a port in 1-65535.", what, ps.Line, shown)
		return false
	}
	return true
}

func lastKey(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '.' {
			return path[i+1:]
		}
	}
	return path
}

func joinHosts(hs []string) string {
	out := ""
	for i, h := range hs {
		if i > 0 {
			out += " and "
		}
		out += hostOrLocal(h)
	}
	return out
}

// checkConfigPorts checks the ports a config writes itself, in every
// stage's kv_transfer_config and every connector definition, wherever the
// config comes from (a base config, or one handed to validate_stage_config):
// each must be a port, and one its class reads as text text
// (kvconnector.Entry.TextPorts).
func checkConfigPorts(g *graph, ds *Diagnostics, path Path) {
	check := func(what string, ps stageconfig.PortSetting) {
		if !ps.Number {
			return
		}
		if ps.Port < 1 || ps.Port > 65535 {
			shown := fmt.Sprint(ps.Port)
			if ps.Port < 0 {
				shown = "a number beyond any port"
			}
			ds.errorf(diagcode.BasePortInvalid, path, "a port in the config is not a port",
				"%s (line %d) is %s; use a port in 1-65535.", what, ps.Line, shown)
			return
		}
		if ps.Text {
			return
		}
		key := lastKey(ps.Path)
		if e, _ := kvconnector.Lookup(ps.Connector); e.TextPorts[key] != "" {
			ds.errorf(diagcode.BasePortInvalid, path, ps.Connector+"'s "+key+" must be text",
				"%s (line %d) is the number %d, but %s; write it as text: %s: \"%d\".", what, ps.Line, ps.Port, e.TextPorts[key], key, ps.Port)
		}
	}
	for _, s := range g.stages {
		for _, ps := range s.stage.KVTransferSettings().Ports() {
			check(fmt.Sprintf("%s's kv_transfer_config.%s", s.stage.Describe(), ps.Path), ps)
		}
	}
	for _, def := range g.doc.ConnectorDefinitions() {
		for _, ps := range def.Settings.Ports() {
			check(fmt.Sprintf("connector %s's %s", def.Name, ps.Path), ps)
		}
	}
}
