package provider

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// fakeCheckStatus is what the python3 that scriptArgv puts on PATH exits
// with: a script of one command exits with it too.
const fakeCheckStatus = 3

// isCheckScript wants the script the examples hand the operator to check
// one machine: the comment line (a line that starts with "~" is a regular
// expression it must match), then one command, the check script's
// machine, one check a line, each line but the last continued with a
// backslash. groups are the command's words as bash reads them, one group
// a line; a word that starts with "~" is a regular expression the whole
// word must match. The script's exit status must be the command's, so
// that it fails when a check does.
func isCheckScript(comment string, groups ...[]string) outputCheck {
	return func(t *testing.T, got any) error {
		s, ok := got.(string)
		if !ok {
			return fmt.Errorf("got %s, want a script", jsonText(got))
		}
		lines := strings.Split(s, "\n")
		if len(lines) != len(groups)+1 {
			return fmt.Errorf("%d lines, want a comment and %d lines of one command:\n%s", len(lines), len(groups), s)
		}
		if err := matchWord(comment, lines[0]); err != nil {
			return fmt.Errorf("line 1: %w", err)
		}
		for i, line := range lines[1:] {
			last := i == len(groups)-1
			if strings.HasSuffix(line, ` \`) == last {
				return fmt.Errorf("line %d is %q: every line of the command but the last ends in a backslash", i+2, line)
			}
			indent := "  "
			if i == 0 {
				indent = ""
			}
			if !strings.HasPrefix(line, indent+groups[i][0]+" ") && line != indent+groups[i][0] && line != indent+groups[i][0]+` \` {
				return fmt.Errorf("line %d is %q, want it to start with %q", i+2, line, indent+groups[i][0])
			}
		}
		words, status, err := scriptArgv(t, s)
		if err != nil {
			return err
		}
		want := slices.Concat(groups...)
		if len(words) != len(want) {
			return fmt.Errorf("bash runs %q, want %q", words, want)
		}
		for i, w := range want {
			if err := matchWord(w, words[i]); err != nil {
				return fmt.Errorf("word %d: %w; bash runs %q", i+1, err, words)
			}
		}
		if status != fakeCheckStatus {
			return fmt.Errorf("the script exits %d where its command exits %d", status, fakeCheckStatus)
		}
		return nil
	}
}

// matchWord is nil when got is want, or matches it where want starts
// with "~".
func matchWord(want, got string) error {
	if re, ok := strings.CutPrefix(want, "~"); ok {
		if !regexp.MustCompile(`^(?:` + re + `)$`).MatchString(got) {
			return fmt.Errorf("%q does not match %s", got, re)
		}
		return nil
	}
	if got != want {
		return fmt.Errorf("%q, want %q", got, want)
	}
	return nil
}

// scriptArgv runs a check script with bash, with a python3 on PATH that
// records its words (its own name first) and exits fakeCheckStatus, and
// returns the words and the script's status.
func scriptArgv(t *testing.T, script string) ([]string, int, error) {
	t.Helper()
	bash := testtool.Need(t, "bash")
	dir := t.TempDir()
	record := filepath.Join(dir, "words")
	fake := fmt.Sprintf("#!/bin/sh\nprintf '%%s\\0' \"${0##*/}\" \"$@\" > '%s'\nexit %d\n", record, fakeCheckStatus)
	if err := os.WriteFile(filepath.Join(dir, "python3"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bash, "-c", script)
	cmd.Env = []string{"PATH=" + dir}
	out, err := cmd.CombinedOutput()
	status := testtool.ExitStatus(t, err)
	recorded, err := os.ReadFile(record)
	if err != nil {
		return nil, status, fmt.Errorf("bash ran no python3 (status %d): %s", status, out)
	}
	words := strings.Split(string(bytes.TrimSuffix(recorded, []byte{0})), "\x00")
	return words, status, nil
}
