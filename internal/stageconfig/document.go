package stageconfig

import (
	"bytes"

	"go.yaml.in/yaml/v3"
)

// Document is a parsed stage config: the node tree and its dialect.
type Document struct {
	Root    *yaml.Node // the document node
	Dialect Dialect
	// The first lines of the source that held an alias and a merge key,
	// which Parse wrote out (expandAnchors), or 0.
	aliasLine, mergeLine int
}

// WrittenOut returns the first lines of the source that held an alias and
// a merge key, which Parse wrote out; 0 when there were none.
func (d *Document) WrittenOut() (aliasLine, mergeLine int) { return d.aliasLine, d.mergeLine }

// Top returns the top-level mapping.
func (d *Document) Top() *yaml.Node { return d.Root.Content[0] }

// StageList returns the sequence node that holds the stages.
func (d *Document) StageList() *yaml.Node {
	return resolve(MapGet(d.Top(), d.Dialect.listKey()))
}

// Stages returns a view of every stage, in document order.
func (d *Document) Stages() []Stage {
	list := d.StageList()
	out := make([]Stage, len(list.Content))
	for i, n := range list.Content {
		out[i] = Stage{Node: resolve(n), Dialect: d.Dialect, Index: i}
	}
	return out
}

// Clone returns an independent copy that can be edited freely.
func (d *Document) Clone() *Document {
	return &Document{Root: DeepCopy(d.Root), Dialect: d.Dialect, aliasLine: d.aliasLine, mergeLine: d.mergeLine}
}

// Render writes the document as YAML with two-space indentation. The output
// depends only on the node tree, so equal trees give equal bytes.
func (d *Document) Render() ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(8192) // the presets' configs are 4-5 KB
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(d.Root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
