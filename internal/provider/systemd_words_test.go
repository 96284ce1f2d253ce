package provider

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
)

// unitLine is the value of a unit's first key= line; "" when it has none.
func unitLine(unit, key string) string {
	for _, line := range strings.Split(unit, "\n") {
		if v, ok := strings.CutPrefix(line, key+"="); ok {
			return v
		}
	}
	return ""
}

// dropInEnvironment reads a drop-in's Environment= assignments.
func dropInEnvironment(dropIn string) (map[string]string, error) {
	env := map[string]string{}
	for _, line := range strings.Split(dropIn, "\n") {
		v, ok := strings.CutPrefix(line, "Environment=")
		if !ok {
			continue
		}
		words, err := systemdWords(v, "", nil)
		if err != nil {
			return nil, err
		}
		for _, w := range words {
			name, value, _ := strings.Cut(w, "=")
			env[name] = value
		}
	}
	return env, nil
}

var unbracedVariable = regexp.MustCompile(`^\$([A-Za-z_][A-Za-z0-9_]*)$`)

// systemdWords reads a command line as systemd does (systemd.service(5),
// "Command lines", and systemd.unit(5), "Specifiers"): words split at
// whitespace, a double-quoted word unquoted with its backslash escapes,
// then %i as instance and %% as %, then, at exec time, a word that is an
// unbraced $NAME replaced by NAME's value split at whitespace, and $$ as $.
// A test's own reading, to hand what the units run to the tests that check
// it.
func systemdWords(line, instance string, env map[string]string) ([]string, error) {
	var words []string
	for i := 0; i < len(line); {
		if line[i] == ' ' || line[i] == '\t' {
			i++
			continue
		}
		var w strings.Builder
		quoted := line[i] == '"'
		if quoted {
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				if line[i] == '\\' && i+1 < len(line) {
					i++
				}
				w.WriteByte(line[i])
			}
			if i == len(line) {
				return nil, fmt.Errorf("unterminated quote in %q", line)
			}
			i++
		} else {
			for ; i < len(line) && line[i] != ' ' && line[i] != '\t'; i++ {
				w.WriteByte(line[i])
			}
		}
		word := w.String()
		if m := unbracedVariable.FindStringSubmatch(word); m != nil && !quoted {
			words = append(words, strings.Fields(env[m[1]])...)
			continue
		}
		word = strings.NewReplacer("%%", "%", "%i", instance, "$$", "$").Replace(word)
		words = append(words, word)
	}
	return words, nil
}

// processCommand is what one stage's unit runs, as systemd expands it: the
// template's ExecStart with the stage id for %i and its drop-in's
// variables.
func processCommand(attrs map[string]string, prefix string) ([]string, error) {
	env, err := dropInEnvironment(attrs[prefix+".systemd_dropin.content"])
	if err != nil {
		return nil, err
	}
	return systemdWords(unitLine(attrs["systemd_unit.content"], "ExecStart"), attrs[prefix+".stage_id"], env)
}

// vllmArgs are the words of a unit's command after the preflight's `--`:
// vllm and its arguments.
func vllmArgs(words []string) []string {
	for i, w := range words {
		if w == "--" {
			return words[i+1:]
		}
	}
	return nil
}

// unitLines checks a unit that holds each of lines as a whole line, in any
// order.
func unitLines(lines ...string) knownvalue.Check { return unitLinesCheck(lines) }

type unitLinesCheck []string

func (c unitLinesCheck) CheckValue(v any) error {
	s, ok := v.(string)
	if !ok {
		return fmt.Errorf("expected a string, got %T", v)
	}
	have := map[string]bool{}
	for _, line := range strings.Split(s, "\n") {
		have[line] = true
	}
	for _, want := range c {
		if !have[want] {
			return fmt.Errorf("the unit has no line %q:\n%s", want, s)
		}
	}
	return nil
}

func (c unitLinesCheck) String() string { return fmt.Sprintf("a unit with the lines %q", []string(c)) }

// allOfChecks passes when every check does.
func allOfChecks(checks ...knownvalue.Check) knownvalue.Check { return allOfKnown(checks) }

type allOfKnown []knownvalue.Check

func (c allOfKnown) CheckValue(v any) error {
	for _, check := range c {
		if err := check.CheckValue(v); err != nil {
			return err
		}
	}
	return nil
}

func (c allOfKnown) String() string { return fmt.Sprintf("all of %v", []knownvalue.Check(c)) }
