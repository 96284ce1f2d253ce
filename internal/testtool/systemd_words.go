package testtool

import (
	"strings"
	"testing"
)

// SystemdWords splits a unit's command line into the argv systemd hands
// the executable (systemd.service(5), "Command lines"), as the tests read
// one independently of the renderer: words split at blanks, a
// double-quoted word taken whole with its backslash escapes undone, each
// word's specifiers expanded (SystemdSpecifiers) and $$ read as $. A
// $NAME fails the test: the lines it reads are whole.
func SystemdWords(t testing.TB, line, unit string) []string {
	t.Helper()
	var words []string
	for i := 0; i < len(line); {
		if line[i] == ' ' {
			i++
			continue
		}
		var w strings.Builder
		if line[i] == '"' {
			for i++; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				w.WriteByte(line[i])
			}
			if i == len(line) {
				t.Fatalf("%s: an unterminated quote in %s", unit, line)
			}
			i++
		} else {
			for ; i < len(line) && line[i] != ' '; i++ {
				w.WriteByte(line[i])
			}
		}
		word := SystemdSpecifiers(t, w.String(), unit)
		for j := strings.IndexByte(word, '$'); j >= 0; j = strings.IndexByte(word, '$') {
			if j+1 == len(word) || word[j+1] != '$' {
				t.Fatalf("%s: %q names a variable for systemd to expand", unit, word)
			}
			word = word[:j] + "\x00" + word[j+2:]
		}
		words = append(words, strings.ReplaceAll(word, "\x00", "$"))
	}
	return words
}

// SystemdSpecifiers expands what a system unit's specifiers stand for
// (systemd.unit(5), "Specifiers"): %t the system manager's runtime
// directory, %n the unit's name, %N without its suffix, %p the prefix
// before "@", %i the instance, %% a percent sign. Another fails the test.
func SystemdSpecifiers(t testing.TB, s, unit string) string {
	t.Helper()
	name := strings.TrimSuffix(unit, ".service")
	prefix, instance, _ := strings.Cut(name, "@")
	values := map[byte]string{'t': "/run", 'n': unit, 'N': name, 'p': prefix, 'i': instance, '%': "%"}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+1 == len(s) || values[s[i+1]] == "" {
			t.Fatalf("%s: a specifier this test does not expand in %q", unit, s)
		}
		b.WriteString(values[s[i+1]])
		i++
	}
	return b.String()
}
