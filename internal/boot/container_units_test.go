package boot

import (
	"os/exec"
	"strings"
	"testing"
)

// unitCommands are the commands of a service unit, as systemd runs them:
// ExecStartPre= in order, ExecStart=, then at a stop ExecStop= and
// ExecStopPost=, each with its environment (Environment=).
type unitCommands struct {
	unit  string
	pre   []unitCommand
	start []string
	stop  []unitCommand
	post  []unitCommand
	env   []string // NAME=VALUE
}

// unitCommand is one command line: its argv and whether its failure is
// ignored (the "-" prefix).
type unitCommand struct {
	argv   []string
	ignore bool
}

// readUnitCommands reads the commands of unit, an instance of template
// with its drop-in (either may be ""): the drop-in's lines after the
// template's, a list setting added to, ExecStart= the last one given.
func readUnitCommands(t *testing.T, unit, template, dropin string) unitCommands {
	t.Helper()
	u := unitCommands{unit: unit}
	for _, text := range []string{template, dropin} {
		section := ""
		for _, line := range strings.Split(text, "\n") {
			if strings.HasPrefix(line, "[") {
				section = strings.Trim(line, "[]")
				continue
			}
			key, value, ok := strings.Cut(line, "=")
			if section != "Service" || !ok || strings.HasPrefix(line, "#") {
				continue
			}
			switch key {
			case "Environment":
				u.env = append(u.env, environmentWords(t, `"`+strings.Trim(expandSpecifiers(t, value, unit), `"`)+`"`)...)
			case "ExecStartPre":
				u.pre = append(u.pre, commandOf(t, value, unit))
			case "ExecStart":
				u.start = commandOf(t, value, unit).argv
			case "ExecStop":
				u.stop = append(u.stop, commandOf(t, value, unit))
			case "ExecStopPost":
				u.post = append(u.post, commandOf(t, value, unit))
			}
		}
	}
	if u.start == nil {
		t.Fatalf("%s has no ExecStart=", unit)
	}
	return u
}

// commandOf reads one command line's prefixes and words.
func commandOf(t *testing.T, value, unit string) unitCommand {
	t.Helper()
	var c unitCommand
	for value != "" && strings.ContainsRune("-+@:!", rune(value[0])) {
		c.ignore = c.ignore || value[0] == '-'
		value = value[1:]
	}
	c.argv = systemdWords(t, value, unit)
	return c
}

// systemdWords splits a command line into words as systemd does
// (systemd.service(5), "Command lines"): at blanks, a double-quoted word
// taken whole with its backslash escapes undone, each word's specifiers
// expanded and $$ read as $. A $NAME fails the test: a container unit's
// command lines are whole.
func systemdWords(t *testing.T, line, unit string) []string {
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
		word := expandSpecifiers(t, w.String(), unit)
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

// expandSpecifiers expands what a system unit's specifiers stand for
// (systemd.unit(5), "Specifiers"): %t the system manager's runtime
// directory, %n the unit's name, %N without its suffix, %p the prefix
// before "@", %i the instance, %% a percent sign.
func expandSpecifiers(t *testing.T, s, unit string) string {
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

// commandFor is argv run as a unit would: podman's own commands with the
// engine configuration this machine needs (p.command), in netns, others
// as they are; each with the unit's environment.
func (p podman) commandFor(netns string, argv []string, env []string) *exec.Cmd {
	var cmd *exec.Cmd
	if argv[0] == p.path {
		cmd = p.command(netns, argv[1:]...)
	} else {
		cmd = exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(cmd.Environ(), p.env...)
	}
	cmd.Env = append(cmd.Env, env...)
	return cmd
}
