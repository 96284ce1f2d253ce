package stageconfig

import "go.yaml.in/yaml/v3"

// Edge is a data path between two stages, by stage id.
type Edge struct {
	From, To int
}

// Edges is the edge list a config writes out.
type Edges struct {
	List []Edge
	// Written is true when the config has an edge list at all.
	Written bool
	// NotAList is true when the edges value is not a list; Line is where
	// it is.
	NotAList bool
	Line     int
	// Unreadable are the lines of entries that are not a {from, to} pair
	// of stage ids; they are left out of List.
	Unreadable []int
}

// edgesNode is the edge list, where the dialect keeps it (sectionsParent).
func (d *Document) edgesNode() *yaml.Node { return mapGet(d.sectionsParent(), "edges") }

// Edges reads the config's edge list.
func (d *Document) Edges() Edges {
	n := d.edgesNode()
	if n == nil {
		return Edges{}
	}
	if n.Kind != yaml.SequenceNode {
		return Edges{Written: true, NotAList: true, Line: n.Line}
	}
	out := Edges{Written: true, List: make([]Edge, 0, len(n.Content))}
	for _, e := range n.Content {
		if edge, ok := readEdge(e); ok {
			out.List = append(out.List, edge)
		} else {
			out.Unreadable = append(out.Unreadable, e.Line)
		}
	}
	return out
}

func readEdge(n *yaml.Node) (Edge, bool) {
	from, okFrom := scalarInt(mapGet(n, "from"))
	to, okTo := scalarInt(mapGet(n, "to"))
	return Edge{From: from, To: to}, okFrom && okTo
}

// EdgeRewrite says how WriteEdges treats the edges a config already has.
type EdgeRewrite struct {
	// Renumber maps an existing edge to its ids in the new graph.
	Renumber func(Edge) Edge
	// Template picks, by its ids before renumbering, the existing edge
	// whose extra keys (window_size, ...) a new edge copies; the first
	// one picked is used.
	Template func(Edge) bool
}

// WriteEdges makes the edge list equal want, in want's order, in the style
// the list had. An edge the config had keeps its node, extra keys and
// comments; a new edge copies the template's extra keys without its
// comments. The comments of an entry that is not an edge go to the list. In the `stage_args` dialect
// a runtime section the edges are written into gets `enabled: true` where
// it has no `enabled`, as the recipe's has; one it has is the user's and
// stays as written: no release reads runtime.enabled (grep at 7f2b1e93,
// d4a869fe and 2ce15ab7 finds no reader), so it changes nothing.
func (d *Document) WriteEdges(want []Edge, how EdgeRewrite) {
	container := d.ensureSectionsParent()
	if d.Dialect != Stages && mapGet(container, "enabled") == nil {
		container.Content = append([]*yaml.Node{keyNode("enabled"), boolNode(true)}, container.Content...)
	}
	old := mapGet(container, "edges")
	byEdge := map[Edge]*yaml.Node{}
	var template *yaml.Node
	if old != nil && old.Kind == yaml.SequenceNode {
		for _, n := range old.Content {
			was, ok := readEdge(n)
			if !ok {
				old.FootComment = joinComments(append([]string{old.FootComment}, subtreeComments(n)...))
				continue
			}
			e := how.Renumber(was)
			mapSet(n, "from", intNode(e.From))
			mapSet(n, "to", intNode(e.To))
			byEdge[e] = n
			if template == nil && how.Template(was) {
				template = n
			}
		}
	}
	seq := newSeq()
	if old != nil {
		// A flow list stays one, so that the comment after it stays on its line.
		seq.Style = old.Style &^ yaml.TaggedStyle
		seq.HeadComment, seq.LineComment, seq.FootComment = old.HeadComment, old.LineComment, old.FootComment
	}
	for _, e := range want {
		n, ok := byEdge[e]
		if !ok {
			n = newMap()
			if template != nil {
				n = deepCopy(template)
				clearComments(n)
				for _, c := range n.Content {
					clearComments(c)
				}
			}
			mapSet(n, "from", intNode(e.From))
			mapSet(n, "to", intNode(e.To))
		}
		seq.Content = append(seq.Content, n)
	}
	mapSet(container, "edges", seq)
}

func clearComments(n *yaml.Node) { n.HeadComment, n.LineComment, n.FootComment = "", "", "" }
