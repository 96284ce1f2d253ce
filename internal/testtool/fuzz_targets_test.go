package testtool

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestFuzzTargets_ListEveryFuzzTest: `make fuzz` runs the targets
// GNUmakefile's FUZZ_TARGETS names, so a fuzz test missing there never
// runs in CI, and a name left there after its test is gone fuzzes nothing.
func TestFuzzTargets_ListEveryFuzzTest(t *testing.T) {
	root := filepath.Join("..", "..")
	makefile, err := os.ReadFile(filepath.Join(root, "GNUmakefile"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)FUZZ_TARGETS \?= \\\n(.*?)\n[^\t]`).FindSubmatch(makefile)
	if block == nil {
		t.Fatal("GNUmakefile has no FUZZ_TARGETS block")
	}
	var listed []string
	for _, line := range strings.Split(string(block[1]), "\n") {
		if target := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), `\`)); target != "" {
			listed = append(listed, target)
		}
	}

	fuzzFunc := regexp.MustCompile(`(?m)^func (Fuzz\w+)\(`)
	var found []string
	err = filepath.WalkDir(filepath.Join(root, "internal"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pkg, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, m := range fuzzFunc.FindAllSubmatch(src, -1) {
			found = append(found, "./"+filepath.ToSlash(pkg)+":"+string(m[1]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) == 0 {
		t.Fatal("no fuzz test found under internal/")
	}
	for _, f := range found {
		if !slices.Contains(listed, f) {
			t.Errorf("%s is not in GNUmakefile's FUZZ_TARGETS: add it, or CI never fuzzes it", f)
		}
	}
	for _, l := range listed {
		if !slices.Contains(found, l) {
			t.Errorf("GNUmakefile's FUZZ_TARGETS names %s, which no test file defines: remove it", l)
		}
	}
}
