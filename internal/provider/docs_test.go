package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/config"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
)

// What the cloud-init guide and the entity pages say about values at plan
// time, run: a data source that reads the resource (standing in for a
// data "cloudinit_config") waits for apply whenever the resource has a
// change pending, and is read in the plan once it has none; a data source
// that reads the data source, and a local document built from the
// resource, are known in every plan.
func TestDocs_DataSourceReadingTheResourceWaitsForApply(t *testing.T) {
	cfg := `
variable "decode_seqs" {
  type = number
}

resource "omni_pd_pipeline" "this" {
  model  = "` + seedModel + `"
  decode = { max_num_seqs = var.decode_seqs }
}

data "omni_pd_pipeline" "this" {
  model  = "` + seedModel + `"
  decode = { max_num_seqs = var.decode_seqs }
}

data "omni_pd_pipeline" "reads_resource" {
  model       = "` + seedModel + `"
  config_path = omni_pd_pipeline.this.config_path
}

data "omni_pd_pipeline" "reads_data_source" {
  model       = "` + seedModel + `"
  config_path = data.omni_pd_pipeline.this.config_path
}

output "resource" { value = omni_pd_pipeline.this.serve_command }
output "document" { value = yamlencode({ path = omni_pd_pipeline.this.config_path, content = omni_pd_pipeline.this.config_yaml }) }
output "reads_resource" { value = data.omni_pd_pipeline.reads_resource.serve_command }
output "reads_data_source" { value = data.omni_pd_pipeline.reads_data_source.serve_command }
`
	serve := knownvalue.StringExact("vllm serve " + seedModel + " --omni --port 8091 --stage-configs-path /etc/vllm-omni/deploy-config.yaml" +
		" --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25203")
	known := func(reads plancheck.PlanCheck) []plancheck.PlanCheck {
		return []plancheck.PlanCheck{
			plancheck.ExpectKnownOutputValue("resource", serve),
			plancheck.ExpectKnownOutputValue("document", knownvalue.StringRegexp(regexp.MustCompile(`^"content": \|\n  stage_args:\n`))),
			plancheck.ExpectKnownOutputValue("reads_data_source", serve),
			reads,
		}
	}
	seqs := func(n int) config.Variables { return config.Variables{"decode_seqs": config.IntegerVariable(n)} }
	accTest(t,
		resource.TestStep{
			// Created in this run: the read waits.
			Config: cfg, ConfigVariables: seqs(64),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: known(plancheck.ExpectUnknownOutputValue("reads_resource"))},
		},
		resource.TestStep{
			// Nothing pending: read in the plan.
			Config: cfg, ConfigVariables: seqs(64),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: known(plancheck.ExpectKnownOutputValue("reads_resource", serve))},
		},
		resource.TestStep{
			// Updated in place: the read waits again.
			Config: cfg, ConfigVariables: seqs(32),
			ConfigPlanChecks: resource.ConfigPlanChecks{PreApply: append(known(plancheck.ExpectUnknownOutputValue("reads_resource")),
				plancheck.ExpectResourceAction("omni_pd_pipeline.this", plancheck.ResourceActionUpdate))},
		},
	)
}

// No heading of the generated docs or of the top-level documents is empty:
// each has text before the next heading of its level or above.
func TestDocs_NoEmptyHeadings(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md"), filepath.Join(root, "DESIGN.md"), filepath.Join(root, "PERFORMANCE.md")}
	err := filepath.Walk(filepath.Join(root, "docs"), func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() && strings.HasSuffix(path, ".md") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d documents", len(files))
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range emptyHeadings(string(src)) {
			rel, _ := filepath.Rel(root, f)
			t.Errorf("%s: heading %q has nothing under it", rel, h)
		}
	}
	if got := emptyHeadings("# A\n\n## B\n\n## C\ntext\n### D\n"); strings.Join(got, "|") != "## B|### D" {
		t.Errorf("emptyHeadings finds %q, want ## B and ### D", got)
	}
}

// emptyHeadings returns the Markdown headings, outside code fences and
// front matter, that the next heading of their level or above follows with
// nothing in between, or that end the text.
func emptyHeadings(md string) []string {
	lines := strings.Split(md, "\n")
	if len(lines) > 0 && lines[0] == "---" {
		for i := 1; i < len(lines); i++ {
			if lines[i] == "---" {
				lines = lines[i+1:]
				break
			}
		}
	}
	var out []string
	open := "" // the last heading, while nothing has followed it
	level := 0
	inFence := false
	for _, l := range lines {
		if strings.HasPrefix(l, "```") {
			inFence = !inFence
		}
		trimmed := strings.TrimSpace(l)
		if inFence || !strings.HasPrefix(l, "#") {
			if trimmed != "" {
				open = ""
			}
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "#"))
		if open != "" && n <= level {
			out = append(out, open)
		}
		open, level = trimmed, n
	}
	if open != "" {
		out = append(out, open)
	}
	return out
}

var figure = regexp.MustCompile(`\d+(?:\.\d+)?`)

// The README's performance summary states only figures that PERFORMANCE.md
// has, so `make bench` and an edit of the document cannot leave it behind
// unnoticed.
func TestDocs_ReadmePerformanceFigures(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "PERFORMANCE.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	start := strings.Index(s, "\n## Performance\n")
	if start < 0 {
		t.Fatal("README.md has no Performance section")
	}
	section := s[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	figures := figure.FindAllString(section, -1)
	if len(figures) < 10 {
		t.Fatalf("the summary states %d figures: %v", len(figures), figures)
	}
	for _, f := range figures {
		re := regexp.MustCompile(`(^|[^\d.])` + regexp.QuoteMeta(f) + `($|[^\d])`)
		if !re.Match(doc) {
			t.Errorf("README.md's performance summary says %s, which PERFORMANCE.md does not", f)
		}
	}
}
