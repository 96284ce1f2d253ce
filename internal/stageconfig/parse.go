package stageconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// Limits that keep a stray input from stalling a plan. Real stage configs
// are a few kilobytes and a handful of levels deep.
const (
	// maxBytes bounds the size of a config document.
	maxBytes = 1 << 20
	// maxDepth bounds how deeply mappings and sequences may nest.
	maxDepth = 64
	// maxNodes bounds the number of nodes, aliases expanded once each.
	maxNodes = 200_000
)

// ParseError says where in a document parsing failed. Its line and column
// are 1-based; zero means the position is unknown.
type ParseError struct {
	line, column int
	Msg          string
	// Loader is set when the document is valid YAML that vllm-omni's
	// loader fails on or would read differently; Msg then says what to
	// write instead.
	Loader bool
}

func (e *ParseError) Error() string {
	switch {
	case e.line > 0 && e.column > 0:
		return fmt.Sprintf("line %d, column %d: %s", e.line, e.column, e.Msg)
	case e.line > 0:
		return fmt.Sprintf("line %d: %s", e.line, e.Msg)
	}
	return e.Msg
}

func errAt(n *yaml.Node, format string, args ...any) *ParseError {
	return &ParseError{line: n.Line, column: n.Column, Msg: fmt.Sprintf(format, args...)}
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// wrapYAMLError turns a yaml.v3 error into a ParseError, lifting the line
// number out of its text so callers can report it uniformly. Two errors
// carry no position in yaml.v3; their line is found in src.
func wrapYAMLError(err error, src []byte) *ParseError {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &ParseError{line: line, Msg: m[2]}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	if maxDepthError.MatchString(msg) {
		return &ParseError{line: flowDepthLine(src, maxDepth), Msg: fmt.Sprintf("the document nests more than %d levels deep", maxDepth)}
	}
	return &ParseError{line: unknownAnchorLine(msg, src), Msg: msg}
}

var maxDepthError = regexp.MustCompile(`^exceeded max depth of \d+$`)

// flowDepthLine finds the line where flow collections ([ and {) first nest
// deeper than limit, or returns 0. Quoted text is not told apart: the line
// only points the reader to where to look.
func flowDepthLine(src []byte, limit int) int {
	depth, line := 0, 1
	for _, c := range src {
		switch c {
		case '\n':
			line++
		case '[', '{':
			if depth++; depth > limit {
				return line
			}
		case ']', '}':
			depth--
		}
	}
	return 0
}

var unknownAnchor = regexp.MustCompile(`^unknown anchor '(.+)' referenced$`)

// unknownAnchorLine finds the line of the first `*name` alias, for yaml.v3's
// "unknown anchor" error, or returns 0.
func unknownAnchorLine(msg string, src []byte) int {
	m := unknownAnchor.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	alias := regexp.MustCompile(`\*` + regexp.QuoteMeta(m[1]) + `($|[\s,\]}])`)
	for i, line := range strings.Split(string(src), "\n") {
		if alias.MatchString(line) {
			return i + 1
		}
	}
	return 0
}

// Parse reads a stage config in either dialect. It rejects documents that
// are too large, not UTF-8, malformed, in neither dialect, in both at once,
// or that repeat a mapping key (YAML forbids it, and the loader would keep
// only one of the values silently).
func Parse(src []byte) (*Document, error) {
	if len(src) > maxBytes {
		return nil, &ParseError{Msg: fmt.Sprintf("the document is %d bytes; the limit is %d bytes (1 MiB)", len(src), maxBytes)}
	}
	if !utf8.Valid(src) {
		return nil, &ParseError{line: invalidUTF8Line(src), Msg: "the document is not valid UTF-8"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &ParseError{line: 1, Msg: "the document is empty: expected a mapping with a `stage_args:` or `stages:` list"}
		}
		return nil, wrapYAMLError(err, src)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, errAt(&extra, "a second YAML document starts here; a stage config is a single document")
	} else if !errors.Is(err, io.EOF) {
		return nil, wrapYAMLError(err, src)
	}
	if err := checkShape(&root); err != nil {
		return nil, err
	}
	if err := checkAliases(&root); err != nil {
		return nil, err
	}
	if err := checkLoadable(&root); err != nil {
		return nil, err
	}
	aliasLine, mergeLine := expandAnchors(&root)
	if err := checkFlowNumbers(&root); err != nil {
		return nil, err
	}
	top := root.Content[0]
	if top.Kind != yaml.MappingNode {
		return nil, errAt(top, "expected a mapping with a `stage_args:` or `stages:` list at the top level")
	}
	d := &Document{root: &root, aliasLine: aliasLine, mergeLine: mergeLine}
	hasArgs, hasStages := mapGet(top, string(StageArgs)), mapGet(top, string(Stages))
	switch {
	case hasArgs != nil && hasStages != nil:
		return nil, errAt(hasArgs, "the document has both `stage_args:` and `stages:`; vllm-omni rejects `stage_args` in a `stages` file: keep one list")
	case hasArgs != nil:
		d.Dialect = StageArgs
	case hasStages != nil:
		d.Dialect = Stages
	default:
		return nil, errAt(top, "neither `stage_args:` nor `stages:` is at the top level, so this is not a vllm-omni stage config")
	}
	list := d.stageList()
	if list == nil || list.Kind != yaml.SequenceNode {
		n := mapGet(top, d.Dialect.listKey())
		return nil, errAt(n, "`%s:` must be a list of stages", d.Dialect)
	}
	for _, s := range list.Content {
		if resolve(s).Kind != yaml.MappingNode {
			return nil, errAt(s, "each entry of `%s:` must be a mapping that describes one stage", d.Dialect)
		}
	}
	return d, nil
}

// checkShape bounds depth and size, and rejects duplicate mapping keys,
// walking every node once (aliases are not followed: their targets are
// walked where they are defined).
func checkShape(root *yaml.Node) error {
	type item struct {
		n     *yaml.Node
		depth int
	}
	count := 0
	stack := []item{{root, 0}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		count++
		if count > maxNodes {
			return errAt(it.n, "the document has more than %d nodes", maxNodes)
		}
		if it.depth > maxDepth {
			return errAt(it.n, "the document nests more than %d levels deep", maxDepth)
		}
		if it.n.Kind == yaml.MappingNode {
			// Keys are compared as vllm-omni's loader reads them: a plain
			// on (the boolean true) and a quoted "on" are two keys; keys
			// spelled apart that it reads as one are checkLoadable's.
			seen := make(map[string]*yaml.Node, len(it.n.Content)/2)
			for i := 0; i+1 < len(it.n.Content); i += 2 {
				k := it.n.Content[i]
				if k.Kind != yaml.ScalarNode {
					continue
				}
				id, ok := pyKeyIdentity(pyRead(k))
				if !ok {
					continue
				}
				if first, dup := seen[id]; dup && first.Value == k.Value {
					return errAt(k, "key %q appears twice in one mapping (first at line %d); YAML keeps only one of them: remove the other", k.Value, first.Line)
				}
				seen[id] = k
			}
		}
		for _, c := range it.n.Content {
			stack = append(stack, item{c, it.depth + 1})
		}
	}
	return nil
}

// checkAliases bounds the document as readers see it, with every alias
// expanded, and rejects an alias inside the node it refers to. yaml.v3 keeps
// an alias as a pointer, so a few lines of nested anchors can stand for
// billions of nodes, or for an infinite tree; copying or walking such a
// tree (expandAnchors, deepCopy of a stage) would never finish or would
// overflow the stack. Each node's expanded size and height are computed
// once; the expanded tree must nest no deeper than the written one may.
func checkAliases(root *yaml.Node) error {
	const inProgress = -1
	type extent struct{ size, height int }
	ext := map[*yaml.Node]extent{}
	var visit func(n *yaml.Node) (extent, error)
	visit = func(n *yaml.Node) (extent, error) {
		if e, ok := ext[n]; ok && e.size != inProgress {
			return e, nil
		}
		ext[n] = extent{size: inProgress}
		children := n.Content
		if n.Kind == yaml.AliasNode && n.Alias != nil {
			if ext[n.Alias].size == inProgress {
				return extent{}, errAt(n, "the alias *%s refers to a node that contains it, which makes the document infinite: write the values out instead", n.Value)
			}
			e, err := visit(n.Alias)
			ext[n] = e
			return e, err
		}
		total := extent{size: 1, height: 1}
		for _, c := range children {
			e, err := visit(c)
			if err != nil {
				return extent{}, err
			}
			if total.size += e.size; total.size > maxNodes {
				return extent{}, errAt(n, "the document has more than %d nodes once its aliases are expanded: write the values out instead of nesting aliases", maxNodes)
			}
			total.height = max(total.height, e.height+1)
		}
		ext[n] = total
		return total, nil
	}
	e, err := visit(root)
	if err != nil {
		return err
	}
	if e.height-1 <= maxDepth {
		return nil
	}
	// Point at the first alias on the deepest path.
	n := root
	for n.Kind != yaml.AliasNode && len(n.Content) > 0 {
		next := n.Content[0]
		for _, c := range n.Content {
			if ext[c].height > ext[next].height {
				next = c
			}
		}
		n = next
	}
	return errAt(n, "the document nests more than %d levels deep once its aliases are expanded: write the values out instead of nesting aliases", maxDepth)
}

// invalidUTF8Line finds the line of the first byte that is not UTF-8.
func invalidUTF8Line(src []byte) int {
	line := 1
	for len(src) > 0 {
		r, size := utf8.DecodeRune(src)
		if r == utf8.RuneError && size == 1 {
			return line
		}
		if r == '\n' {
			line++
		}
		src = src[size:]
	}
	return line
}
