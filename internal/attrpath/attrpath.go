// Package attrpath names a value in the provider's inputs the way
// Terraform prints an attribute path (prefill.devices[1],
// container.mounts[0].target): the planner's diagnostics and the
// container checks both speak it, so a problem found in either lands at
// the attribute a user wrote.
package attrpath

import (
	"strconv"
	"strings"
)

// Step is one step of a path: an attribute (or object key) name, or a list
// index when Name is empty.
type Step struct {
	Name  string
	Index int
}

// Path is a sequence of steps from the schema's root.
type Path []Step

// Of builds a path of attribute names.
func Of(names ...string) Path {
	p := make(Path, len(names))
	for i, n := range names {
		p[i] = Step{Name: n}
	}
	return p
}

// Attr extends the path with an attribute name, never sharing p's storage.
func (p Path) Attr(name string) Path {
	return append(p[:len(p):len(p)], Step{Name: name})
}

// Index extends the path with a list index, never sharing p's storage.
func (p Path) Index(i int) Path {
	return append(p[:len(p):len(p)], Step{Index: i})
}

// String renders the path as Terraform prints one: prefill.devices[1].
func (p Path) String() string {
	var b strings.Builder
	for i, s := range p {
		switch {
		case s.Name == "":
			b.WriteString("[" + strconv.Itoa(s.Index) + "]")
		case i > 0:
			b.WriteString("." + s.Name)
		default:
			b.WriteString(s.Name)
		}
	}
	return b.String()
}
