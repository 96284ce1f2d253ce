package stageconfig

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// ConnectorsWhere is where the dialect keeps named connectors, as a user
// would write the path: "connectors" or "runtime.connectors".
func (d *Document) ConnectorsWhere() string {
	if d.Dialect == StageArgs {
		return "runtime.connectors"
	}
	return "connectors"
}

// NotAMapping names a key that must be a mapping to hold what the planner
// adds, and the line where it is something else.
type NotAMapping struct {
	Key  string // "runtime" or the connectors' path
	Line int
}

// connectorsShape reports the first key on the way to the named
// connectors that exists and is not a mapping, or nil when connectors can
// be added there.
func (d *Document) connectorsShape() *NotAMapping {
	// In `stages` the parent is the top level, which Parse makes sure is a
	// mapping; so only a `stage_args` runtime can fail here.
	if rt := d.sectionsParent(); rt != nil && rt.Kind != yaml.MappingNode {
		return &NotAMapping{Key: "runtime", Line: rt.Line}
	}
	if defs := d.connectorsNode(); defs != nil && defs.Kind != yaml.MappingNode {
		return &NotAMapping{Key: d.ConnectorsWhere(), Line: defs.Line}
	}
	return nil
}

// HasConnector reports whether the config defines a connector of this name.
func (d *Document) HasConnector(name string) bool { return mapGet(d.connectorsNode(), name) != nil }

// EnsureConnectors creates the named connectors' mapping where the dialect
// keeps it, when absent. When a key on the way is not a mapping it changes
// nothing and returns that key (connectorsShape).
func (d *Document) EnsureConnectors() *NotAMapping {
	if bad := d.connectorsShape(); bad != nil {
		return bad
	}
	mapEnsure(d.ensureSectionsParent(), "connectors")
	return nil
}

// DefineConnector adds, or replaces, the named connector's definition,
// creating the connectors' mapping when absent. It fails, changing
// nothing, when that cannot be done (EnsureConnectors) or def holds a value
// valueNode cannot write.
func (d *Document) DefineConnector(name string, def Map) error {
	n, err := valueNode(def)
	if err != nil {
		return err
	}
	if bad := d.EnsureConnectors(); bad != nil {
		return fmt.Errorf("%s (line %d) is not a mapping", bad.Key, bad.Line)
	}
	mapSet(d.connectorsNode(), name, n)
	return nil
}
