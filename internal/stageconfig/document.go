package stageconfig

import (
	"bytes"

	"go.yaml.in/yaml/v3"
)

// Document is a parsed stage config: the node tree and its dialect.
type Document struct {
	root    *yaml.Node // the document node
	Dialect Dialect
	// The first lines of the source that held an alias and a merge key,
	// which Parse wrote out (expandAnchors), or 0.
	aliasLine, mergeLine int
}

// WrittenOut returns the first lines of the source that held an alias and
// a merge key, which Parse wrote out; 0 when there were none.
func (d *Document) WrittenOut() (aliasLine, mergeLine int) { return d.aliasLine, d.mergeLine }

// top returns the top-level mapping.
func (d *Document) top() *yaml.Node { return d.root.Content[0] }

// stageList returns the sequence node that holds the stages.
func (d *Document) stageList() *yaml.Node {
	return resolve(mapGet(d.top(), d.Dialect.listKey()))
}

// Stages returns a view of every stage, in document order.
func (d *Document) Stages() []Stage {
	list := d.stageList()
	out := make([]Stage, len(list.Content))
	for i, n := range list.Content {
		out[i] = Stage{node: resolve(n), Dialect: d.Dialect, Index: i}
	}
	return out
}

// Clone returns an independent copy that can be edited freely.
func (d *Document) Clone() *Document {
	return &Document{root: deepCopy(d.root), Dialect: d.Dialect, aliasLine: d.aliasLine, mergeLine: d.mergeLine}
}

// Render writes the document as YAML with two-space indentation. The output
// depends only on the node tree, so equal trees give equal bytes.
func (d *Document) Render() ([]byte, error) {
	// yaml.v3 writes a scalar's tag only when its plain text would read as
	// another type, and finds out by resolving the text, the most costly
	// step of writing a stage config. For the scalars whose plain text can
	// only read as their own tag (implicitTag), the tag is cleared while
	// encoding, which skips that step and writes the same bytes
	// (TestRenderSameAsEncoder), and set back after. So Render edits the
	// tree while it runs: like any edit, it is not for a document other
	// goroutines read (presets.Shared's); the planner renders its own copy.
	cleared := clearImplicitTags(d.root, make([]*yaml.Node, 0, 512))
	defer func() {
		for _, n := range cleared {
			n.Tag = implicitTag(n)
		}
	}()
	return encode(d.root)
}

// encode writes a node tree with yaml.v3's encoder, two-space indented.
// A line comment on a block list or mapping, which yaml.v3 would drop, is
// written on its key's line (liftLineComments) and put back after.
func encode(root *yaml.Node) ([]byte, error) {
	defer liftLineComments(root)()
	var buf bytes.Buffer
	buf.Grow(8192) // room for a preset's config, so the buffer seldom regrows
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// clearImplicitTags clears the tag of every scalar below n whose plain
// text resolves to that tag in yaml.v3 (implicitTag), and returns them,
// appended to cleared.
func clearImplicitTags(n *yaml.Node, cleared []*yaml.Node) []*yaml.Node {
	if n.Kind == yaml.ScalarNode {
		if n.Tag != "" && implicitTag(n) != "" {
			n.Tag = ""
			cleared = append(cleared, n)
		}
		return cleared
	}
	for _, c := range n.Content {
		cleared = clearImplicitTags(c, cleared)
	}
	return cleared
}

// implicitTag is the tag a plain scalar's text resolves to in yaml.v3's
// core schema, for the texts where that is certain without its resolver:
// a snake_case name is a string (isIdentifier leaves out every boolean and
// null word, and the names start with a letter or an underscore, so none
// reads as a number, .inf or a merge key), a decimal is an integer,
// digits around one point (0.9, 1.) a float, and true / false are booleans. "" for every other scalar, and for one whose
// tag is not that one or that carries a tag or quotes of its own.
func implicitTag(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode || n.Style != 0 {
		return ""
	}
	var tag string
	switch v := n.Value; {
	case isIdentifier(v):
		tag = tagStr
	case isDecimal(v):
		tag = tagInt
	case v == "true" || v == "false":
		tag = tagBool
	case isPlainFloat(v):
		tag = tagFloat
	}
	if tag == "" || (n.Tag != tag && n.Tag != "") {
		return ""
	}
	return tag
}
