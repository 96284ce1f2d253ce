package stageconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// roundTrip checks the promise the package makes to users: a config that
// goes through Parse and Render keeps its data and its comments, so the
// only differences in a planned config are the planner's edits.
func roundTrip(t *testing.T, src []byte, want Dialect) {
	t.Helper()
	d1, err := Parse(src)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if d1.Dialect != want {
		t.Errorf("dialect = %q, manifest says %q", d1.Dialect, want)
	}
	out, err := d1.Render()
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	d2, err := Parse(out)
	if err != nil {
		t.Fatalf("re-Parse of rendered output: %v\n%s", err, out)
	}
	if d2.Dialect != d1.Dialect {
		t.Errorf("dialect after round trip = %q, want %q", d2.Dialect, d1.Dialect)
	}
	if a, b := decodeAny(t, src), decodeAny(t, out); !deepEqual(a, b) {
		t.Errorf("data changed in the round trip\n--- rendered:\n%s", out)
	}
	c1, c2 := collectComments(d1.root), collectComments(d2.root)
	if !deepEqual(c1, c2) {
		t.Errorf("comments changed in the round trip:\n%s", diffComments(c1, c2))
	}
	if len(c1) == 0 && hasComment(src) {
		t.Errorf("the source has comments but the parsed tree holds none")
	}
	// Rendering settles after one pass, so planning the same base twice
	// gives the same bytes. yaml.v3 may re-attach a comment that ends a
	// block to a deeper node when it reads its own output (the blank line
	// that placed it is gone), which only changes the comment's indentation:
	// allow that on the second pass, and nothing on the third.
	out2, err := d2.Render()
	if err != nil {
		t.Fatalf("second Render: %v", err)
	}
	if stripCommentIndent(string(out2)) != stripCommentIndent(string(out)) {
		t.Errorf("second render differs from the first beyond comment indentation\n--- first:\n%s\n--- second:\n%s", out, out2)
	}
	d3, err := Parse(out2)
	if err != nil {
		t.Fatalf("third Parse: %v", err)
	}
	if out3 := mustRender(t, d3); out3 != string(out2) {
		t.Errorf("third render differs from the second\n--- second:\n%s\n--- third:\n%s", out2, out3)
	}
}

// stripCommentIndent removes the indentation of whole-line comments.
func stripCommentIndent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if t := strings.TrimLeft(l, " "); strings.HasPrefix(t, "#") {
			lines[i] = t
		}
	}
	return strings.Join(lines, "\n")
}

func hasComment(src []byte) bool {
	for i := range src {
		if src[i] == '#' && (i == 0 || src[i-1] == '\n' || src[i-1] == ' ') {
			return true
		}
	}
	return false
}

func diffComments(a, b []comment) string {
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y comment
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return fmt.Sprintf("first difference at #%d:\n  before: %s %q\n  after:  %s %q", i, x.Kind, x.Text, y.Kind, y.Text)
		}
	}
	return "(equal)"
}

// TestRoundTripUpstream walks every upstream config and checks each one is
// listed in MANIFEST.tsv with the dialect Parse detects.
func TestRoundTripUpstream(t *testing.T) {
	requireShared(t)
	manifest := readManifest(t, filepath.Join(sharedTestdata, "MANIFEST.tsv"), "relative_path")
	files := yamlFiles(t, sharedTestdata)
	if len(files) < 50 {
		t.Fatalf("found only %d yaml files under %s", len(files), sharedTestdata)
	}
	seen := map[string]bool{}
	for _, rel := range files {
		t.Run(rel, func(t *testing.T) {
			entry, ok := manifest[rel]
			if !ok {
				t.Fatalf("%s is not in MANIFEST.tsv", rel)
			}
			seen[rel] = true
			src, err := os.ReadFile(filepath.Join(sharedTestdata, filepath.FromSlash(rel)))
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, src, entry.Dialect)
		})
	}
	for rel := range manifest {
		if !seen[rel] {
			t.Errorf("MANIFEST.tsv lists %s but the file is missing", rel)
		}
	}
}

// TestRoundTripLocal runs the same checks on the copies kept in testdata/.
func TestRoundTripLocal(t *testing.T) {
	manifest := readManifest(t, filepath.Join(localTestdata, "MANIFEST.tsv"), "file")
	files := yamlFiles(t, localTestdata)
	if len(files) != len(manifest) {
		t.Errorf("testdata has %d yaml files, MANIFEST.tsv lists %d", len(files), len(manifest))
	}
	seen := map[Dialect]int{}
	for _, rel := range files {
		t.Run(rel, func(t *testing.T) {
			entry, ok := manifest[rel]
			if !ok {
				t.Fatalf("%s is not in testdata/MANIFEST.tsv", rel)
			}
			seen[entry.Dialect]++
			src, err := os.ReadFile(filepath.Join(localTestdata, rel))
			if err != nil {
				t.Fatal(err)
			}
			roundTrip(t, src, entry.Dialect)
		})
	}
	for _, d := range dialects {
		if seen[d] == 0 {
			t.Errorf("testdata has no %s-dialect file", d)
		}
	}
}

// TestRoundTripKeepsStyle pins the parts of a user's spelling that the
// data comparison cannot see: quoting, flow lists, YAML 1.1 booleans.
func TestRoundTripKeepsStyle(t *testing.T) {
	src := `# head of file
stage_args:
  - stage_id: 0 # the thinker
    runtime:
      devices: "0,1"
    engine_args:
      distributed_executor_backend: "mp"
      detokenize: True
    engine_input_source: [1, 2]
    default_sampling_params:
      stop_token_ids: [2150]
# foot of file
`
	got := mustRender(t, mustParse(t, src))
	if got != src {
		t.Errorf("render changed the text:\n--- got:\n%s--- want:\n%s", got, src)
	}
}
