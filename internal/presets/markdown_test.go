package presets

import (
	"os"
	"strings"
	"testing"
)

// The committed docs page is what the tables render: `go generate
// ./internal/presets` (make docs) writes it.
func TestMarkdown_Committed(t *testing.T) {
	const path = "../../templates/guides/models.md.tmpl"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != Markdown() {
		t.Errorf("%s is stale: run go generate ./internal/presets (make docs)", path)
	}
}

func TestMarkdown_Content(t *testing.T) {
	md := Markdown()
	for _, v := range Variants {
		if !strings.Contains(md, "| `"+v.ID+"` | `"+v.Preset+"` | "+v.Source+" |") {
			t.Errorf("%s has no row with its preset and source", v.ID)
		}
	}
	for _, name := range Names() {
		if !strings.Contains(md, "| `"+name+"` | "+Pipeline(name)+" |") {
			t.Errorf("preset %s has no row", name)
		}
	}
	if strings.Contains(md, "{{") {
		t.Error("the page holds a template action")
	}
}
