package stageconfig

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
	"go.yaml.in/yaml/v3"
)

// sharedTestdata holds the upstream vllm-omni configs. CI checks the
// repository out at <dir>/main with shared/ beside it, so from this package
// directory it is three levels up.
const sharedTestdata = "../../../shared/testdata/vllm-omni"

// localTestdata is the subset copied into the repository, so the fuzz seed
// corpus and the key tests run without the shared folder.
const localTestdata = "testdata"

// manifestEntry is one row of a MANIFEST.tsv: a file and the dialect it is
// written in.
type manifestEntry struct {
	File    string
	Dialect Dialect
}

// readManifest reads a tab-separated manifest whose header names a file
// column and a `dialect` column.
func readManifest(t testing.TB, path, fileColumn string) map[string]manifestEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open manifest: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if !sc.Scan() {
		t.Fatalf("%s is empty", path)
	}
	header := strings.Split(sc.Text(), "\t")
	fileCol, dialectCol := -1, -1
	for i, h := range header {
		switch h {
		case fileColumn:
			fileCol = i
		case "dialect":
			dialectCol = i
		}
	}
	if fileCol < 0 || dialectCol < 0 {
		t.Fatalf("%s: header %q lacks %q or dialect", path, header, fileColumn)
	}
	out := map[string]manifestEntry{}
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) <= fileCol || len(cols) <= dialectCol {
			t.Fatalf("%s: short row %q", path, sc.Text())
		}
		d, err := ParseDialect(cols[dialectCol])
		if err != nil {
			t.Fatalf("%s: row %q: %v", path, sc.Text(), err)
		}
		out[cols[fileCol]] = manifestEntry{File: cols[fileCol], Dialect: d}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// yamlFiles lists every .yaml file below dir, relative to dir with forward
// slashes, in lexical order.
func yamlFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".yaml") {
			rel, err := filepath.Rel(dir, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// configFiles lists every config the tests read whole: the local subset,
// the shared upstream configs where present, and the presets.
func configFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, dir := range []string{localTestdata, sharedTestdata, "../presets"} {
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		for _, rel := range yamlFiles(t, dir) {
			files = append(files, filepath.Join(dir, filepath.FromSlash(rel)))
		}
	}
	return files
}

// requireShared skips when the shared folder is absent (a bare clone); CI
// always has it.
func requireShared(t testing.TB) {
	t.Helper()
	if _, err := os.Stat(sharedTestdata); err != nil {
		t.Skipf("shared testdata not found at %s: %v", sharedTestdata, err)
	}
}

// decodeAny decodes YAML into plain Go values, the data a loader sees.
func decodeAny(t testing.TB, src []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(src, &v); err != nil {
		t.Fatalf("decode: %v\n%s", err, src)
	}
	return v
}

// comment is one comment attached to a node, with the slot it sits in.
type comment struct {
	Kind string // head, line or foot
	Text string
}

// collectComments lists every comment below n in document order.
func collectComments(n *yaml.Node) []comment {
	var out []comment
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil {
			return
		}
		if n.HeadComment != "" {
			out = append(out, comment{"head", n.HeadComment})
		}
		if n.LineComment != "" {
			out = append(out, comment{"line", n.LineComment})
		}
		for _, c := range n.Content {
			walk(c)
		}
		if n.FootComment != "" {
			out = append(out, comment{"foot", n.FootComment})
		}
	}
	walk(n)
	return out
}

func mustParse(t testing.TB, src string) *Document {
	t.Helper()
	d, err := Parse([]byte(src))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, src)
	}
	return d
}

func mustRender(t testing.TB, d *Document) string {
	t.Helper()
	b, err := d.Render()
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return string(b)
}

// renderNode renders one node on its own, for comparing small trees.
func renderNode(t testing.TB, n *yaml.Node) string {
	t.Helper()
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		t.Fatalf("encode: %v", err)
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func deepEqual(a, b any) bool { return reflect.DeepEqual(a, b) }

// pythonOverDocs runs a script of a Python that has PyYAML and OmegaConf:
// it reads a JSON list of YAML documents on stdin and prints a JSON list of
// one result per document, which are returned.
func pythonOverDocs[R any](t *testing.T, script string, docs []string) []R {
	t.Helper()
	py := testtool.Python(t, "yaml", "omegaconf")
	in, err := json.Marshal(docs)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	var res []R
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || len(res) != len(docs) {
		t.Fatalf("python gave %d results for %d documents (%v)", len(res), len(docs), err)
	}
	return res
}
