package provider

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// The guides' shell commands are written for the default plan (the model
// alone): every systemd unit and port they name must be one that plan
// renders, so a renamed unit or a moved port fails here and not on a
// user's machine.
func TestDocs_ShellCommandsNameTheDefaultPlan(t *testing.T) {
	result, diags := pipeline.Plan(pipeline.Spec{Model: "Qwen/Qwen3-Omni-30B-A3B-Instruct"})
	if result == nil || diags.HasErrors() {
		t.Fatalf("the default plan fails: %v", diags)
	}
	units := map[string]bool{}
	for _, l := range result.Launches {
		for _, p := range l.Processes {
			units[p.UnitName] = true
		}
	}
	ports := map[int]bool{result.APIPort: true}
	for _, p := range result.Ports {
		ports[p.Port] = true
	}

	named := 0
	for _, block := range docSnippets(t, shellFence) {
		text := strings.TrimPrefix(block.text, "\n")
		for _, u := range unitToken.FindAllString(text, -1) {
			named++
			if !units[u] {
				t.Errorf("%s names %s; the default plan's units are %v", block.where, u, keysInOrder(units))
			}
		}
		for _, m := range portToken.FindAllStringSubmatch(text, -1) {
			named++
			if n, _ := strconv.Atoi(m[1]); !ports[n] {
				t.Errorf("%s names port %s; the default plan listens on %v", block.where, m[1], keysInOrder(ports))
			}
		}
	}
	// Guard against a scan that finds nothing: get-started and verify
	// name the head's unit, decode's, and the API port.
	if named < 6 {
		t.Errorf("found %d units and ports in the guides' shell blocks; they name more", named)
	}
}

// holdsGuideLogChecks wants a check script that checks the verify
// guide's log lines, in their order, with the guide's unit names
// (vllm-omni-stage@N.service) under unitPrefix: the pd-pipeline module
// writes them into check_commands_by_host for the plan's own units. A
// guide's `journalctl ... | grep -F 'TEXT'` is the check script's
// --log UNIT TEXT, and `! journalctl ... | grep -F -e 'A' -e 'B'` its
// --no-log UNIT A and --no-log UNIT B.
func holdsGuideLogChecks(unitPrefix string) outputCheck {
	return func(t *testing.T, got any) error {
		s, ok := got.(string)
		if !ok {
			return fmt.Errorf("got %s, want a script", jsonText(got))
		}
		words, _, err := scriptArgv(t, s)
		if err != nil {
			return err
		}
		i := 0
		for _, want := range guideLogChecks(t, unitPrefix) {
			for i+len(want) <= len(words) && !slices.Equal(words[i:i+len(want)], want) {
				i++
			}
			if i+len(want) > len(words) {
				return fmt.Errorf("the verify guide's check %q is not in the script (in its order):\n%s", want, s)
			}
			i += len(want)
		}
		return nil
	}
}

// guideLog is one of the verify guide's log checks: whether it wants the
// lines absent, the unit, and the texts grep looks for.
var guideLog = regexp.MustCompile(`^(! )?journalctl -b --no-pager -u (\S+) \| grep -F (.+)$`)

// guideLogChecks reads the verify guide's journalctl lines as the check
// script's --log and --no-log checks, with its unit names under
// unitPrefix.
func guideLogChecks(t *testing.T, unitPrefix string) [][]string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "..", "templates", "guides", "verify.md.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	var checks [][]string
	for _, block := range shellBlocks(string(src)) {
		for line := range strings.SplitSeq(strings.TrimSuffix(block.text, "\n"), "\n") {
			if !strings.Contains(line, "journalctl ") {
				continue
			}
			m := guideLog.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("the verify guide's %q is not a log check this test reads", line)
			}
			opt, unit := "--log", strings.ReplaceAll(m[2], "vllm-omni-stage@", unitPrefix+"-stage@")
			if m[1] != "" {
				opt = "--no-log"
			}
			for _, text := range regexp.MustCompile(`'([^']*)'`).FindAllStringSubmatch(m[3], -1) {
				checks = append(checks, []string{opt, unit, text[1]})
			}
		}
	}
	if len(checks) < 3 {
		t.Fatalf("the verify guide holds %d journalctl checks; it writes the head's and decode's", len(checks))
	}
	return checks
}

// allOf wants the value to pass every check.
func allOf(checks ...outputCheck) outputCheck {
	return func(t *testing.T, got any) error {
		for _, c := range checks {
			if err := c(t, got); err != nil {
				return err
			}
		}
		return nil
	}
}

var (
	shellFence = regexp.MustCompile("(?m)^```shell\\s*$")
	unitToken  = regexp.MustCompile(`[A-Za-z0-9_.@-]+\.service\b`)
	// A port in a URL (http://host:8091/...) or a bash /dev/tcp path.
	portToken = regexp.MustCompile(`(?::|/dev/tcp/[^/\s]+/)(\d{2,5})\b`)
)

// shellBlocks returns the shell code blocks of a Markdown text, each
// without the fence line's newline.
func shellBlocks(md string) []snippet {
	blocks := codeBlocks(md, shellFence)
	for i := range blocks {
		blocks[i].text = strings.TrimPrefix(blocks[i].text, "\n")
	}
	return blocks
}

func keysInOrder[K cmp.Ordered](m map[K]bool) []K {
	return slices.Sorted(maps.Keys(m))
}
