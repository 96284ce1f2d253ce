package stageconfig

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// PortSetting is a setting named like a port (`port` or `..._port`: kv_port,
// proxy_port, zmq_port, page_port, ...) somewhere inside a mapping of
// settings, for checks that keep the ports a config names out of the ones
// a plan allocates.
type PortSetting struct {
	// Path is the setting's place under the mapping read, its keys and
	// list indices joined with dots (kv_connector_extra_config.proxy_port,
	// kv_connector_extra_config.connectors.1.kv_port).
	Path string
	// Port is the number when Number is true: a whole number, or text that
	// is one (P2pNccl reads proxy_port as text). Text that is no number
	// ("auto") is left to the program that reads it.
	Port   int
	Number bool
	// Text is true when the config writes it as a string ("30001").
	Text bool
	Line int
	// In is the mapping that holds the setting, to read its neighbours
	// (the proxy_ip beside a proxy_port).
	In Settings
	// Connector is the class of the connector the setting configures: the
	// kv_connector of the nearest mapping around it that names one (a
	// kv_transfer_config, or a MultiConnector child's entry); "" for none.
	Connector string
}

// Ports lists the port settings inside the mapping, at any depth, in the
// order the config writes them.
func (m Settings) Ports() []PortSetting {
	var out []PortSetting
	walkPorts(resolve(m.n), "", "", &out)
	return out
}

func walkPorts(n *yaml.Node, prefix, class string, out *[]PortSetting) {
	if n == nil {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		if c, ok := scalarString(mapGet(n, "kv_connector")); ok {
			class = c
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, v := n.Content[i].Value, resolve(n.Content[i+1])
			path := join(prefix, key)
			if v != nil && v.Kind == yaml.ScalarNode && (key == "port" || strings.HasSuffix(key, "_port")) {
				ps := PortSetting{Path: path, Line: v.Line, In: Settings{n}, Connector: class}
				if p, ok := scalarInt(v); ok {
					ps.Port, ps.Number = p, true
				} else if s, ok := scalarString(v); ok && AllDigits(s) {
					ps.Text = true
					if p, err := strconv.Atoi(s); err == nil && p <= 1<<20 {
						ps.Port, ps.Number = p, true
					} else {
						ps.Port, ps.Number = -1, true // too long to be a port
					}
				}
				*out = append(*out, ps)
				continue
			}
			walkPorts(v, path, class, out)
		}
	case yaml.SequenceNode:
		for i, c := range n.Content {
			walkPorts(resolve(c), join(prefix, strconv.Itoa(i)), class, out)
		}
	}
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// AllDigits reports whether s is a run of decimal digits: a port written
// as text (P2pNccl reads proxy_port as text) that reads as a number.
func AllDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// MergedEngine is the stage's engine setting key as it reads once v is
// merged into it by MergeEngine's rule (a map key by key, anything else
// replacing it), read from a copy: the stage is unchanged. v nil leaves the
// setting as written.
func (s Stage) MergedEngine(key string, v any) (Settings, error) {
	holder := &yaml.Node{Kind: yaml.MappingNode}
	if n := s.engine(key); n != nil {
		mapSet(holder, key, deepCopy(n))
	}
	if v != nil {
		if err := mergeValue(holder, key, v); err != nil {
			return Settings{}, err
		}
	}
	return Settings{mapGet(holder, key)}, nil
}

// ConnectorDefinition is one connector the config defines (under
// `runtime.connectors`, or the top-level `connectors` of the stages
// dialect).
type ConnectorDefinition struct {
	Name     string
	Settings Settings
}

// ConnectorDefinitions lists the connectors the config defines, in order.
func (d *Document) ConnectorDefinitions() []ConnectorDefinition {
	m := d.connectorsNode()
	var out []ConnectorDefinition
	for _, k := range mapKeys(m) {
		out = append(out, ConnectorDefinition{Name: k, Settings: Settings{mapGet(m, k)}})
	}
	return out
}
