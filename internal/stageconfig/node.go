package stageconfig

import (
	"math/big"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"
)

// Tags of the YAML core schema, as yaml.v3 reports them on resolved nodes.
const (
	tagStr   = "!!str"
	tagInt   = "!!int"
	tagFloat = "!!float"
	tagBool  = "!!bool"
	tagNull  = "!!null"
	tagMap   = "!!map"
	tagSeq   = "!!seq"
)

// mapGet returns the value node stored under key in a mapping node, or nil
// when the node is not a mapping or has no such key. A key is the string
// key as vllm-omni's loader reads it: a plain `yes:` is the boolean true
// there, not the key "yes".
func mapGet(m *yaml.Node, key string) *yaml.Node {
	if i := mapIndex(m, key); i >= 0 {
		return m.Content[i+1]
	}
	return nil
}

// mapIndex returns the index of key's key node in m.Content, or -1.
func mapIndex(m *yaml.Node, key string) int {
	if m == nil || m.Kind != yaml.MappingNode {
		return -1
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Value == key && isStringKey(k) {
			return i
		}
	}
	return -1
}

// isStringKey reports whether the loader reads a key as a string.
func isStringKey(k *yaml.Node) bool {
	if k.Kind != yaml.ScalarNode {
		return false
	}
	if k.Style == 0 && isIdentifier(k.Value) {
		return true // stage_id, engine_args, ...: the common case, without the rules
	}
	kind := pyRead(k).Kind
	return kind == pyStr || kind == pyValue
}

// isIdentifier reports whether s is a snake_case name no YAML 1.1 rule
// reads as anything but a string: letters, digits and underscores, not
// starting with a digit, and none of the boolean or null words.
func isIdentifier(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			return false
		}
	}
	return !yaml11Words[s]
}

// pathGet follows a path of keys through nested mappings, resolving
// aliases; nil when any step is missing.
func pathGet(m *yaml.Node, keys ...string) *yaml.Node {
	n := resolve(m)
	for _, k := range keys {
		n = resolve(mapGet(n, k))
		if n == nil {
			return nil
		}
	}
	return n
}

// pathKey returns the key node of the last key of a path, or nil.
func pathKey(m *yaml.Node, keys ...string) *yaml.Node {
	if len(keys) == 0 {
		return nil
	}
	parent := pathGet(m, keys[:len(keys)-1]...)
	if i := mapIndex(parent, keys[len(keys)-1]); i >= 0 {
		return parent.Content[i]
	}
	return nil
}

// isSet reports whether a value is present and not null.
func isSet(n *yaml.Node) bool {
	n = resolve(n)
	return n != nil && (n.Kind != yaml.ScalarNode || n.Tag != tagNull)
}

// pathDelete removes the last key of a path from its mapping, and the
// mappings the removal leaves empty.
func pathDelete(m *yaml.Node, keys ...string) {
	if len(keys) == 0 {
		return
	}
	parent := pathGet(m, keys[:len(keys)-1]...)
	if mapDelete(parent, keys[len(keys)-1]) && len(parent.Content) == 0 && len(keys) > 1 {
		pathDelete(m, keys[:len(keys)-1]...)
	}
}

// mapRename renames key to newKey in place, keeping its position, its
// comments and its value. It reports whether the key was there.
func mapRename(m *yaml.Node, key, newKey string) bool {
	i := mapIndex(m, key)
	if i < 0 {
		return false
	}
	m.Content[i].Value = newKey
	return true
}

// setScalarText replaces a string scalar's text, keeping its style and
// comments. Other nodes are left alone and false is returned.
func setScalarText(n *yaml.Node, text string) bool {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != tagStr {
		return false
	}
	n.Value = text
	return true
}

// mapKeys lists a mapping's keys in document order.
func mapKeys(m *yaml.Node) []string {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	keys := make([]string, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		keys = append(keys, m.Content[i].Value)
	}
	return keys
}

// mapSet stores value under key. An existing key keeps its position and its
// key node (and so the comments attached to it); the value node's comments
// move to the new value so that a replaced scalar or flow list
// (`engine_input_source: [0]  # note`) keeps its line comment. A new key is
// appended.
func mapSet(m *yaml.Node, key string, value *yaml.Node) {
	if i := mapIndex(m, key); i >= 0 {
		old := m.Content[i+1]
		if value.LineComment == "" && (value.Kind == yaml.ScalarNode || value.Style&yaml.FlowStyle != 0) {
			value.LineComment = old.LineComment
		}
		if value.HeadComment == "" {
			value.HeadComment = old.HeadComment
		}
		if value.FootComment == "" {
			value.FootComment = old.FootComment
		}
		m.Content[i+1] = value
		return
	}
	m.Content = append(m.Content, keyNode(key), value)
}

// mapInsertAfter stores value under key. An existing key is replaced in
// place; a new key goes right after the first of the anchors present in m
// (so that generated keys land where a person would write them), or at the
// end when none is present.
func mapInsertAfter(m *yaml.Node, key string, value *yaml.Node, anchors ...string) {
	if mapIndex(m, key) >= 0 {
		mapSet(m, key, value)
		return
	}
	for _, a := range anchors {
		if i := mapIndex(m, a); i >= 0 {
			insertAt(m, i+2, key, value)
			return
		}
	}
	mapSet(m, key, value)
}

// mapInsertBefore is mapInsertAfter's mirror: a new key goes right before the
// first of the anchors present in m.
func mapInsertBefore(m *yaml.Node, key string, value *yaml.Node, anchors ...string) {
	if mapIndex(m, key) >= 0 {
		mapSet(m, key, value)
		return
	}
	for _, a := range anchors {
		if i := mapIndex(m, a); i >= 0 {
			insertAt(m, i, key, value)
			return
		}
	}
	mapSet(m, key, value)
}

func insertAt(m *yaml.Node, at int, key string, value *yaml.Node) {
	m.Content = append(m.Content, nil, nil)
	copy(m.Content[at+2:], m.Content[at:])
	m.Content[at] = keyNode(key)
	m.Content[at+1] = value
}

// mapDelete removes key from m and reports whether it was there.
func mapDelete(m *yaml.Node, key string) bool {
	i := mapIndex(m, key)
	if i < 0 {
		return false
	}
	m.Content = append(m.Content[:i], m.Content[i+2:]...)
	return true
}

// mapEnsure returns the mapping stored under key, creating an empty block
// mapping there (appended) when the key is absent or not a mapping.
func mapEnsure(m *yaml.Node, key string) *yaml.Node {
	if v := mapGet(m, key); v != nil && v.Kind == yaml.MappingNode {
		return v
	}
	v := newMap()
	mapSet(m, key, v)
	return v
}

// deepCopy copies a node tree. Aliases are copied as aliases to the same
// anchor node, which is what a copy of a subtree inside one document needs.
//
// A plan copies its base document once, a few hundred nodes, so the copy
// takes its nodes and their Content slices from two arrays allocated at
// once rather than one allocation per node. Each Content slice has its own
// length as capacity, so an edit that appends to one reallocates it and
// never writes into a neighbour's.
func deepCopy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	nodes, children := countNodes(n)
	c := copier{nodes: make([]yaml.Node, 0, nodes), content: make([]*yaml.Node, 0, children)}
	return c.copy(n)
}

type copier struct {
	nodes   []yaml.Node
	content []*yaml.Node
}

func (c *copier) copy(n *yaml.Node) *yaml.Node {
	c.nodes = append(c.nodes, *n)
	out := &c.nodes[len(c.nodes)-1]
	if len(n.Content) > 0 {
		start := len(c.content)
		c.content = append(c.content, n.Content...)
		kids := c.content[start:len(c.content):len(c.content)]
		for i, child := range kids {
			kids[i] = c.copy(child)
		}
		out.Content = kids
	}
	return out
}

// countNodes counts the nodes of the tree at n and the entries of their
// Content slices.
func countNodes(n *yaml.Node) (nodes, children int) {
	nodes = 1
	children = len(n.Content)
	for _, child := range n.Content {
		a, b := countNodes(child)
		nodes += a
		children += b
	}
	return nodes, children
}

// keyNode builds a string key, double-quoted when vllm-omni's loader
// would read it plain as something else: a key `yes` is the boolean true
// there, `1:30` the integer 90, `<<` a merge.
func keyNode(key string) *yaml.Node {
	return strNode(key)
}

// newMap builds an empty block mapping.
func newMap() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: tagMap} }

// newSeq builds an empty block sequence.
func newSeq() *yaml.Node { return &yaml.Node{Kind: yaml.SequenceNode, Tag: tagSeq} }

// intNode builds an integer scalar.
func intNode(v int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tagInt, Value: strconv.Itoa(v)}
}

// boolNode builds a boolean scalar spelled true/false.
func boolNode(v bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tagBool, Value: strconv.FormatBool(v)}
}

// floatNode builds a float scalar in its shortest exact spelling, keeping a
// decimal point so that YAML reads it back as a float. The point goes in the
// mantissa of an exponent form too ("1.0e+21"): PyYAML, which vllm-omni's
// loaders build on, reads "1e+21" as a string.
func floatNode(v float64) *yaml.Node {
	s := strconv.FormatFloat(v, 'g', -1, 64)
	if _, err := strconv.Atoi(s); err == nil {
		s += ".0"
	} else if e := strings.IndexByte(s, 'e'); e >= 0 && !strings.Contains(s[:e], ".") {
		s = s[:e] + ".0" + s[e:]
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tagFloat, Value: s}
}

// strNode builds a plain string scalar; the encoder quotes it when it would
// otherwise read back as another type. yaml.v3 decides that by YAML 1.2
// rules, but vllm-omni reads its configs with PyYAML (YAML 1.1), where yes,
// on, off, 1:30, 1e5, << and = are not strings: those are double-quoted here
// (readsAsString). So is text with line breaks, tabs or other characters
// that are not printable, which yaml.v3 would otherwise write as a block
// scalar it cannot always read back (a line that starts with a tab).
func strNode(v string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: v}
	if !readsAsString(v) || !printable(v) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// printable reports whether s holds only printable characters and spaces.
func printable(s string) bool {
	for _, r := range s {
		if r != ' ' && !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// quotedStrNode builds a double-quoted string scalar, the style vllm-omni's
// own configs use for device lists and connector names.
func quotedStrNode(v string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: v, Style: yaml.DoubleQuotedStyle}
}

// nullNode builds a null scalar.
func nullNode() *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: tagNull, Value: "null"} }

// flowIntSeq builds a flow-style list of integers, such as `[0]`.
func flowIntSeq(vs []int) *yaml.Node {
	s := &yaml.Node{Kind: yaml.SequenceNode, Tag: tagSeq, Style: yaml.FlowStyle}
	for _, v := range vs {
		s.Content = append(s.Content, intNode(v))
	}
	return s
}

// resolve follows aliases so that readers see the value an alias stands for.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// scalarInt reads a scalar vllm-omni reads as an integer (2, 0x10, 1:30)
// that fits an int. Booleans, floats and quoted numbers are not integers.
func scalarInt(n *yaml.Node) (int, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return 0, false
	}
	return pyRead(n).asInt()
}

// scalarFloat reads a scalar vllm-omni reads as a number, as a float.
func scalarFloat(n *yaml.Node) (float64, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return 0, false
	}
	switch r := pyRead(n); r.Kind {
	case pyInt:
		v, _ := new(big.Float).SetInt(r.Int).Float64()
		return v, true
	case pyFloat:
		return r.Float, true
	}
	return 0, false
}

// scalarBool reads a scalar vllm-omni reads as a boolean: true, True,
// TRUE, false, ..., and YAML 1.1's yes, no, on and off.
func scalarBool(n *yaml.Node) (bool, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return false, false
	}
	r := pyRead(n)
	return r.Bool, r.Kind == pyBool
}

// scalarString reads any scalar's text; null reads as absent.
func scalarString(n *yaml.Node) (string, bool) {
	n = resolve(n)
	if n == nil || n.Kind != yaml.ScalarNode || pyRead(n).Kind == pyNull {
		return "", false
	}
	return n.Value, true
}

// unalias replaces every alias below n with a copy of the node it stands
// for, so that editing one place cannot change another place that shares
// the same anchor. The data is unchanged; only the anchor spelling goes.
func unalias(n *yaml.Node) {
	for i, c := range n.Content {
		if c.Kind == yaml.AliasNode {
			cp := deepCopy(resolve(c))
			cp.Anchor = ""
			n.Content[i] = cp
			c = cp
		}
		unalias(c)
	}
}
