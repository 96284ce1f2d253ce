package stageconfig

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// nested returns a stage_args document whose first stage holds a value
// nested depth flow sequences deep.
func nested(depth int) string {
	return "stage_args:\n  - stage_id: 0\n    x: " + strings.Repeat("[", depth) + strings.Repeat("]", depth) + "\n"
}

// aliasBomb builds anchors that each repeat the previous one ten times, so
// that levels+1 short lines stand for 10^(levels+1) scalars.
func aliasBomb(levels int) string {
	var b strings.Builder
	b.WriteString("l0: &l0 [a, a, a, a, a, a, a, a, a, a]\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "l%d: &l%d [", i, i)
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*l%d", i-1)
		}
		b.WriteString("]\n")
	}
	fmt.Fprintf(&b, "stage_args:\n  - stage_id: 0\n    x: *l%d\n", levels)
	return b.String()
}

// TestParseErrors feeds Parse the inputs it must refuse. Each error must
// be a *ParseError that points at the right line (when one exists) and
// says what is wrong in words a user can act on.
func TestParseErrors(t *testing.T) {
	// Syntax errors come from yaml.v3, which names the line where the
	// construct it was reading began, counted from 0 for parser errors: an
	// unclosed list opened on line 3 is reported on line 2. The table pins
	// those lines so that a change in the wrapping shows up.
	tests := []struct {
		name string
		src  string
		line int    // expected ParseError.Line; 0 = no line
		want string // fragment of the message
	}{
		{"malformed flow list", "stage_args:\n  - stage_id: 0\n    engine_input_source: [0\n", 2, "did not find expected ',' or ']'"},
		{"malformed indentation", "stage_args:\n  - stage_id: 0\n   runtime: {}\n", 1, "did not find expected '-' indicator"},
		{"tab indentation", "stage_args:\n\t- stage_id: 0\n", 2, "cannot start any token"},
		{"neither dialect", "runtime:\n  enabled: true\n", 1, "neither `stage_args:` nor `stages:`"},
		{"both dialects", "stages: []\nstage_args: []\n", 2, "both `stage_args:` and `stages:`"},
		{"empty document", "", 1, "empty"},
		{"only whitespace", "  \n\n", 1, "empty"},
		{"only a comment", "# nothing here\n", 1, "empty"},
		{"null document", "---\n", 2, "expected a mapping"},
		{"top level is a list", "- stage_id: 0\n", 1, "expected a mapping"},
		{"top level is a scalar", "stage_args\n", 1, "expected a mapping"},
		{"two documents", "stage_args: []\n---\nstages: []\n", 2, "second YAML document"},
		{"two documents, second empty", "stage_args: []\n---\n", 2, "second YAML document"},
		{"second document malformed", "stage_args: []\n---\n[\n", 3, "did not find expected node content"},
		{"duplicate top-level key", "stage_args: []\nstage_args: []\n", 2, `key "stage_args" appears twice`},
		{"duplicate stage key", "stage_args:\n  - stage_id: 0\n    stage_id: 1\n", 3, `key "stage_id" appears twice`},
		{"duplicate nested key", "stage_args:\n  - engine_args:\n      max_num_seqs: 1\n      max_num_seqs: 2\n", 4, "first at line 3"},
		{"non-UTF-8 on line 3", "stage_args:\n  - stage_id: 0\n    x: \xff\xfe\n", 3, "not valid UTF-8"},
		{"non-UTF-8 on line 1", "\xc3\x28: 1\n", 1, "not valid UTF-8"},
		{"too large", "stage_args: []\n#" + strings.Repeat("x", maxBytes), 0, "limit is 1048576 bytes"},
		{"too deep", nested(maxDepth + 1), 3, "nests more than 64 levels"},
		{"stage_args is a mapping", "stage_args:\n  stage_id: 0\n", 2, "`stage_args:` must be a list"},
		{"stage_args is null", "stage_args:\n", 1, "`stage_args:` must be a list"},
		{"stage_args is a string", "stage_args: thinker\n", 1, "`stage_args:` must be a list"},
		{"stages is a mapping", "stages: {}\n", 1, "`stages:` must be a list"},
		{"stage is a scalar", "stage_args:\n  - stage_id: 0\n  - 3\n", 3, "must be a mapping that describes one stage"},
		{"stage is a list", "stages:\n  - [stage_id, 0]\n", 2, "must be a mapping"},
		{"stage is null", "stages:\n  -\n", 2, "must be a mapping"},
		{"stage is an alias to a scalar", "x: &a 3\nstage_args: [*a]\n", 2, "must be a mapping"},
		{"undefined alias", "stage_args:\n  - *missing\n", 2, "unknown anchor"},
		{"recursive alias", "stage_args:\n  - &s\n    stage_id: 0\n    x: [*s]\n", 4, "refers to a node that contains it"},
		{"alias bomb", aliasBomb(6), 6, "once its aliases are expanded"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse([]byte(tc.src))
			if err == nil {
				t.Fatalf("Parse succeeded (dialect %q); want an error", d.Dialect)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *ParseError", err, err)
			}
			if pe.line != tc.line {
				t.Errorf("Line = %d, want %d (error: %v)", pe.line, tc.line, err)
			}
			if tc.line > 0 && !strings.Contains(err.Error(), fmt.Sprintf("line %d", tc.line)) {
				t.Errorf("error %q does not name line %d", err, tc.line)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if pe.Msg == "" {
				t.Errorf("empty message")
			}
		})
	}
}

// TestParseLimitsAreInclusive checks the limits refuse only what is over
// them: a config at exactly maxDepth or maxBytes still parses.
func TestParseLimitsAreInclusive(t *testing.T) {
	if _, err := Parse([]byte(nested(maxDepth - 3))); err != nil {
		t.Errorf("depth at the limit refused: %v", err)
	}
	src := "stage_args: []\n#"
	src += strings.Repeat("x", maxBytes-len(src))
	if len(src) != maxBytes {
		t.Fatalf("built %d bytes", len(src))
	}
	if _, err := Parse([]byte(src)); err != nil {
		t.Errorf("document of exactly maxBytes refused: %v", err)
	}
	// Aliases that expand to a modest size are ordinary YAML and stay legal.
	if _, err := Parse([]byte(aliasBomb(3))); err != nil {
		t.Errorf("a small alias tree refused: %v", err)
	}
}

func TestParseDialect(t *testing.T) {
	for _, s := range []string{"stage_args", "stages"} {
		d, err := ParseDialect(s)
		if err != nil || string(d) != s {
			t.Errorf("ParseDialect(%q) = %q, %v", s, d, err)
		}
	}
	for _, s := range []string{"", "Stages", "stage-args", "yaml"} {
		if _, err := ParseDialect(s); err == nil || !strings.Contains(err.Error(), `"stage_args" or "stages"`) {
			t.Errorf("ParseDialect(%q) error = %v, want one naming both dialects", s, err)
		}
	}
}

func TestParseErrorString(t *testing.T) {
	for _, tc := range []struct {
		e    ParseError
		want string
	}{
		{ParseError{line: 3, column: 7, Msg: "m"}, "line 3, column 7: m"},
		{ParseError{line: 3, Msg: "m"}, "line 3: m"},
		{ParseError{Msg: "m"}, "m"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%+v.Error() = %q, want %q", tc.e, got, tc.want)
		}
	}
}
