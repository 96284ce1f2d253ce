package boot

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
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
				u.env = append(u.env, environmentWords(t, `"`+strings.Trim(testtool.SystemdSpecifiers(t, value, unit), `"`)+`"`)...)
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
	c.argv = testtool.SystemdWords(t, value, unit)
	return c
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
