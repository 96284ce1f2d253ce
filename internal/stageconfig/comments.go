package stageconfig

import "go.yaml.in/yaml/v3"

// Where comments go when the node they are on is not written. A comment
// is the user's: an edit or a conversion that drops or replaces a node
// carries its comments to a node that is written, never loses them.

// subtreeComments lists every comment on n and the nodes below it, in
// document order (a node's head and line comments, its children's, then
// its foot comment).
func subtreeComments(n *yaml.Node) []string {
	if n == nil {
		return nil
	}
	out := []string{n.HeadComment, n.LineComment}
	for _, c := range n.Content {
		out = append(out, subtreeComments(c)...)
	}
	return append(out, n.FootComment)
}

// ownComments lists the comments on n itself.
func ownComments(n *yaml.Node) []string {
	if n == nil {
		return nil
	}
	return []string{n.HeadComment, n.LineComment, n.FootComment}
}

// isBlockCollection reports whether n is a mapping or a list written in
// block style, which yaml.v3 writes no line comment for.
func isBlockCollection(n *yaml.Node) bool {
	return (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && n.Style&yaml.FlowStyle == 0
}

// liftLineComments moves the line comment of every block collection below
// n that is a mapping's value, which yaml.v3 would not write (`edges: [...]
// # note` rewritten as a block list), to that value's key, where it is
// written on the same line; where the key has a line comment of its own,
// the moved one goes above the collection's first entry. It returns an
// undo that puts every comment back.
func liftLineComments(n *yaml.Node) (undo func()) {
	type saved struct {
		node       *yaml.Node
		head, line string
	}
	var touched []saved
	save := func(n *yaml.Node) { touched = append(touched, saved{n, n.HeadComment, n.LineComment}) }
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if v.LineComment == "" || !isBlockCollection(v) {
					continue
				}
				save(k)
				save(v)
				switch {
				case k.LineComment == "":
					k.LineComment = v.LineComment
				case len(v.Content) > 0:
					save(v.Content[0])
					v.Content[0].HeadComment = joinComments([]string{v.LineComment, v.Content[0].HeadComment})
				default:
					k.HeadComment = joinComments([]string{k.HeadComment, v.LineComment})
				}
				v.LineComment = ""
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(n)
	return func() {
		for i := len(touched) - 1; i >= 0; i-- {
			touched[i].node.HeadComment, touched[i].node.LineComment = touched[i].head, touched[i].line
		}
	}
}

// deleteKeepingComments removes key from m, moving the comments of the key
// and its value to the next key, or below the last key left.
func deleteKeepingComments(m *yaml.Node, key string) {
	i := mapIndex(m, key)
	if i < 0 {
		return
	}
	comments := append(subtreeComments(m.Content[i]), subtreeComments(m.Content[i+1])...)
	m.Content = append(m.Content[:i], m.Content[i+2:]...)
	switch {
	case i < len(m.Content):
		m.Content[i].HeadComment = joinComments(append(comments, m.Content[i].HeadComment))
	case len(m.Content) > 0:
		last := m.Content[len(m.Content)-2]
		last.FootComment = joinComments(append([]string{last.FootComment}, comments...))
	default:
		m.FootComment = joinComments(append(comments, m.FootComment))
	}
}
