package pipeline

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/kvconnector"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

const (
	connectorMulti = kvconnector.Multi
	kvBoth         = "kv_both"
)

// connector is the PD pair's KV connector as a plan uses it: one class's
// entry (kvconnector.Entries), or a MultiConnector of children, each a
// class's entry with the settings of its own the user gave, and the
// proxy one of them dials. What a class needs is read from its entry.
// Every connector pairs equal tensor-parallel sizes only: vLLM alone would
// let NIXL decode run more ranks, but vllm-omni's PD validator refuses
// any difference (releases.CheckEqualTP).
type connector struct {
	// entry is the class's entry; a MultiConnector's holds its name alone
	// (its children have theirs).
	entry kvconnector.Entry
	// children are set on a MultiConnector.
	children []childConnector
	// proxy is the proxy the class, or a child, dials (Entry.ProxyPort);
	// nil without one (or with one set wrong, which is reported).
	proxy *p2pProxy
	// childrenRefused is true when a MultiConnector's children, or one of
	// them, were refused (no list, an entry that is not an object, a class
	// the provider does not wire): the children left are not the ones the
	// user meant, so what follows from them, the handoff gate, is not
	// judged.
	childrenRefused bool
}

type childConnector struct {
	entry kvconnector.Entry
	extra map[string]any // the child's own entry from extra_config.connectors
}

// name is connector.name as planned.
func (c connector) name() string { return c.entry.Name }

func (c connector) multi() bool { return c.entry.Name == connectorMulti }

// entries are the classes' entries the pair loads: the connector's, or a
// MultiConnector's children's.
func (c connector) entries() []kvconnector.Entry {
	if !c.multi() {
		return []kvconnector.Entry{c.entry}
	}
	out := make([]kvconnector.Entry, len(c.children))
	for i, ch := range c.children {
		out[i] = ch.entry
	}
	return out
}

// classes are the KV connector classes the PD pair loads: the connector
// and a MultiConnector's children.
func (c connector) classes() []string {
	out := []string{c.entry.Name}
	for _, ch := range c.children {
		out = append(out, ch.entry.Name)
	}
	return out
}

// allowsBoth reports whether both sides may take kv_role kv_both: every
// class the pair loads allows it.
func (c connector) allowsBoth() bool {
	for _, e := range c.entries() {
		if !e.AllowsBoth {
			return false
		}
	}
	return true
}

// takesProtocol reports whether connector.protocol and device_name apply:
// a class the pair loads takes them.
func (c connector) takesProtocol() bool {
	for _, e := range c.entries() {
		if e.TakesProtocol {
			return true
		}
	}
	return false
}

// sidePort is a port (or a block of ports) one side of the pair listens
// on, and the MultiConnector child that listens on it ("" for a connector
// alone). The one marked Handshake is the port its peer dials for the KV
// handoff, set by <side>.bootstrap_port (handshakePort chooses among a
// MultiConnector's children).
type sidePort struct {
	kvconnector.SidePort
	class string
}

// sidePorts lists the ports one side listens on: its class's, or every
// child's, each child's own handshake port marked.
func (c connector) sidePorts(s *plannedStage) []sidePort {
	side := sideOf(s)
	var out []sidePort
	for _, e := range c.entries() {
		class := ""
		if c.multi() {
			class = e.Name
		}
		for _, sp := range e.SidePorts(side) {
			out = append(out, sidePort{SidePort: sp, class: class})
		}
	}
	return out
}

// lookupConnector is the entry of a class the provider wires.
func lookupConnector(name string) (connector, bool) {
	e, ok := kvconnector.Lookup(name)
	return connector{entry: e}, ok
}

// sideOf is what an entry sees of one side of the PD pair.
func sideOf(s *plannedStage) kvconnector.Side {
	return kvconnector.Side{Key: s.key, Prefill: s.role == RolePrefill, Host: s.host,
		TP: s.par.tp, PP: s.par.pp, DP: s.par.dp, Replicas: s.par.replicas, Ports: s.ports}
}

// wireContext is what an entry's Wire reads of the planned stages and
// ports, but the side it wires (wiringFor sets it).
func wireContext(c ConnectorSpec, planned stageLayout, ports portPlan) kvconnector.Context {
	_, dec := planned.pdPair()
	return kvconnector.Context{
		Settings: connectorSettings(c), Decode: sideOf(dec),
		Head: planned.head(), MultiHost: planned.multiHost(), APIPort: ports.api, HeadPorts: ports.head,
	}
}

func connectorSettings(c ConnectorSpec) kvconnector.Settings {
	return kvconnector.Settings{Protocol: c.Protocol, DeviceName: c.DeviceName}
}

// memlock reports whether a class the pair loads registers memory with an
// RDMA NIC under the settings c (kvconnector.Entry.Memlock).
func (c connector) memlock(settings kvconnector.Settings) bool {
	for _, e := range c.entries() {
		if e.Memlock != nil && e.Memlock(settings) {
			return true
		}
	}
	return false
}

// entryNames are the classes of the entries, sorted.
func entryNames() []string {
	names := make([]string, len(kvconnector.Entries))
	for i, e := range kvconnector.Entries {
		names[i] = e.Name
	}
	sort.Strings(names)
	return names
}

// connectorNames are the names connector.name takes, sorted.
func connectorNames() string {
	names := append(entryNames(), connectorMulti)
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// transportModule is the package a connector class needs beyond vLLM, ""
// for none or a class the table does not wire.
func transportModule(name string) string {
	e, _ := kvconnector.Lookup(name)
	return e.Transport
}

func hostOrLocal(h string) string {
	if h == "" {
		return "localhost"
	}
	return h
}

// Keys of a MultiConnector child's entry the provider writes itself.
var childManagedKeys = map[string]string{
	"kv_role":          "the PD pair (prefill produces, decode consumes; connector.kv_both for both)",
	"kv_rank":          "the PD pair (prefill 0, decode 1)",
	"kv_parallel_size": "the PD pair (2)",
	"kv_port":          "port_range",
	"kv_ip":            "the stages' hosts",
}

// Extra-config keys the provider writes itself from typed attributes:
// every entry's ManagedExtra.
var managedExtraKeys = func() map[string]string {
	out := map[string]string{}
	for _, e := range kvconnector.Entries {
		for k, attr := range e.ManagedExtra {
			out[k] = attr
		}
	}
	return out
}()

// chooseConnector resolves connector.name and checks the settings that go
// with it.
func chooseConnector(c ConnectorSpec, ds *Diagnostics) connector {
	path := AttrPath("connector")
	name := c.Name
	if name == "" {
		name = DefaultConnector
	}
	conn, ok := lookupConnector(name)
	if name == connectorMulti {
		conn, ok = multiConnector(c.ExtraConfig, path, ds), true
	}
	if !ok {
		ds.errorf(diagcode.ConnectorUnknown, path.Attr("name"), "unknown KV connector",
			"%q is not a connector this provider wires; use one of %s.", name, connectorNames())
		conn, _ = lookupConnector(DefaultConnector)
		return conn
	}
	// protocol and device_name apply to a class that takes them, alone or
	// as a MultiConnector child.
	takesProtocol := conn.takesProtocol()
	if c.Protocol != "" {
		switch {
		case !takesProtocol:
			ds.errorf(diagcode.ConnectorProtocolUnsupported, path.Attr("protocol"), "protocol applies to "+protocolClasses()+" only",
				"%s chooses its transport itself; remove protocol.", name)
		case c.Protocol != "tcp" && c.Protocol != "rdma":
			ds.errorf(diagcode.ConnectorProtocolUnknown, path.Attr("protocol"), "unknown protocol", "%q: use \"tcp\" or \"rdma\".", c.Protocol)
		}
	}
	if c.DeviceName != "" && (!takesProtocol || c.Protocol != "rdma") {
		ds.errorf(diagcode.ConnectorDeviceNameUnused, path.Attr("device_name"), "device_name needs "+protocolClasses()+" over rdma",
			"device_name names the RDMA NIC; set protocol = \"rdma\" with %s, or remove device_name.", protocolClasses())
	}
	if c.KVBoth && !conn.allowsBoth() {
		ds.errorf(diagcode.ConnectorKVBothUnsupported, path.Attr("kv_both"), "this connector needs a producer and a consumer",
			"%s does not take kv_role kv_both; remove kv_both.", name)
	}
	for _, k := range sortedStrings(c.ExtraConfig) {
		if attr, managed := managedExtraKeys[k]; managed {
			ds.errorf(diagcode.ConnectorExtraManagedKey, path.Attr("extra_config").Attr(k), "this connector setting has its own attribute",
				"set %s instead of extra_config.%s.", attr, k)
		}
	}
	for _, k := range conn.entry.RequiredExtra {
		if v, ok := c.ExtraConfig[k]; !ok || v == nil {
			ds.errorf(diagcode.ConnectorExtraMissing, path.Attr("extra_config"), "the connector needs a setting",
				"%s needs extra_config.%s (its proxy, which you run alongside the pipeline): set it to where that proxy listens.", name, k)
		}
	}
	if conn.entry.ProxyPort != "" {
		conn.proxy = readProxy(ds, conn.entry, c.ExtraConfig, path.Attr("extra_config"))
	}
	checkEngineArgs(ds, path.Attr("extra_config"), c.ExtraConfig, nil)
	checkNoInterpolation(ds, path.Attr("device_name"), c.DeviceName)
	return conn
}

// multiConnector builds a MultiConnector from the children listed in
// extra_config.connectors, each one a connector the provider wires.
func multiConnector(extra map[string]any, path Path, ds *Diagnostics) connector {
	m := connector{entry: kvconnector.Entry{Name: connectorMulti}}
	list, ok := extra["connectors"].([]any)
	cpath := path.Attr("extra_config").Attr("connectors")
	if !ok || len(list) == 0 {
		ds.errorf(diagcode.MultiConnectorChildren, cpath, "MultiConnector needs its connectors",
			"list them in extra_config.connectors, such as %s.", childrenExample())
		m.childrenRefused = true
		return m
	}
	seen := map[string]bool{}
	for i, e := range list {
		entry, isObject := e.(map[string]any)
		if !isObject {
			ds.errorf(diagcode.MultiConnectorChildren, cpath.Index(i), "each child connector must be an object with kv_connector",
				"this entry is %s; write it as %s.", describeType(e), childExample(e))
			m.childrenRefused = true
			continue
		}
		name, _ := entry["kv_connector"].(string)
		child, known := kvconnector.Lookup(name)
		switch {
		case !known:
			ds.errorf(diagcode.MultiConnectorChildren, cpath.Index(i).Attr("kv_connector"), "unknown child connector",
				"%q: set each child's kv_connector to one of %s (not MultiConnector).", name, strings.Join(entryNames(), ", "))
			m.childrenRefused = true
			continue
		case seen[name]:
			ds.errorf(diagcode.MultiConnectorChildren, cpath.Index(i), "a child connector is listed twice", "%s appears more than once; list each connector once.", name)
			continue
		}
		seen[name] = true
		rest := map[string]any{}
		for _, k := range sortedStrings(entry) {
			v := entry[k]
			if k == "kv_connector" {
				continue
			}
			if attr, managed := childManagedKeys[k]; managed {
				ds.errorf(diagcode.MultiConnectorChildManagedKey, cpath.Index(i).Attr(k), "the provider sets this for every child",
					"%s.%s is computed from %s; remove it from the child.", name, k, attr)
				continue
			}
			if k == "kv_connector_extra_config" {
				sub, _ := v.(map[string]any)
				for _, ek := range sortedStrings(sub) {
					if attr, managed := managedExtraKeys[ek]; managed {
						ds.errorf(diagcode.MultiConnectorChildManagedKey, cpath.Index(i).Attr(k).Attr(ek), "the provider sets this for every child",
							"%s's %s is computed from %s; remove it from the child.", name, ek, attr)
					}
				}
			}
			rest[k] = v
		}
		// A child's own settings live in its entry's
		// kv_connector_extra_config, where the child reads them.
		childExtra, _ := rest["kv_connector_extra_config"].(map[string]any)
		for _, k := range child.RequiredExtra {
			if v, ok := childExtra[k]; !ok || v == nil {
				ds.errorf(diagcode.ConnectorExtraMissing, cpath.Index(i), "the connector needs a setting",
					"%s needs kv_connector_extra_config.%s in its entry (its proxy, which you run alongside the pipeline): set it to where that proxy listens.", name, k)
			}
		}
		if child.ProxyPort != "" {
			m.proxy = readProxy(ds, child, childExtra, cpath.Index(i).Attr("kv_connector_extra_config"))
		}
		m.children = append(m.children, childConnector{entry: child, extra: rest})
	}
	return m
}

// childrenExample is how MultiConnector's children are written: the
// default class, and the first other in table order.
func childrenExample() string {
	other := ""
	for _, e := range kvconnector.Entries {
		if e.Name != DefaultConnector {
			other = e.Name
			break
		}
	}
	return fmt.Sprintf("[{ kv_connector = %q }, { kv_connector = %q }]", DefaultConnector, other)
}

// childExample is how an entry of connectors is written, for a value that
// is not one: the value itself as kv_connector when it is text (a class
// name written alone), the default class otherwise.
func childExample(v any) string {
	name, ok := v.(string)
	if !ok || name == "" {
		name = DefaultConnector
	}
	return fmt.Sprintf("{ kv_connector = %q }", name)
}

// kvRoles returns the prefill and decode kv_role values.
func kvRoles(both bool) (string, string) {
	if both {
		return kvBoth, kvBoth
	}
	return kvProducer, kvConsumer
}

// wiringFor collects the kv_transfer_config settings, extra config and
// environment of one side of the pair over conn, configured by c; ctx is
// what the entries read of the plan (wireContext).
func wiringFor(c ConnectorSpec, conn connector, ctx kvconnector.Context, s *plannedStage) kvconnector.Wiring {
	ctx.Side = sideOf(s)
	w := kvconnector.Wiring{KV: []kvconnector.KV{
		{Key: "kv_connector", Value: quoted(conn.name())},
		{Key: "kv_role", Value: quoted(*s.kvRole)},
		{Key: "kv_rank", Value: s.kvRank},
		{Key: "kv_parallel_size", Value: 2},
	}}
	if ctx.MultiHost {
		// Each side binds its KV endpoints on kv_ip, so it is the side's own
		// address, the one its peer on the other host dials.
		w.KV = append(w.KV, kvconnector.KV{Key: "kv_ip", Value: quoted(s.host)})
	}
	if !conn.multi() {
		conn.entry.Wire(ctx, &w)
		for _, k := range sortedStrings(c.ExtraConfig) {
			w.Extra = append(w.Extra, kvconnector.KV{Key: k, Value: extraValue(conn.entry, k, c.ExtraConfig[k])})
		}
		return w
	}
	children := make([]any, 0, len(conn.children))
	for _, child := range conn.children {
		entry, env := childWiring(child, ctx, *s.kvRole)
		children = append(children, entry)
		w.Env = append(w.Env, env...)
	}
	w.Extra = append(w.Extra, kvconnector.KV{Key: "connectors", Value: children})
	for _, k := range sortedStrings(c.ExtraConfig) {
		if k != "connectors" {
			w.Extra = append(w.Extra, kvconnector.KV{Key: k, Value: c.ExtraConfig[k]})
		}
	}
	return w
}

// childWiring is a MultiConnector child's entry in the extra config of
// one side (ctx.Side), with its own settings, and the environment it adds
// to the side's.
func childWiring(child childConnector, ctx kvconnector.Context, kvRole string) (map[string]any, []kvconnector.KV) {
	var cw kvconnector.Wiring
	child.entry.Wire(ctx, &cw)
	entry := map[string]any{"kv_connector": child.entry.Name, "kv_role": kvRole}
	for _, e := range cw.KV {
		entry[e.Key] = plainValue(e.Value)
	}
	extra := map[string]any{}
	for _, e := range cw.Extra {
		extra[e.Key] = plainValue(e.Value)
	}
	for k, v := range child.extra {
		if m, ok := v.(map[string]any); ok && k == "kv_connector_extra_config" {
			for ek, ev := range m {
				extra[ek] = extraValue(child.entry, ek, ev)
			}
			continue
		}
		entry[k] = v
	}
	if len(extra) > 0 {
		entry["kv_connector_extra_config"] = extra
	}
	return entry, cw.Env
}

// quoted marks a string the recipe writes in double quotes.
type quoted = stageconfig.Quoted

// How the ports of a block are named.
const (
	indexDP   = kvconnector.IndexDP   // one per data-parallel rank
	indexRank = kvconnector.IndexRank // one per worker rank
)

// portName names port i of a block of count: the base alone for a single
// port, base<index><i> for a block (base_dp1, base_rank3).
func portName(base string, i, count int, index string) string {
	if index != "" && count > 1 {
		return base + index + strconv.Itoa(i)
	}
	return base
}

// protocolClasses names the classes connector.protocol applies to.
func protocolClasses() string {
	var names []string
	for _, e := range kvconnector.Entries {
		if e.TakesProtocol {
			names = append(names, e.Name)
		}
	}
	return kvconnector.ListWords(names, "or")
}
