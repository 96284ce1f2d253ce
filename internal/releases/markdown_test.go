package releases

import (
	"os"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/presets"
)

// The committed docs page is what the table renders: `go generate
// ./internal/releases` (make docs) writes it.
func TestMarkdown_Committed(t *testing.T) {
	const path = "../../templates/guides/vllm-omni-releases.md.tmpl"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != Markdown(presets.Names(), presets.Shared) {
		t.Errorf("%s is stale: run go generate ./internal/releases (make docs)", path)
	}
}

func TestMarkdown_Content(t *testing.T) {
	md := Markdown(presets.Names(), presets.Shared)
	for _, r := range Table {
		if !strings.Contains(md, "| "+r.Version+" |") {
			t.Errorf("release %s has no row", r.Version)
		}
	}
	if !strings.Contains(md, "from "+Newest().Version+", the newest release this provider version knows, to "+Table[0].Version+",") {
		t.Error("the page does not state the table's range")
	}
	for _, c := range pdValidator.Checks {
		if checkText[c] == "" {
			t.Errorf("check %s has no description", c)
		}
	}
	if strings.Contains(md, "{{") {
		t.Error("the page holds a template action")
	}
	for _, d := range SeedDeviations {
		if !strings.Contains(md, d.Source) {
			t.Errorf("deviation %v is not listed with its source", d.Key)
		}
	}
}
