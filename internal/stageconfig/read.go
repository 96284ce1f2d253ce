package stageconfig

import "go.yaml.in/yaml/v3"

// Typed reads of a stage and of a document, for callers that plan with a
// config's values and should not walk its node tree.

// Line is the line of the stage's mapping in the source; 0 for a stage
// built in memory.
func (s Stage) Line() int { return s.node.Line }

// Flag reads a stage-level boolean (final_output, is_prefill_only, ...);
// false when unset or not a boolean.
func (s Stage) Flag(key string) bool {
	v, _ := scalarBool(s.get(key))
	return v
}

// EngineInt reads an engine setting that vllm-omni reads as an integer.
func (s Stage) EngineInt(key string) (int, bool) { return scalarInt(s.engine(key)) }

// EngineFloat reads an engine setting that vllm-omni reads as a number.
func (s Stage) EngineFloat(key string) (float64, bool) { return scalarFloat(s.engine(key)) }

// EngineString reads an engine setting's text; null reads as absent.
func (s Stage) EngineString(key string) (string, bool) { return scalarString(s.engine(key)) }

// Settings is a view of a mapping of settings, such as parallel_config.
type Settings struct{ n *yaml.Node }

// ParallelConfig returns the engine's nested `parallel_config:` mapping;
// reading from it when it is unset finds nothing.
func (s Stage) ParallelConfig() Settings { return Settings{s.engine("parallel_config")} }

// Int reads a setting vllm-omni reads as an integer.
func (m Settings) Int(key string) (int, bool) { return scalarInt(mapGet(m.n, key)) }

// String reads a setting's text; null and a collection read as absent.
func (m Settings) String(key string) (string, bool) { return scalarString(mapGet(m.n, key)) }

// Has reports whether the settings hold key, null included.
func (m Settings) Has(key string) bool { return mapGet(m.n, key) != nil }

// IsMapping reports whether the settings are written, as a mapping.
func (m Settings) IsMapping() bool { return m.n != nil && m.n.Kind == yaml.MappingNode }

// Get is the settings nested under key; reading from them when key is
// unset, or not a mapping, finds nothing.
func (m Settings) Get(key string) Settings { return Settings{mapGet(m.n, key)} }

// Entries are the nodes written under key, each read as settings: a list's
// items in order (MultiConnector's `connectors`). Whatever else is written
// there gives its nodes as they come (a mapping's keys and values in turn),
// as the release checks have always read it.
func (m Settings) Entries(key string) []Settings {
	n := mapGet(m.n, key)
	if n == nil {
		return nil
	}
	out := make([]Settings, len(n.Content))
	for i, e := range n.Content {
		out[i] = Settings{e}
	}
	return out
}

// KVTransferSettings is the stage's `kv_transfer_config` as written, for
// checks that read more of it than KVTransfer gives: MultiConnector's
// children, a connector's module path.
func (s Stage) KVTransferSettings() Settings { return Settings{s.engine("kv_transfer_config")} }

// EnvVar reads one variable of the stage's environment.
func (s Stage) EnvVar(name string) (string, bool) { return scalarString(mapGet(s.env(), name)) }

// KVTransfer is a stage's `kv_transfer_config`, as far as the planner's
// checks read it.
type KVTransfer struct {
	Connector    string // kv_connector
	Role         string // kv_role
	BufferDevice string // kv_buffer_device
	BufferSize   string // kv_buffer_size, as written
	// BootstrapPort is kv_connector_extra_config.mooncake_bootstrap_port;
	// HasBootstrapPort is false when that is unset or not a whole number.
	BootstrapPort    int
	HasBootstrapPort bool
}

// KVTransfer reads the stage's `kv_transfer_config`; ok is false when it
// is unset or not a mapping.
func (s Stage) KVTransfer() (kv KVTransfer, ok bool) {
	n := s.engine("kv_transfer_config")
	if n == nil || n.Kind != yaml.MappingNode {
		return KVTransfer{}, false
	}
	kv.Connector, _ = scalarString(mapGet(n, "kv_connector"))
	kv.Role, _ = scalarString(mapGet(n, "kv_role"))
	kv.BufferDevice, _ = scalarString(mapGet(n, "kv_buffer_device"))
	kv.BufferSize, _ = scalarString(mapGet(n, "kv_buffer_size"))
	kv.BootstrapPort, kv.HasBootstrapPort = scalarInt(mapGet(mapGet(n, "kv_connector_extra_config"), "mooncake_bootstrap_port"))
	return kv, true
}

// ConnectorRef is one entry of a stage's `input_connectors` or
// `output_connectors`: a key such as from_stage_0 and the connector it
// names.
type ConnectorRef struct {
	Key  string
	Name string // the connector's name; "" for an inline definition
	Line int    // the line of the value
	// Inline is true when the entry defines its connector in place
	// instead of naming one.
	Inline bool
}

// ConnectorRefs lists the entries of the stage's `input_connectors` or
// `output_connectors` (key), in the order the config writes them; none when
// that is unset or not a mapping.
func (s Stage) ConnectorRefs(key string) []ConnectorRef {
	m := s.get(key)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]ConnectorRef, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		v := m.Content[i+1]
		name, isRef := scalarString(v)
		out = append(out, ConnectorRef{Key: m.Content[i].Value, Name: name, Line: v.Line, Inline: !isRef})
	}
	return out
}

// TopString reads a top-level key's text, such as `pipeline`.
func (d *Document) TopString(key string) (string, bool) { return scalarString(mapGet(d.top(), key)) }

// TopBool reads a top-level key vllm-omni reads as a boolean, such as
// `async_chunk`; ok is false when it is absent or not a boolean.
func (d *Document) TopBool(key string) (v, ok bool) { return scalarBool(mapGet(d.top(), key)) }

// HasTop reports whether the config writes a top-level key, null included.
func (d *Document) HasTop(key string) bool { return mapGet(d.top(), key) != nil }

// sectionsParent is the mapping that holds the pipeline-wide sections
// (`connectors`, `edges`): the top level in the `stages` dialect, `runtime:`
// in `stage_args`; nil when that is not written.
func (d *Document) sectionsParent() *yaml.Node {
	if d.Dialect == Stages {
		return d.top()
	}
	return mapGet(d.top(), "runtime")
}

// ensureSectionsParent is sectionsParent for a writer: in `stage_args` it
// creates `runtime:` when absent, or replaces it when it is not a mapping
// (mapEnsure); a writer that must refuse that checks connectorsShape first.
func (d *Document) ensureSectionsParent() *yaml.Node {
	if d.Dialect == Stages {
		return d.top()
	}
	return mapEnsure(d.top(), "runtime")
}

// connectorsNode is the mapping of named connectors.
func (d *Document) connectorsNode() *yaml.Node { return mapGet(d.sectionsParent(), "connectors") }

// ConnectorClasses maps each connector the config defines to its class,
// the definition's `name:` ("" when that is not text).
func (d *Document) ConnectorClasses() map[string]string {
	m := d.connectorsNode()
	out := map[string]string{}
	for _, k := range mapKeys(m) {
		out[k], _ = scalarString(mapGet(mapGet(m, k), "name"))
	}
	return out
}

// ConnectorNames lists the names of the connectors the config defines;
// defined is false when it has no connectors section at all (then
// references are resolved elsewhere).
func (d *Document) ConnectorNames() (names []string, defined bool) {
	m := d.connectorsNode()
	if m == nil {
		return nil, false
	}
	return mapKeys(m), true
}

// String is the string at a path inside the stage, such as
// ("custom_process_input_func") or ("engine_args", "scheduler_cls").
func (s Stage) String(path ...string) (string, bool) { return scalarString(pathGet(s.node, path...)) }

// Sets reports whether the stage writes the key at this path (such as
// runtime.max_batch_size), null included.
func (s Stage) Sets(path ...string) bool { return pathGet(s.node, path...) != nil }

// HasEngine reports whether the stage sets an engine setting, null
// included.
func (s Stage) HasEngine(key string) bool { return s.engine(key) != nil }
