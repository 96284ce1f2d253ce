// Package systemd renders systemd service units from values. Every value
// that reaches a unit is quoted the way systemd reads it back: command
// lines word by word (systemd.service(5), "Command lines"), environment
// assignments as one quoted word, and `%` specifiers and `$` variables
// escaped wherever systemd would expand them.
package systemd

import (
	"fmt"
	"path"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/envvar"
)

// Directive is one line of a section, with an optional comment above it
// that says why it is there.
type Directive struct {
	Key, Value string
	Comment    string
}

// Section is a named section of a unit, its directives in order.
type Section struct {
	Name       string
	Directives []Directive
}

// Unit is a unit file: a head comment and its sections.
type Unit struct {
	Comment  string
	Sections []Section
}

// Render writes the unit. The output depends only on the value.
func (u Unit) Render() string {
	var b strings.Builder
	b.Grow(u.size())
	for _, line := range splitComment(u.Comment) {
		b.WriteString("# " + line + "\n")
	}
	for i, s := range u.Sections {
		if i > 0 || u.Comment != "" {
			b.WriteString("\n")
		}
		b.WriteString("[" + s.Name + "]\n")
		for _, d := range s.Directives {
			for _, line := range splitComment(d.Comment) {
				b.WriteString("# " + line + "\n")
			}
			b.WriteString(d.Key + "=" + d.Value + "\n")
		}
	}
	return b.String()
}

// size is at least the length of the rendered unit, so that Render
// writes into one buffer.
func (u Unit) size() int {
	comment := func(c string) int {
		if c == "" {
			return 0
		}
		return len(c) + 3*(strings.Count(c, "\n")+1) // "# " and "\n" per line
	}
	n := comment(u.Comment)
	for _, s := range u.Sections {
		n += len(s.Name) + 4 // "\n[" and "]\n"
		for _, d := range s.Directives {
			n += comment(d.Comment) + len(d.Key) + len(d.Value) + 2
		}
	}
	return n
}

func splitComment(c string) []string {
	if c == "" {
		return nil
	}
	return strings.Split(c, "\n")
}

// Command renders an argv as a systemd command line: each argument quoted
// when it holds anything systemd would split on or interpret, `$` as `$$`
// and `%` as `%%` so that neither variable nor specifier expansion applies.
// The first word is written as it is and must be a plain absolute path:
// systemd neither unquotes nor expands it, and refuses special characters
// there.
func Command(argv []string) (string, error) {
	if len(argv) == 0 {
		return "", fmt.Errorf("a systemd command needs an executable")
	}
	if err := PlainPath(argv[0]); err != nil {
		return "", err
	}
	words := make([]string, len(argv))
	words[0] = argv[0]
	for i, a := range argv {
		if i == 0 {
			continue
		}
		w, err := Arg(a)
		if err != nil {
			return "", err
		}
		words[i] = w
	}
	return strings.Join(words, " "), nil
}

// Arg quotes one argument after the executable, as Command does: a
// command line is its executable and its quoted arguments joined with
// spaces, so a caller can quote an argument it passes often just once.
func Arg(a string) (string, error) {
	for _, r := range a {
		if r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("%q holds a control character, which has no place on a systemd command line", a)
		}
		if envvar.Noncharacter(r) {
			return "", fmt.Errorf("%q holds the noncharacter %U, with which systemd refuses to load the unit", a, r)
		}
	}
	escaped := Escape(a)
	if a != "" && !strings.ContainsAny(a, " \t\"'\\;") {
		return escaped, nil
	}
	escaped = strings.ReplaceAll(escaped, `\`, `\\`)
	escaped = strings.ReplaceAll(escaped, `"`, `\"`)
	return `"` + escaped + `"`, nil
}

// Escape doubles `$` and `%`, which systemd expands in command-line
// arguments.
func Escape(s string) string {
	s = strings.ReplaceAll(s, "%", "%%")
	return strings.ReplaceAll(s, "$", "$$")
}

// Specifiers doubles `%`, which systemd expands in most settings; `$` is
// literal outside command lines.
func Specifiers(s string) string { return strings.ReplaceAll(s, "%", "%%") }

// PlainPath checks a path systemd takes as it is (an executable, a
// ReadWritePaths or EnvironmentFile entry): absolute, normalized, and
// without the characters systemd would split on, unquote, expand or join
// lines at.
func PlainPath(p string) error {
	switch {
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("%q is not an absolute path", p)
	case path.Clean(p) != p:
		return fmt.Errorf("%q is not a normalized path (no trailing /, no // or ..)", p)
	case strings.ContainsFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f || strings.ContainsRune("\\\"'$%;", r) }):
		return fmt.Errorf("%q holds a space, a control character, a quote, a backslash, $, %% or ;, which systemd would read otherwise; use a plain path", p)
	case strings.ContainsFunc(p, envvar.Noncharacter):
		return fmt.Errorf("%q holds a Unicode noncharacter, with which systemd refuses to load the unit; use a plain path", p)
	}
	return nil
}

// Environment renders one Environment= value: "NAME=value" as one quoted
// word, `%` escaped (systemd does not expand `$` there). A variable that
// envvar's rule refuses, which systemd would ignore or could not read, is
// an error.
func Environment(name, value string) (string, error) {
	if err := envvar.Check(name, value); err != nil {
		return "", fmt.Errorf("environment %q: %v", name, err)
	}
	v := strings.ReplaceAll(name+"="+value, "%", "%%")
	v = strings.ReplaceAll(v, `\`, `\\`)
	v = strings.ReplaceAll(v, `"`, `\"`)
	return `"` + v + `"`, nil
}
