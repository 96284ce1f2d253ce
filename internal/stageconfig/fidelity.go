package stageconfig

import (
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ParseErrors lists every problem found in a document that vllm-omni's
// loader cannot read, in document order.
type ParseErrors []*ParseError

func (es ParseErrors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// maxLoadErrors bounds how many problems one document reports.
const maxLoadErrors = 20

// checkLoadable finds what vllm-omni's loader (OmegaConf on PyYAML's safe
// loader) fails on, or would read as something yaml.v3 cannot express:
// tags other than the core schema's, values it cannot construct (a bare
// `=`, `0b_`), a `<<` that is not a mapping key or merges no mapping, keys
// it cannot hold (null, a list or a mapping), keys it reads as one key
// though they are spelled apart (`yes` and `true`, `1` and `0x1`), and an
// OmegaConf interpolation that is never closed. Every node is visited once;
// aliases are checked where their anchor is.
func checkLoadable(root *yaml.Node) error {
	var errs ParseErrors
	refuse := func(n *yaml.Node, format string, args ...any) {
		if len(errs) < maxLoadErrors {
			e := errAt(n, format, args...)
			e.Loader = true
			errs = append(errs, e)
		}
	}
	var visit func(n *yaml.Node, isKey bool)
	visit = func(n *yaml.Node, isKey bool) {
		switch n.Kind {
		case yaml.ScalarNode:
			r := pyRead(n)
			switch {
			case r.Kind == pyInvalid:
				refuse(n, "%s", r.Err)
			case r.Kind == pyMerge && !isKey:
				refuse(n, "`<<` here is YAML's merge key, which is only read as a mapping key: write \"<<\" in quotes for the text")
			case r.Kind == pyValue && !isKey:
				refuse(n, "a bare `=` is YAML 1.1's value key, which vllm-omni's loader cannot read as a value: write \"=\" in quotes")
			case !isKey && r.Kind == pyStr:
				if at, ok := unclosedInterpolation(r.Text); ok {
					refuse(n, "%q opens an OmegaConf interpolation at %q that is never closed, and vllm-omni's loader fails on it: close it with `}`, or write \\${ for a literal ${", r.Text, r.Text[at:])
				}
			}
		case yaml.MappingNode, yaml.SequenceNode:
			want := tagMap
			if n.Kind == yaml.SequenceNode {
				want = tagSeq
			}
			if n.Style&yaml.TaggedStyle != 0 && shortTagName(n.Tag) != want {
				refuse(n, "%s", collectionTagMessage(shortTagName(n.Tag), want))
			}
		}
		if n.Kind == yaml.MappingNode {
			checkKeys(n, refuse)
			for i := 0; i+1 < len(n.Content); i += 2 {
				visit(n.Content[i], true)
				visit(n.Content[i+1], false)
			}
			return
		}
		if n.Kind != yaml.AliasNode {
			for _, c := range n.Content {
				visit(c, false)
			}
		}
	}
	visit(root, false)
	return sortedErrors(errs)
}

// checkFlowNumbers refuses YAML 1.1 base-60 numbers (1:30, the integer 90
// to vllm-omni's loader) inside a flow collection: yaml.v3 writes a scalar
// with a colon quoted there, which would turn the number into text. It runs
// on the tree with aliases and merge keys written out, where a number an
// alias brings into [] or {} stands. Rewriting 1:30 as 90 would be exact
// too, but a base-60 number is nearly always a time or a ratio written by
// mistake, so the user decides.
func checkFlowNumbers(root *yaml.Node) error {
	var errs ParseErrors
	var visit func(n *yaml.Node, inFlow bool)
	visit = func(n *yaml.Node, inFlow bool) {
		if r := pyRead(n); inFlow && (r.Kind == pyInt || r.Kind == pyFloat) && strings.Contains(n.Value, ":") && n.Style&yaml.TaggedStyle == 0 && len(errs) < maxLoadErrors {
			e := errAt(n, "%s is a YAML 1.1 base-60 number, which vllm-omni's loader reads as %s, inside a flow list or mapping, where it cannot be written back unquoted: write %s, or \"%s\" in quotes for the text", n.Value, pyDescribe(r), pyNumber(r), n.Value)
			e.Loader = true
			errs = append(errs, e)
		}
		inFlow = inFlow || n.Style&yaml.FlowStyle != 0
		for _, c := range n.Content {
			visit(c, inFlow)
		}
	}
	visit(root, false)
	return sortedErrors(errs)
}

// sortedErrors returns errs in document order: nil, one *ParseError, or
// the list.
func sortedErrors(errs ParseErrors) error {
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].line != errs[j].line {
			return errs[i].line < errs[j].line
		}
		return errs[i].column < errs[j].column
	})
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	return errs
}

func collectionTagMessage(tag, want string) string {
	if strings.HasPrefix(tag, "!!python/") {
		return unsafeTagMessage(tag)
	}
	kind := "mapping"
	if want == tagSeq {
		kind = "list"
	}
	return fmt.Sprintf("the tag %s on a %s is not supported in a stage config (vllm-omni's loader refuses it, or reads it into a value a config cannot hold): remove it", tag, kind)
}

// checkKeys checks a mapping's keys: each a scalar, merge keys given a
// mapping or a list of mappings, and no two keys that vllm-omni reads as one.
func checkKeys(m *yaml.Node, refuse func(*yaml.Node, string, ...any)) {
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := resolve(m.Content[i]), m.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			refuse(m.Content[i], "a mapping key is a list or a mapping; vllm-omni's loader cannot use one as a key: write the key as text")
			continue
		}
		r := pyRead(k)
		switch r.Kind {
		case pyMerge:
			checkMergeValue(v, refuse)
			continue
		case pyNull:
			refuse(m.Content[i], "a mapping key is null (%q); OmegaConf, which vllm-omni loads configs with, cannot hold it: write the key as text", k.Value)
			continue
		}
		id, ok := pyKeyIdentity(r)
		if !ok {
			continue
		}
		if first, dup := seen[id]; dup && first.Value != k.Value {
			refuse(k, "keys %q (line %d) and %q are one key to vllm-omni's loader, which reads both as %s and keeps only the last: keep one", first.Value, first.Line, k.Value, pyDescribe(r))
			continue
		}
		seen[id] = k
	}
}

// checkMergeValue: a merge key takes a mapping, or a list of mappings.
func checkMergeValue(v *yaml.Node, refuse func(*yaml.Node, string, ...any)) {
	r := resolve(v)
	switch r.Kind {
	case yaml.MappingNode:
		return
	case yaml.SequenceNode:
		for _, e := range r.Content {
			if resolve(e).Kind != yaml.MappingNode {
				refuse(e, "a list after the merge key `<<` must hold only mappings, such as [*defaults, *more]")
				return
			}
		}
		return
	}
	refuse(v, "the merge key `<<` takes a mapping or a list of mappings, such as `<<: *defaults`: write the keys out or point it at a mapping")
}

// unclosedInterpolation finds an OmegaConf interpolation `${` that is not
// closed, and returns where it starts. A `\${` is an escaped literal.
func unclosedInterpolation(s string) (int, bool) {
	for i := 0; i+1 < len(s); i++ {
		if s[i] != '$' || s[i+1] != '{' || escaped(s, i) {
			continue
		}
		depth := 0
		end := -1
		for j := i + 1; j < len(s) && end < 0; j++ {
			switch s[j] {
			case '{':
				depth++
			case '}':
				if depth--; depth == 0 {
					end = j
				}
			}
		}
		if end < 0 {
			return i, true
		}
		i = end
	}
	return 0, false
}

// escaped reports whether the character at i follows an odd number of
// backslashes.
func escaped(s string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// hasInterpolation reports whether OmegaConf sees an interpolation (or an
// escaped one, which it rewrites on reading) in a string.
func hasInterpolation(s string) bool { return strings.Contains(s, "${") }

// expandAnchors writes out what the document's aliases and merge keys stand
// for, so that every reader of the tree, and the planner's edits, see the
// mappings vllm-omni reads: a key a stage takes through `<<: *defaults` is
// a key of that stage, and setting engine_args there cannot hide the
// engine_args it merged.
//
// Writing merges out is exact, where refusing them would turn away configs
// vllm-omni runs: PyYAML's merge has a small fixed rule (flatten_mapping in
// constructor.py: keys written in the mapping win over merged ones, and of
// a list of merged mappings the first one that has a key gives it), applied
// here to each mapping, innermost first. Only the key order of a mapping can
// differ from the dict vllm-omni builds: merged keys stand where `<<` was
// written. Comments on the `<<` line move to the first key it brought in.
//
// It returns the first line holding an alias and the first holding a merge
// key, or 0.
func expandAnchors(root *yaml.Node) (aliasLine, mergeLine int) {
	expandAliases(root, &aliasLine)
	flattenMerges(root, &mergeLine)
	clearAnchors(root)
	spellNullsInFlow(root, false)
	return aliasLine, mergeLine
}

// spellNullsInFlow writes an empty null inside a flow collection
// (`{a: , b: 1}`) as null: yaml.v3 cannot write an empty plain scalar
// there and would write a pair of quotes instead, which reads as the empty
// string. The data is unchanged.
func spellNullsInFlow(n *yaml.Node, inFlow bool) {
	if inFlow && n.Kind == yaml.ScalarNode && n.Value == "" && n.Style == 0 && pyRead(n).Kind == pyNull {
		n.Value, n.Tag = "null", tagNull
	}
	inFlow = inFlow || n.Style&yaml.FlowStyle != 0
	for _, c := range n.Content {
		spellNullsInFlow(c, inFlow)
	}
}

func expandAliases(n *yaml.Node, first *int) {
	for i, c := range n.Content {
		if c.Kind == yaml.AliasNode {
			if *first == 0 || c.Line < *first {
				*first = c.Line
			}
			cp := deepCopy(resolve(c))
			// The copy stands where the alias was written; what is inside
			// keeps the lines of its definition.
			cp.HeadComment, cp.LineComment, cp.FootComment = c.HeadComment, c.LineComment, c.FootComment
			cp.Line, cp.Column = c.Line, c.Column
			n.Content[i] = cp
			c = cp
		}
		expandAliases(c, first)
	}
}

func clearAnchors(n *yaml.Node) {
	n.Anchor = ""
	for _, c := range n.Content {
		clearAnchors(c)
	}
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && pyRead(k).Kind == pyMerge
}

// flattenMerges applies PyYAML's merge to every mapping below n. The tree
// holds no aliases, and checkLoadable made sure every merge key has a
// mapping or a list of mappings. *first is set to the line of the first
// merge key met, if earlier.
func flattenMerges(n *yaml.Node, first *int) {
	for _, c := range n.Content {
		flattenMerges(c, first)
	}
	if n.Kind != yaml.MappingNode {
		return
	}
	m := splitMerges(n, first)
	if m.insertAt < 0 {
		return
	}
	kept := m.resolve()
	out := make([]*yaml.Node, 0, len(m.own)+len(kept))
	out = append(out, m.own[:m.insertAt]...)
	out = append(out, kept...)
	out = append(out, m.own[m.insertAt:]...)
	n.Content = out
	m.placeComments(n, kept)
}

// mergeParts is a mapping's entries split at its merge keys: its own key
// and value pairs, the pairs its merge keys bring, in the order PyYAML
// extends with them, the merge keys' comments, and where among own the
// first merge key stood (-1 when there is none).
type mergeParts struct {
	own, merged []*yaml.Node
	comments    []string
	insertAt    int
}

func splitMerges(n *yaml.Node, first *int) mergeParts {
	m := mergeParts{insertAt: -1}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !isMergeKey(k) {
			m.own = append(m.own, k, v)
			continue
		}
		if *first == 0 || k.Line < *first {
			*first = k.Line
		}
		if m.insertAt < 0 {
			m.insertAt = len(m.own)
		}
		m.comments = append(m.comments, k.HeadComment, k.LineComment, v.HeadComment, v.LineComment, k.FootComment, v.FootComment)
		switch v.Kind {
		case yaml.MappingNode:
			m.merged = append(m.merged, v.Content...)
		case yaml.SequenceNode:
			// PyYAML extends with the list reversed, so the first
			// mapping's keys come last and win.
			for j := len(v.Content) - 1; j >= 0; j-- {
				m.merged = append(m.merged, v.Content[j].Content...)
			}
		}
	}
	return m
}

// resolve returns the merged pairs that are kept. Own keys win; of the
// merged ones, the last occurrence gives the value and the first the
// position, as in the dict PyYAML builds. A dict keeps the key first put
// in, so an own key that equals a merged one spelled otherwise (1 and 1.0)
// takes the merged spelling: resolve respells it in m.own.
func (m mergeParts) resolve() []*yaml.Node {
	ownAt := map[string]int{}
	for i := 0; i+1 < len(m.own); i += 2 {
		if id, ok := pyKeyIdentity(pyRead(m.own[i])); ok {
			ownAt[id] = i
		}
	}
	var kept []*yaml.Node
	slot := map[string]int{}
	respelled := map[string]bool{}
	for i := 0; i+1 < len(m.merged); i += 2 {
		id, ok := pyKeyIdentity(pyRead(m.merged[i]))
		if j, isOwn := ownAt[id]; ok && isOwn {
			if !respelled[id] {
				m.own[j] = respell(m.own[j], m.merged[i])
			}
			respelled[id] = true
			continue
		}
		if j, seen := slot[id]; ok && seen {
			kept[j+1] = m.merged[i+1]
			continue
		}
		if ok {
			slot[id] = len(kept)
		}
		kept = append(kept, m.merged[i], m.merged[i+1])
	}
	return kept
}

// respell is own key k spelled as the merged key that equals it, where
// the two differ, with k's place and comments.
func respell(k, merged *yaml.Node) *yaml.Node {
	if k.Value == merged.Value && k.Style == merged.Style && k.Tag == merged.Tag {
		return k
	}
	cp := deepCopy(merged)
	cp.HeadComment, cp.LineComment, cp.FootComment = k.HeadComment, k.LineComment, k.FootComment
	cp.Line, cp.Column = k.Line, k.Column
	return cp
}

// placeComments puts the merge keys' comments above what now stands where
// the first merge key stood: the first merged key kept, the next own key,
// or the mapping's foot.
func (m mergeParts) placeComments(n *yaml.Node, kept []*yaml.Node) {
	text := joinComments(m.comments)
	switch {
	case text == "":
	case len(kept) > 0:
		kept[0].HeadComment = joinComments([]string{text, kept[0].HeadComment})
	case m.insertAt < len(m.own):
		m.own[m.insertAt].HeadComment = joinComments([]string{text, m.own[m.insertAt].HeadComment})
	default:
		n.FootComment = joinComments([]string{n.FootComment, text})
	}
}

// joinComments joins comment texts, one to a line, leaving out empty ones.
func joinComments(cs []string) string {
	var parts []string
	for _, c := range cs {
		if c != "" {
			parts = append(parts, c)
		}
	}
	return strings.Join(parts, "\n")
}
