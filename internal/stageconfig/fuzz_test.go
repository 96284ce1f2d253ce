package stageconfig

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
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
		"d: &d {stage_type: llm, engine_args: {model_stage: thinker}}\nstage_args:\n  - <<: *d\n    stage_id: 0\n  - <<: [*d, {final_output: yes}]\n    stage_id: 1\n",
		"stage_args:\n  - stage_id: 0\n    engine_args: {tensor_parallel_size: \"2\", gpu_memory_utilization: .nan}\n    x: !!python/name:os.system\n",
		"stages:\n  - stage_id: 0x0\n    devices: ${d}\n    env: {1:30: on, yes: =}\n    engine_input_source: [0]  # note\n",
		// yaml.v3 writes an empty value in a flow mapping as '' unless
		// Parse spells it null.
		"stage_args: [{stage_id: 0, a: {x: , y: [~, ]}}]\n",
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
		before := dumpTree(d.root)
		out, err := d.Render()
		if err != nil {
			t.Fatalf("Render of an accepted document failed: %v", err)
		}
		// Render's shortcut past yaml.v3's resolver writes what the
		// encoder alone writes, and leaves the tree as it found it.
		if plain, err := encode(d.root); err != nil || string(plain) != string(out) {
			t.Fatalf("Render differs from the encoder (%v):\n%s\n--- encoder:\n%s", err, out, plain)
		}
		if after := dumpTree(d.root); after != before {
			t.Fatalf("Render changed the tree:\n%s\n--- before:\n%s", after, before)
		}
		d2, err := Parse(out)
		if err != nil {
			t.Fatalf("re-Parse of rendered output failed: %v\n--- input:\n%q\n--- rendered:\n%q", err, src, out)
		}
		if d2.Dialect != d.Dialect {
			t.Fatalf("dialect %q became %q", d.Dialect, d2.Dialect)
		}
		// Parse wrote every alias and merge key out.
		var walk func(n *yaml.Node)
		walk = func(n *yaml.Node) {
			if n.Kind == yaml.AliasNode || n.Anchor != "" {
				t.Fatalf("an alias or anchor survived Parse: %q\n%s", src, out)
			}
			for i, c := range n.Content {
				if n.Kind == yaml.MappingNode && i%2 == 0 && isMergeKey(c) {
					t.Fatalf("a merge key survived Parse: %q\n%s", src, out)
				}
				walk(c)
			}
		}
		walk(d.root)
		// What Parse accepts, its output says again: to vllm-omni's
		// loader, the rendered output holds the data Parse read.
		if a, b := loaderData(d.root), loaderData(d2.root); !deepEqual(a, b) {
			t.Fatalf("vllm-omni's loader would read the rendered output differently:\n%q\n--- rendered:\n%s\n--- read: %v\n--- then: %v", src, out, a, b)
		}
		d.LintAll()
		// The stage views must read any accepted document without panicking.
		for _, s := range d.Stages() {
			s.ID()
			s.ModelStage()
			_, _, _ = s.Inputs()
			_, _, _ = s.Devices()
			s.maxNumSeqs()
			s.Describe()
		}
	})
}

// FuzzStringRoundTrip checks how the planner writes text it did not read:
// any string, written as a key and as a value, reads back as that string,
// both in yaml.v3 and by the rules of vllm-omni's loader (pyRead).
func FuzzStringRoundTrip(f *testing.F) {
	for _, s := range scalarCorpus()[:200] {
		f.Add(s)
	}
	for _, s := range []string{"", " ", "a: b", "- x", "# c", "${a}", "'", "\"", "\u2028", "\t1", "1\n2", "<<", "=", "~", "0o7", "1:30"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		pyPlainKind(s)
		if !utf8.ValidString(s) {
			return
		}
		m := newMap()
		m.Content = append(m.Content, keyNode(s), strNode(s))
		out, err := yaml.Marshal(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{m}})
		if err != nil {
			return // yaml.v3 refuses some strings (control characters) outright
		}
		var back yaml.Node
		if err := yaml.Unmarshal(out, &back); err != nil {
			t.Fatalf("%q is written as %q, which does not parse: %v", s, out, err)
		}
		got := back.Content[0]
		if len(got.Content) != 2 {
			t.Fatalf("%q is written as %q, which reads as %d nodes", s, out, len(got.Content))
		}
		for i, n := range got.Content {
			if n.Kind != yaml.ScalarNode || n.Value != s {
				t.Fatalf("%q is written as %q, which reads back as %q", s, out, n.Value)
			}
			if r := pyRead(n); r.Kind != pyStr && (i != 0 || r.Kind != pyValue) {
				t.Fatalf("%q is written as %q, which vllm-omni's loader reads as %s", s, out, pyDescribe(r))
			}
		}
	})
}

// loaderData is the data vllm-omni's loader builds from a tree without
// aliases or merge keys, by pyRead: every scalar tagged with its type, and
// keys that the loader reads as one key merged as a dict merges them.
func loaderData(n *yaml.Node) any {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil
		}
		return loaderData(n.Content[0])
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			out[i] = loaderData(c)
		}
		return out
	case yaml.MappingNode:
		out := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			id, ok := pyKeyIdentity(pyRead(n.Content[i]))
			if !ok {
				id = fmt.Sprintf("unique %d", i)
			}
			out[id] = loaderData(n.Content[i+1])
		}
		return out
	}
	r := pyRead(n)
	switch r.Kind {
	case pyNull:
		return nil
	case pyBool:
		return r.Bool
	case pyInt:
		return "int " + r.Int.String()
	case pyFloat:
		return "float " + strconv.FormatFloat(r.Float, 'g', -1, 64)
	case pyStr:
		return "str " + r.Text
	}
	return fmt.Sprintf("kind %d %q", r.Kind, r.Text)
}
