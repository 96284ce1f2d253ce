package pipeline

import (
	"sort"
	"strings"
)

// connector describes what a KV connector needs from the plan.
type connector struct {
	name string
	// bootstrapPorts is true for connectors whose prefill and decode each
	// listen on a handshake port the other side dials (Mooncake).
	bootstrapPorts bool
	// sideChannel is true for NIXL: each worker listens on base+rank.
	sideChannel bool
	// allowsLargerDecodeTP is true when decode may run more tensor-parallel
	// ranks than prefill.
	allowsLargerDecodeTP bool
}

// connectors lists the KV connectors the provider can wire. Others are
// rejected rather than written half-configured.
var connectors = map[string]connector{
	connectorMooncake: {name: connectorMooncake, bootstrapPorts: true},
	connectorNixl:     {name: connectorNixl, sideChannel: true, allowsLargerDecodeTP: true},
}

func connectorNames() string {
	names := make([]string, 0, len(connectors))
	for n := range connectors {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// extra-config keys the provider writes itself from typed attributes.
var managedExtraKeys = map[string]string{
	"mooncake_bootstrap_port": "prefill.bootstrap_port and decode.bootstrap_port",
	"mooncake_protocol":       "connector.protocol",
	"device_name":             "connector.device_name",
}

func (p *planner) checkConnector() connector {
	c := p.spec.Connector
	path := AttrPath("connector")
	name := c.Name
	if name == "" {
		name = DefaultConnector
	}
	conn, ok := connectors[name]
	if !ok {
		p.ds.errorf("connector_unknown", path.Attr("name"), "unknown KV connector",
			"%q is not a connector this provider wires; use one of %s.", name, connectorNames())
		return connectors[DefaultConnector]
	}
	if c.Protocol != "" {
		switch {
		case name != connectorMooncake:
			p.ds.errorf("connector_protocol_unsupported", path.Attr("protocol"), "protocol applies to MooncakeConnector only",
				"%s chooses its transport itself; remove protocol.", name)
		case c.Protocol != "tcp" && c.Protocol != "rdma":
			p.ds.errorf("connector_protocol_unknown", path.Attr("protocol"), "unknown protocol", "%q: use \"tcp\" or \"rdma\".", c.Protocol)
		}
	}
	if c.DeviceName != "" && (name != connectorMooncake || c.Protocol != "rdma") {
		p.ds.errorf("connector_device_name_unused", path.Attr("device_name"), "device_name needs MooncakeConnector over rdma",
			"device_name names the RDMA NIC; set protocol = \"rdma\" with MooncakeConnector, or remove device_name.")
	}
	for _, k := range sortedStrings(c.ExtraConfig) {
		if attr, managed := managedExtraKeys[k]; managed {
			p.ds.errorf("connector_extra_managed_key", path.Attr("extra_config").Attr(k), "this connector setting has its own attribute",
				"set %s instead of extra_config.%s.", attr, k)
		}
	}
	checkEngineArgs(&p.ds, path.Attr("extra_config"), c.ExtraConfig, nil)
	return conn
}

// kvSettings are the kv_transfer_config keys for one side of the pair, in
// the order the recipe writes them.
func (p *planner) kvSettings(s *plannedStage) []kv {
	out := []kv{
		{"kv_connector", quoted(p.conn.name)},
		{"kv_role", quoted(*s.kvRole)},
		{"kv_rank", s.kvRank},
		{"kv_parallel_size", 2},
	}
	if p.multiHost() {
		out = append(out, kv{"kv_ip", quoted(p.byKey[prefillKey].host)})
	}
	return out
}

// extraConfig is kv_connector_extra_config for one side.
func (p *planner) extraConfig(s *plannedStage) []kv {
	var out []kv
	c := p.spec.Connector
	if p.conn.bootstrapPorts {
		out = append(out, kv{"mooncake_bootstrap_port", s.handshakePort})
		if c.Protocol != "" {
			out = append(out, kv{"mooncake_protocol", c.Protocol})
		}
		if c.DeviceName != "" {
			out = append(out, kv{"device_name", c.DeviceName})
		}
	}
	for _, k := range sortedStrings(c.ExtraConfig) {
		out = append(out, kv{k, c.ExtraConfig[k]})
	}
	return out
}

// kv is one key and its value, written in order.
type kv struct {
	key   string
	value any
}

// quoted marks a string the recipe writes in double quotes.
type quoted string
