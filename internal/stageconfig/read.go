package stageconfig

import "go.yaml.in/yaml/v3"

// Typed reads of a stage and of a document, for callers that plan with a
// config's values and should not walk its node tree.

// Line is the line of the stage's mapping in the source; 0 for a stage
// built in memory.
func (s Stage) Line() int { return s.Node.Line }

// Flag reads a stage-level boolean (final_output, is_prefill_only, ...);
// false when unset or not a boolean.
func (s Stage) Flag(key string) bool {
	v, _ := ScalarBool(s.Get(key))
	return v
}

// EngineInt reads an engine setting that vllm-omni reads as an integer.
func (s Stage) EngineInt(key string) (int, bool) { return ScalarInt(s.Engine(key)) }

// EngineFloat reads an engine setting that vllm-omni reads as a number.
func (s Stage) EngineFloat(key string) (float64, bool) { return ScalarFloat(s.Engine(key)) }

// EngineString reads an engine setting's text; null reads as absent.
func (s Stage) EngineString(key string) (string, bool) { return ScalarString(s.Engine(key)) }

// Settings is a view of a mapping of settings, such as parallel_config.
type Settings struct{ n *yaml.Node }

// ParallelConfig returns the engine's nested `parallel_config:` mapping;
// reading from it when it is unset finds nothing.
func (s Stage) ParallelConfig() Settings { return Settings{s.Engine("parallel_config")} }

// Int reads a setting vllm-omni reads as an integer.
func (m Settings) Int(key string) (int, bool) { return ScalarInt(MapGet(m.n, key)) }

// String reads a setting's text; null and a collection read as absent.
func (m Settings) String(key string) (string, bool) { return ScalarString(MapGet(m.n, key)) }

// Has reports whether the settings hold key, null included.
func (m Settings) Has(key string) bool { return MapGet(m.n, key) != nil }

// IsMapping reports whether the settings are written, as a mapping.
func (m Settings) IsMapping() bool { return m.n != nil && m.n.Kind == yaml.MappingNode }

// Get is the settings nested under key; reading from them when key is
// unset, or not a mapping, finds nothing.
func (m Settings) Get(key string) Settings { return Settings{MapGet(m.n, key)} }

// Entries are the nodes written under key, each read as settings: a list's
// items in order (MultiConnector's `connectors`). Whatever else is written
// there gives its nodes as they come (a mapping's keys and values in turn),
// as the release checks have always read it.
func (m Settings) Entries(key string) []Settings {
	n := MapGet(m.n, key)
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
func (s Stage) KVTransferSettings() Settings { return Settings{s.Engine("kv_transfer_config")} }

// EnvVar reads one variable of the stage's environment.
func (s Stage) EnvVar(name string) (string, bool) { return ScalarString(MapGet(s.Env(), name)) }

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
	n := s.Engine("kv_transfer_config")
	if n == nil || n.Kind != yaml.MappingNode {
		return KVTransfer{}, false
	}
	kv.Connector, _ = ScalarString(MapGet(n, "kv_connector"))
	kv.Role, _ = ScalarString(MapGet(n, "kv_role"))
	kv.BufferDevice, _ = ScalarString(MapGet(n, "kv_buffer_device"))
	kv.BufferSize, _ = ScalarString(MapGet(n, "kv_buffer_size"))
	kv.BootstrapPort, kv.HasBootstrapPort = ScalarInt(MapGet(MapGet(n, "kv_connector_extra_config"), "mooncake_bootstrap_port"))
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
	m := s.Get(key)
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]ConnectorRef, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		v := m.Content[i+1]
		name, isRef := ScalarString(v)
		out = append(out, ConnectorRef{Key: m.Content[i].Value, Name: name, Line: v.Line, Inline: !isRef})
	}
	return out
}

// TopString reads a top-level key's text, such as `pipeline`.
func (d *Document) TopString(key string) (string, bool) { return ScalarString(MapGet(d.Top(), key)) }

// HasTop reports whether the config writes a top-level key, null included.
func (d *Document) HasTop(key string) bool { return MapGet(d.Top(), key) != nil }

// sectionsParent is the mapping that holds the pipeline-wide sections
// (`connectors`, `edges`): the top level in the `stages` dialect, `runtime:`
// in `stage_args`; nil when that is not written.
func (d *Document) sectionsParent() *yaml.Node {
	if d.Dialect == Stages {
		return d.Top()
	}
	return MapGet(d.Top(), "runtime")
}

// ensureSectionsParent is sectionsParent for a writer: in `stage_args` it
// creates `runtime:` when absent, or replaces it when it is not a mapping
// (MapEnsure); a writer that must refuse that checks connectorsShape first.
func (d *Document) ensureSectionsParent() *yaml.Node {
	if d.Dialect == Stages {
		return d.Top()
	}
	return MapEnsure(d.Top(), "runtime")
}

// connectorsNode is the mapping of named connectors.
func (d *Document) connectorsNode() *yaml.Node { return MapGet(d.sectionsParent(), "connectors") }

// ConnectorClasses maps each connector the config defines to its class,
// the definition's `name:` ("" when that is not text).
func (d *Document) ConnectorClasses() map[string]string {
	m := d.connectorsNode()
	out := map[string]string{}
	for _, k := range MapKeys(m) {
		out[k], _ = ScalarString(MapGet(MapGet(m, k), "name"))
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
	return MapKeys(m), true
}

// String is the string at a path inside the stage, such as
// ("custom_process_input_func") or ("engine_args", "scheduler_cls").
func (s Stage) String(path ...string) (string, bool) { return ScalarString(PathGet(s.Node, path...)) }

// Sets reports whether the stage writes the key at this path (such as
// runtime.max_batch_size), null included.
func (s Stage) Sets(path ...string) bool { return PathGet(s.Node, path...) != nil }

// HasEngine reports whether the stage sets an engine setting, null
// included.
func (s Stage) HasEngine(key string) bool { return s.Engine(key) != nil }
