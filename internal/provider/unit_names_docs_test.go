package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/omnipd/terraform-provider-omni/internal/container"
	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// Every systemd unit name the docs, the examples and the schema print is
// one the planner gives: the names are read from plans (a stage-based one
// and a whole-pipeline one), so renaming the units in the code fails here
// until every page that shows a name follows.
func TestDocs_UnitNamesAreThePlanners(t *testing.T) {
	shapes := plannedUnitShapes(t)
	texts := unitNameTexts(t)
	found := 0
	for _, tx := range texts {
		for _, m := range unitMentions(tx.text) {
			found++
			if !unitShapeKnown(shapes, m) {
				t.Errorf("%s: %q is no unit name the planner gives; its names are <prefix>%s", tx.where, m.text, strings.Join(shapes, ", <prefix>"))
			}
		}
	}
	// Guard against a scan that finds nothing: the guides and the schema
	// name the template, its instances and their drop-ins many times.
	if found < 50 {
		t.Errorf("found %d unit names in %d texts; they hold more", found, len(texts))
	}
}

// The checker finds what it is for: the names of an older release and
// misspellings are reported, the planner's own forms are not.
func TestDocs_UnitNameCheckerCatches(t *testing.T) {
	shapes := plannedUnitShapes(t)
	for text, wantBad := range map[string]bool{
		"`vllm-omni-stage-0.service`":                  true,
		"`<unit_prefix>-stage-<n>.service`":            true,
		"each stage's unit, vllm-omni-stage-3.service": true,
		"`systemctl status 'vllm-omni-stage-*'`":       true,
		"`vllm-omni-head.service`":                     true,
		"`vllm-omni-stage@0.servic`":                   true,
		"`vllm-omni-stage@0.service.d/override.conf`":  true,
		"`vllm-omni-stage@0.service`":                  false,
		"`<unit_prefix>-stage@<stage id>.service`":     false,
		"`vllm-omni-a-stage@.service`":                 false,
		"`vllm-omni-stage@1.service.d/plan.conf`.":     false,
		"`journalctl -t vllm-omni-stage@1`":            false,
		"`systemctl status 'vllm-omni-stage@*'`":       false,
		"`<prefix>-stage@%i.service.d/plan.conf`":      false,
		"`podman logs vllm-omni-stage-0`":              false,
		"`docker logs vllm-omni-stage-0x`":             true,
	} {
		ms := unitMentions(text)
		if len(ms) != 1 {
			t.Errorf("%s: found %d unit names, want 1", text, len(ms))
			continue
		}
		if bad := !unitShapeKnown(shapes, ms[0]); bad != wantBad {
			t.Errorf("%s: reported %v, want %v", text, bad, wantBad)
		}
	}
	for _, text := range []string{"a multi-stage pipeline", "`--stage-id 0`", "`--head-wait 600`", "`stage_args`"} {
		if ms := unitMentions(text); len(ms) != 0 {
			t.Errorf("%s: found %v, which names no unit", text, ms)
		}
	}
}

// A unitMention is a unit name as written: what comes before `-stage` or
// `-head` is the prefix, which may be anything (`vllm-omni-0`,
// `<unit_prefix>`, or nothing where the code adds it), and rest is the
// name from there on, its stage id written as `{id}`.
type unitMention struct {
	text string
	rest string
}

var (
	// unitMentionRe finds `<prefix>-stage` or `<prefix>-head` followed by
	// what only a unit name has there: `@`, a stage id after `-`, or
	// `.service`. `--stage-id`, `multi-stage` and `--head-wait` are not.
	unitMentionRe = regexp.MustCompile(`(?:<[^<>\n]*>|[A-Za-z0-9_${}.:-])*?-(?:stage|head)` +
		`(?:@|-(?:<[^<>\n]*>|[0-9N*%])|\.service)(?:<[^<>\n]*>|[A-Za-z0-9_.%*/@-])*`)
	unitMentionRest = regexp.MustCompile(`-(?:stage|head)(?:@|-(?:<[^<>\n]*>|[0-9N*%])|\.service).*$`)
	// unitID is a stage id as a name spells it: a number, the template's
	// %i, a placeholder (<n>, <stage id>, N) or a glob's *.
	unitID = regexp.MustCompile(`@(?:[0-9]+|%i|<[^<>]*>|N|\*)`)
)

// unitMentions lists the unit names in text, a sentence's full stop left
// off.
func unitMentions(text string) []unitMention {
	var out []unitMention
	for _, m := range unitMentionRe.FindAllString(text, -1) {
		m = strings.TrimRight(m, ".-/")
		rest := unitMentionRest.FindString(m)
		out = append(out, unitMention{text: m, rest: unitID.ReplaceAllString(rest, "@{id}")})
	}
	return out
}

// unitShapeKnown reports whether m is one of the planner's names, or its
// start up to a dot or a slash: `<prefix>-stage@1` is a journal's
// identifier for the unit, `<prefix>-stage@*` a glob of its instances.
func unitShapeKnown(shapes []string, m unitMention) bool {
	for _, s := range shapes {
		if exact, ok := strings.CutPrefix(s, "="); ok {
			if exact == m.rest {
				return true
			}
			continue
		}
		if s == m.rest || strings.HasPrefix(s, m.rest) && strings.ContainsRune("./", rune(s[len(m.rest)])) {
			return true
		}
	}
	return false
}

// plannedUnitShapes are the names, past their prefix, of every unit file,
// drop-in and unit the planner writes or names in them, for a stage-based
// launch and a whole-pipeline one, and the container names a container
// launch derives from them. A container name (omni-stage-0) is known only
// as it is: marked "=", it never excuses the older unit form
// omni-stage-0.service that it begins.
func plannedUnitShapes(t *testing.T) []string {
	t.Helper()
	var texts, containers []string
	for _, version := range []string{"", "0.22.0"} {
		res, diags := pipeline.Plan(pipeline.Spec{Model: seedModel, VLLMOmniVersion: version,
			Service: pipeline.ServiceSpec{UnitPrefix: "p"}})
		if res == nil || diags.HasErrors() {
			t.Fatalf("plan for %q: %v", version, diags)
		}
		texts = append(texts, res.SystemdUnit.Path, res.SystemdUnit.Content)
		for _, l := range res.Launches {
			for _, p := range l.Processes {
				texts = append(texts, p.UnitName)
				containers = append(containers, container.NameFor(p.UnitName))
				if p.DropIn != nil {
					texts = append(texts, p.DropIn.Path, p.DropIn.Content)
				}
			}
		}
	}
	seen := map[string]bool{}
	for _, tx := range texts {
		for _, m := range unitMentions(tx) {
			seen[m.rest] = true
		}
	}
	for _, name := range containers {
		for _, m := range unitMentions(name) {
			seen["="+m.rest] = true
		}
	}
	shapes := make([]string, 0, len(seen))
	for s := range seen {
		shapes = append(shapes, s)
	}
	sort.Strings(shapes)
	if len(shapes) < 3 {
		t.Fatalf("the plans name %v; want the template, an instance and a drop-in at least", shapes)
	}
	return shapes
}

type namedText struct{ where, text string }

// unitNameTexts are what a user reads: the generated pages and guides,
// their templates, the README and DESIGN, the examples' READMEs and
// configurations, every description in the provider's schema, and the
// engine's sources (its diagnostics and comments; tests and their data
// keep older names on purpose, for upgrades).
func unitNameTexts(t *testing.T) []namedText {
	t.Helper()
	root := filepath.Join("..", "..")
	var files []string
	for _, dir := range []string{"docs", "templates", "examples", "internal"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			name := d.Name()
			switch filepath.Ext(name) {
			case ".md", ".tmpl", ".tf":
				files = append(files, path)
			case ".go":
				if !strings.HasSuffix(name, "_test.go") {
					files = append(files, path)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	files = append(files, filepath.Join(root, "README.md"), filepath.Join(root, "DESIGN.md"))
	var out []namedText
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		for i, line := range strings.Split(string(b), "\n") {
			out = append(out, namedText{fmt.Sprintf("%s:%d", rel, i+1), line})
		}
	}
	return append(out, schemaDescriptions(t)...)
}

// schemaDescriptions are the descriptions of every attribute of the
// provider, its resource and data source, and of its functions, as
// Terraform reads them.
func schemaDescriptions(t *testing.T) []namedText {
	t.Helper()
	resp, err := providerserver.NewProtocol6(New("test")())().GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || len(resp.Diagnostics) > 0 {
		t.Fatalf("GetProviderSchema: %v %v", err, resp.Diagnostics)
	}
	var out []namedText
	var walk func(where string, attrs []*tfprotov6.SchemaAttribute)
	walk = func(where string, attrs []*tfprotov6.SchemaAttribute) {
		for _, a := range attrs {
			out = append(out, namedText{where + a.Name, a.Description})
			if a.NestedType != nil {
				walk(where+a.Name+".", a.NestedType.Attributes)
			}
		}
	}
	schemas := map[string]*tfprotov6.Schema{"provider": resp.Provider}
	for name, s := range resp.ResourceSchemas {
		schemas["resource "+name] = s
	}
	for name, s := range resp.DataSourceSchemas {
		schemas["data source "+name] = s
	}
	for name, s := range schemas {
		if s != nil && s.Block != nil {
			out = append(out, namedText{name, s.Block.Description})
			walk(name+": ", s.Block.Attributes)
		}
	}
	for name, f := range resp.Functions {
		out = append(out, namedText{"function " + name, f.Summary + "\n" + f.Description})
		for _, p := range f.Parameters {
			out = append(out, namedText{"function " + name + ": " + p.Name, p.Description})
		}
	}
	return out
}
