package diagcode

import (
	"os"
	"strings"
	"testing"
)

// The committed docs page is what the catalogue renders: `go generate
// ./internal/diagcode` (make docs) writes it.
func TestMarkdown_Committed(t *testing.T) {
	const path = "../../templates/guides/diagnostics.md.tmpl"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != Markdown() {
		t.Errorf("%s is stale: run go generate ./internal/diagcode (make docs)", path)
	}
}

func TestMarkdown_Content(t *testing.T) {
	md := Markdown()
	for _, a := range Areas() {
		if !strings.Contains(md, "\n## "+a.Title+"\n") || !strings.Contains(md, "](#"+anchor(a.Title)+")") {
			t.Errorf("area %q has no section or no link to it", a.Title)
		}
		for _, e := range a.Entries {
			row := "| `" + e.Code.String() + "` | " + e.Severity.String() + " | " + e.Meaning + " | " + e.Fix + " |\n"
			if strings.Count(md, "| `"+e.Code.String()+"` |") != 1 || !strings.Contains(md, row) {
				t.Errorf("%s has no row of its own", e.Code)
			}
		}
	}
	if strings.Contains(md, "{{") {
		t.Error("the page holds a template action")
	}
	if !strings.HasSuffix(md, "|\n") || strings.HasSuffix(md, "\n\n") {
		t.Error("the page does not end with its last row and one newline")
	}
}

func TestAnchor(t *testing.T) {
	for title, want := range map[string]string{
		"Placement: GPUs, devices and memory":      "placement-gpus-devices-and-memory",
		"stage_overrides":                          "stage_overrides",
		"vllm-omni release and the planned output": "vllm-omni-release-and-the-planned-output",
		"A release's own checks":                   "a-releases-own-checks",
	} {
		if got := anchor(title); got != want {
			t.Errorf("anchor(%q) = %q, want %q", title, got, want)
		}
	}
}
