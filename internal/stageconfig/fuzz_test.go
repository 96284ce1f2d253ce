package stageconfig

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks Parse never panics, and that whatever it accepts can be
// rendered and read back: the planner renders every base it accepts.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(localTestdata, "*.yaml"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed files in %s: %v", localTestdata, err)
	}
	for _, p := range files {
		src, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, s := range []string{
		"", "stage_args: []", "stages: [{}]", "stage_args:\n  - &s {a: *s}\n",
		"stage_args: [{stage_id: 0, engine_input_source: [0]}]\n# c\n",
		"x: &a [1, *a]\nstages: []",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		d, err := Parse(src)
		if err != nil {
			if d != nil {
				t.Fatal("Parse returned a document with an error")
			}
			return
		}
		out, err := d.Render()
		if err != nil {
			t.Fatalf("Render of an accepted document failed: %v", err)
		}
		d2, err := Parse(out)
		if err != nil {
			t.Fatalf("re-Parse of rendered output failed: %v\n--- input:\n%q\n--- rendered:\n%q", err, src, out)
		}
		if d2.Dialect != d.Dialect {
			t.Fatalf("dialect %q became %q", d.Dialect, d2.Dialect)
		}
		// The stage views must read any accepted document without panicking.
		for _, s := range d.Stages() {
			s.ID()
			s.ModelStage()
			_, _, _ = s.Inputs()
			_, _, _ = s.Devices()
			s.MaxNumSeqs()
			s.Describe()
		}
	})
}
