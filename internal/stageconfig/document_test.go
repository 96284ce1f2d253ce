package stageconfig

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// dumpTree writes every node's kind, tag, style and value, to tell whether
// a tree changed.
func dumpTree(n *yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		fmt.Fprintf(&b, "%d %d %q %d %q\n", depth, n.Kind, n.Tag, n.Style, n.Value)
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}

// Render skips yaml.v3's resolver for scalars whose tag it would drop
// anyway; over every config here, the upstream corpus included, it must
// write exactly what the encoder writes and leave the tree as it was.
func TestRenderSameAsEncoder(t *testing.T) {
	files := configFiles(t)
	// The local corpus and the presets alone are fewer than ten; with the
	// shared upstream corpus beside the clone there are many more.
	want := 5
	if _, err := os.Stat(sharedTestdata); err == nil {
		want = 10
	}
	if len(files) < want {
		t.Fatalf("found %d configs, want at least %d", len(files), want)
	}
	cleared := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Parse(src)
		if err != nil {
			continue // unreadable configs are Parse's tests' business
		}
		before := dumpTree(d.root)
		cleared += len(clearImplicitTags(d.Clone().root, nil))
		got, err := d.Render()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		want, err := encode(d.root)
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: Render differs from the encoder:\n%s\n--- encoder:\n%s", file, got, want)
		}
		if after := dumpTree(d.root); after != before {
			t.Errorf("%s: Render left the tree changed", file)
		}
	}
	if cleared == 0 {
		t.Error("no scalar took the shortcut: the test checks nothing")
	}
}

func TestImplicitTag(t *testing.T) {
	for _, tc := range []struct {
		src, want string
	}{
		{"k: stage_id", tagStr}, {"k: MooncakeConnector", tagStr}, {"k: _x1", tagStr},
		{"k: 25201", tagInt}, {"k: 0", tagInt}, {"k: true", tagBool}, {"k: false", tagBool},
		{"k: yes", ""}, {"k: null", ""}, {"k: 007", ""}, {"k: 1e3", ""},
		{"k: a.b", ""}, {"k: 0.9", tagFloat}, {"k: 32.0", tagFloat}, {"k: .5", ""}, {"k: 1.", tagFloat}, {"k: 1.2.3", ""}, {"k: \"stage_id\"", ""}, {"k: !!str 12", ""}, {"k: True", ""},
		{"k: 1_000", ""}, {"k: -1", ""}, {"k: '25201'", ""},
	} {
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(tc.src), &n); err != nil {
			t.Fatal(err)
		}
		v := n.Content[0].Content[1]
		if got := implicitTag(v); got != tc.want {
			t.Errorf("implicitTag(%s) = %q, want %q", tc.src, got, tc.want)
		}
	}
}

// A node built with a tag its plain text does not read as keeps the tag
// through Render, which makes the encoder quote it.
func TestRenderKeepsTagsTextDoesNotImply(t *testing.T) {
	m := newMap()
	m.Content = append(m.Content, keyNode("port"), &yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: "25201"},
		keyNode("on"), &yaml.Node{Kind: yaml.ScalarNode, Tag: tagStr, Value: "true"})
	d := &Document{root: &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{m}}}
	if got, want := mustRender(t, d), "port: \"25201\"\n\"on\": \"true\"\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
