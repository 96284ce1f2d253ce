package pipeline

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The planner decides what the config says; stageconfig alone knows how
// YAML holds it. A yaml.v3 import here would put node edits back in the
// planner. Tests may still read the planned YAML with yaml.v3, as an
// independent reader.
func TestNoYAMLNodesInThePlanner(t *testing.T) {
	// The planner, and the release checks it runs on its output.
	for dir, atLeast := range map[string]int{".": 10, "../releases": 5} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, e := range entries {
			name := filepath.Join(dir, e.Name())
			if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, imp := range f.Imports {
				if path, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(path, "go.yaml.in/") || strings.HasPrefix(path, "gopkg.in/yaml") {
					t.Errorf("%s imports %s: move the YAML work into internal/stageconfig", name, path)
				}
			}
		}
		if checked < atLeast {
			t.Fatalf("checked %d files in %s; the test is not reading the package", checked, dir)
		}
	}
}
