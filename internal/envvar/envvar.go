// Package envvar is the one rule for an environment variable the plan
// writes: into the deploy config (a stage's runtime.env), into a unit's
// Environment= lines, and into a process's env, which users pass to a
// shell. A variable passes only when every one of those carries it
// unchanged:
//
//   - systemd takes a name of ASCII letters, digits and `_`, not empty and
//     not starting with a digit (src/basic/env-util.c, env_name_is_valid;
//     systemd.exec(5), Environment=), and a value that is valid UTF-8
//     (env_value_is_valid); any other assignment it logs as "Invalid
//     environment assignment, ignoring" and starts the unit without it.
//     A Unicode noncharacter (U+FDD0-U+FDEF, U+xFFFE, U+xFFFF) is not
//     "UTF-8 clean" to its unit file parser (utf8.c, unichar_is_valid),
//     which then fails to load the whole unit (systemd-analyze verify 252:
//     "String is not UTF-8 clean, ignoring assignment", then "failed to
//     load properly").
//   - A POSIX shell takes `NAME=value` as an assignment only for such a
//     name (XBD 3.235, Name).
//   - A unit's line cannot hold a newline as written, and the renderer
//     escapes no control character, so a value with a newline, a tab or
//     any other control character (C0, DEL, C1) is refused.
package envvar

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Name says what is wrong with an environment variable's name, or nil.
func Name(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("the name is empty")
	case name[0] >= '0' && name[0] <= '9':
		return fmt.Errorf("the name %q starts with a digit", name)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !nameByte(c) {
			return fmt.Errorf("the name %q holds %q, where only ASCII letters, digits and _ may be", name, rune(c))
		}
	}
	return nil
}

// Value says what is wrong with an environment variable's value, or nil.
func Value(v string) error {
	if !utf8.ValidString(v) {
		return fmt.Errorf("the value is not valid UTF-8")
	}
	for _, r := range v {
		if Noncharacter(r) {
			return fmt.Errorf("the value holds the noncharacter %U, with which systemd does not load the unit", r)
		}
		if unicode.IsControl(r) {
			what := "a control character"
			switch r {
			case '\n':
				what = "a newline"
			case '\r':
				what = "a carriage return"
			case '\t':
				what = "a tab"
			}
			return fmt.Errorf("the value holds %s (%U), which a unit's Environment= line cannot carry", what, r)
		}
	}
	return nil
}

// Check is Name and Value together.
func Check(name, value string) error {
	if err := Name(name); err != nil {
		return err
	}
	return Value(value)
}

// Noncharacter reports whether r is one of Unicode's 66 noncharacters:
// systemd refuses to load a unit that holds one anywhere, so no text the
// plan writes into a unit may.
func Noncharacter(r rune) bool {
	return r >= 0xfdd0 && r <= 0xfdef || r&0xfffe == 0xfffe
}

// nameByte reports whether c may be in a name.
func nameByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
