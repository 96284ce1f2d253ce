package stageconfig

import (
	"math"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// top parses a small mapping document and returns its top-level mapping.
// The document need not be a stage config: the node helpers work on any
// mapping.
func top(t *testing.T, src string) (*yaml.Node, *yaml.Node) {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(src), &doc); err != nil {
		t.Fatal(err)
	}
	return &doc, doc.Content[0]
}

func TestMapSetKeepsPositionAndComments(t *testing.T) {
	src := "a: 1 # about a\n# about b\nb: 2 # line b\nc: 3\n"
	doc, m := top(t, src)
	keyB := m.Content[2]
	mapSet(m, "b", intNode(20))
	if m.Content[2] != keyB {
		t.Errorf("the key node was replaced; its comments live there")
	}
	mapSet(m, "d", strNode("new"))
	want := "a: 1 # about a\n# about b\nb: 20 # line b\nc: 3\nd: new\n"
	if got := renderNode(t, doc); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}

	// A value that brings its own line comment keeps it.
	v := intNode(30)
	v.LineComment = "# mine"
	mapSet(m, "b", v)
	if got := mapGet(m, "b").LineComment; got != "# mine" {
		t.Errorf("LineComment = %q, want the new value's own", got)
	}

	// A mapping replacing a scalar does not inherit a scalar's line comment
	// (it would render after the key, before the block).
	mapSet(m, "a", newMap())
	if got := mapGet(m, "a").LineComment; got != "" {
		t.Errorf("mapping inherited line comment %q", got)
	}
}

func TestMapInsertAfterBefore(t *testing.T) {
	const src = "stage_id: 0\nruntime: {}\nfinal_output: true\n"
	tests := []struct {
		name    string
		after   bool
		key     string
		anchors []string
		want    []string
	}{
		{"after the first anchor present", true, "x", []string{"missing", "runtime", "stage_id"}, []string{"stage_id", "runtime", "x", "final_output"}},
		{"after the last key", true, "x", []string{"final_output"}, []string{"stage_id", "runtime", "final_output", "x"}},
		{"after: no anchor present appends", true, "x", []string{"nope"}, []string{"stage_id", "runtime", "final_output", "x"}},
		{"after: no anchors appends", true, "x", nil, []string{"stage_id", "runtime", "final_output", "x"}},
		{"after: existing key stays put", true, "stage_id", []string{"final_output"}, []string{"stage_id", "runtime", "final_output"}},
		{"before the first anchor present", false, "x", []string{"missing", "runtime"}, []string{"stage_id", "x", "runtime", "final_output"}},
		{"before the first key", false, "x", []string{"stage_id"}, []string{"x", "stage_id", "runtime", "final_output"}},
		{"before: no anchor present appends", false, "x", []string{"nope"}, []string{"stage_id", "runtime", "final_output", "x"}},
		{"before: existing key stays put", false, "final_output", []string{"stage_id"}, []string{"stage_id", "runtime", "final_output"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, m := top(t, src)
			v := intNode(7)
			if tc.after {
				mapInsertAfter(m, tc.key, v, tc.anchors...)
			} else {
				mapInsertBefore(m, tc.key, v, tc.anchors...)
			}
			if got := mapKeys(m); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("keys = %v, want %v", got, tc.want)
			}
			if mapGet(m, tc.key) != v {
				t.Errorf("%s does not hold the inserted node", tc.key)
			}
			if len(m.Content)%2 != 0 {
				t.Errorf("odd content length %d", len(m.Content))
			}
		})
	}
}

func TestMapGetKeysDeleteEnsure(t *testing.T) {
	_, m := top(t, "a: 1\nb: {x: 1}\nc: [1]\n")
	if mapGet(m, "zz") != nil || mapGet(nil, "a") != nil || mapGet(intNode(1), "a") != nil {
		t.Error("mapGet of a missing key, a nil node or a scalar must be nil")
	}
	if mapKeys(intNode(1)) != nil {
		t.Error("mapKeys of a scalar must be nil")
	}
	b := mapGet(m, "b")
	if got := mapEnsure(m, "b"); got != b {
		t.Error("mapEnsure replaced an existing mapping")
	}
	if got := mapEnsure(m, "c"); got.Kind != yaml.MappingNode || mapGet(m, "c") != got {
		t.Error("mapEnsure kept a list where a mapping is needed")
	}
	if got := mapEnsure(m, "d"); got.Kind != yaml.MappingNode || mapKeys(m)[3] != "d" {
		t.Error("mapEnsure did not append a new mapping")
	}
	if !mapDelete(m, "a") || mapDelete(m, "a") || mapGet(m, "a") != nil {
		t.Error("mapDelete must remove once and report it")
	}
	if got := strings.Join(mapKeys(m), ","); got != "b,c,d" {
		t.Errorf("keys after delete = %s", got)
	}
}

func TestValueNode(t *testing.T) {
	// Two maps with the same content built in different insertion orders
	// must give the same YAML: Go randomises map iteration.
	a := map[string]any{}
	b := map[string]any{}
	keys := []string{"zeta", "alpha", "mid", "beta"}
	for i, k := range keys {
		a[k] = int64(i)
		b[keys[len(keys)-1-i]] = int64(len(keys) - 1 - i)
	}
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"nil", nil, "null\n"},
		{"bool", true, "true\n"},
		{"string that looks like a bool is quoted", "true", "\"true\"\n"},
		{"string that looks like a number is quoted", "0.9", "\"0.9\"\n"},
		{"int", 3, "3\n"},
		{"int64", int64(-4), "-4\n"},
		{"float keeps a point", 2.0, "2.0\n"},
		{"float", 0.05, "0.05\n"},
		{"sorted keys", a, "alpha: 1\nbeta: 3\nmid: 2\nzeta: 0\n"},
		{"sorted keys, other insertion order", b, "alpha: 1\nbeta: 3\nmid: 2\nzeta: 0\n"},
		{"scalar list is flow", []any{int64(2150), "x", true}, "[2150, x, true]\n"},
		{"list with a map is block", []any{map[string]any{"from": int64(0)}}, "- from: 0\n"},
		{"empty list", []any{}, "[]\n"},
		{"empty map", map[string]any{}, "{}\n"},
		{"nested", map[string]any{"kv": map[string]any{"b": []any{"UCX"}, "a": nil}}, "kv:\n  a: null\n  b: [UCX]\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := valueYAML(t, tc.v)
			if got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			// What is written reads back as the same value.
			var back any
			if err := yaml.Unmarshal([]byte(got), &back); err != nil {
				t.Fatal(err)
			}
			if !deepEqual(normalize(back), normalize(tc.v)) {
				t.Errorf("read back %#v, want %#v", back, tc.v)
			}
		})
	}
}

// normalize maps ints to int64 so decoded YAML compares with inputs.
func normalize(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = normalize(e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = normalize(e)
		}
		return out
	}
	return v
}

func TestValueNodeErrors(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"NaN", math.NaN(), "not a finite number"},
		{"infinity", math.Inf(1), "not a finite number"},
		{"unsupported type", []string{"a"}, "values of type []string cannot be written"},
		{"unsupported nested type names the key", map[string]any{"outer": map[string]any{"inner": int32(1)}}, "outer: inner: values of type int32"},
		{"bad element in a list", []any{1, math.Inf(-1)}, "not a finite number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := valueNode(tc.v)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestFloatNode(t *testing.T) {
	point3 := 0.1
	point3 += 0.2 // not a constant: Go folds constants exactly
	tests := []struct {
		v    float64
		want string
	}{
		{0.9, "0.9"},
		{1, "1.0"},
		{100, "100.0"},
		{-0.5, "-0.5"},
		{point3, "0.30000000000000004"},
		// PyYAML needs a point in the mantissa to read an exponent form
		// as a float.
		{1e21, "1.0e+21"},
		{1e-7, "1.0e-07"},
		{1.5e-7, "1.5e-07"},
		{0, "0.0"},
	}
	for _, tc := range tests {
		n := floatNode(tc.v)
		if n.Value != tc.want || n.Tag != "!!float" {
			t.Errorf("floatNode(%v) = %q %s, want %q !!float", tc.v, n.Value, n.Tag, tc.want)
		}
		// The spelling must read back as a float of the same value, not as
		// an int or a string.
		var back any
		if err := yaml.Unmarshal([]byte(renderNode(t, n)), &back); err != nil {
			t.Fatal(err)
		}
		if f, ok := back.(float64); !ok || f != tc.v {
			t.Errorf("floatNode(%v) reads back as %#v", tc.v, back)
		}
	}
}

func TestMergeValue(t *testing.T) {
	src := "kv:\n  kv_connector: \"MooncakeConnector\" # keep me\n  kv_rank: 0\nother: 1\n"
	doc, m := top(t, src)
	err := mergeValue(m, "kv", map[string]any{
		"kv_rank":  int64(1),
		"zz_new":   "z",
		"aa_new":   "a",
		"kv_extra": map[string]any{"backends": []any{"UCX"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Existing keys keep their place and comments; new ones are appended
	// in sorted order.
	want := "kv:\n  kv_connector: \"MooncakeConnector\" # keep me\n  kv_rank: 1\n  aa_new: a\n  kv_extra:\n    backends: [UCX]\n  zz_new: z\nother: 1\n"
	if got := renderNode(t, doc); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// A non-map replaces; a map over a scalar replaces too.
	if err := mergeValue(m, "kv", "off"); err != nil {
		t.Fatal(err)
	}
	if err := mergeValue(m, "other", map[string]any{"x": int64(1)}); err != nil {
		t.Fatal(err)
	}
	want = "kv: \"off\"\nother:\n  x: 1\n"
	if got := renderNode(t, doc); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if err := mergeValue(m, "other", map[string]any{"x": map[string]any{"y": math.NaN()}}); err == nil || !strings.Contains(err.Error(), "x: y:") {
		t.Errorf("error = %v, want one that names the nested key x: y:", err)
	}
}

func TestUnalias(t *testing.T) {
	src := "defs:\n  sp: &sp {temperature: 0.4, stop: [1]}\nstage_args:\n  - default_sampling_params: *sp\n  - default_sampling_params: *sp\n"
	// Parse writes aliases out itself; unalias is for trees built otherwise.
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		t.Fatal(err)
	}
	d := &Document{root: &root, Dialect: StageArgs}
	before := decodeAny(t, []byte(mustRender(t, d)))
	unalias(d.root)
	hasAlias := false
	var walk func(*yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.AliasNode {
			hasAlias = true
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(d.root)
	if hasAlias {
		t.Fatal("an alias survived unalias")
	}
	out := mustRender(t, d)
	if strings.Contains(out, "*sp") || strings.Count(out, "&sp") != 1 {
		t.Errorf("aliases should be written out, with the anchor left only where it was defined:\n%s", out)
	}
	if after := decodeAny(t, []byte(out)); !deepEqual(before, after) {
		t.Errorf("unalias changed the data:\n%s", out)
	}
	// Each copy is independent: editing one stage leaves the other and the
	// definition alone.
	s := d.Stages()
	mapSet(s[0].get("default_sampling_params"), "temperature", floatNode(0.1))
	if v, _ := scalarString(mapGet(s[1].get("default_sampling_params"), "temperature")); v != "0.4" {
		t.Errorf("stage 1 temperature = %s, want 0.4", v)
	}
}

func TestDeepCopyAndClone(t *testing.T) {
	d := mustParse(t, "stage_args:\n  - stage_id: 0 # c\n    runtime: {devices: \"0\"}\n")
	c := d.Clone()
	c.Stages()[0].SetDevices([]int{5})
	mapSet(c.Stages()[0].node, "stage_id", intNode(9))
	if got := mustRender(t, d); got != "stage_args:\n  - stage_id: 0 # c\n    runtime: {devices: \"0\"}\n" {
		t.Errorf("editing a clone changed the original:\n%s", got)
	}
	if c.Dialect != d.Dialect {
		t.Error("clone lost the dialect")
	}
	if deepCopy(nil) != nil {
		t.Error("deepCopy(nil) != nil")
	}
}

func TestScalarReaders(t *testing.T) {
	_, m := top(t, "i: 3\nhex: 0x10\nf: 0.5\nfi: 2\nb1: True\nb2: false\ns: text\nq: \"3\"\nn: null\nl: [1]\n")
	if v, ok := scalarInt(mapGet(m, "i")); !ok || v != 3 {
		t.Errorf("scalarInt(i) = %d, %t", v, ok)
	}
	if v, ok := scalarInt(mapGet(m, "hex")); !ok || v != 16 {
		t.Errorf("scalarInt(hex) = %d, %t", v, ok)
	}
	for _, k := range []string{"f", "q", "s", "n", "l", "missing"} {
		if _, ok := scalarInt(mapGet(m, k)); ok {
			t.Errorf("scalarInt(%s) accepted a non-integer", k)
		}
	}
	if v, ok := scalarFloat(mapGet(m, "f")); !ok || v != 0.5 {
		t.Errorf("scalarFloat(f) = %v, %t", v, ok)
	}
	if v, ok := scalarFloat(mapGet(m, "fi")); !ok || v != 2 {
		t.Errorf("scalarFloat reads an int as a float: got %v, %t", v, ok)
	}
	if _, ok := scalarFloat(mapGet(m, "q")); ok {
		t.Error("scalarFloat accepted a quoted string")
	}
	if v, ok := scalarBool(mapGet(m, "b1")); !ok || !v {
		t.Errorf("scalarBool(True) = %t, %t", v, ok)
	}
	if v, ok := scalarBool(mapGet(m, "b2")); !ok || v {
		t.Errorf("scalarBool(false) = %t, %t", v, ok)
	}
	if _, ok := scalarBool(mapGet(m, "s")); ok {
		t.Error("scalarBool accepted text")
	}
	if v, ok := scalarString(mapGet(m, "q")); !ok || v != "3" {
		t.Errorf("scalarString(q) = %q, %t", v, ok)
	}
	if _, ok := scalarString(mapGet(m, "n")); ok {
		t.Error("scalarString must read null as absent")
	}
	if _, ok := scalarString(mapGet(m, "l")); ok {
		t.Error("scalarString accepted a list")
	}
}

// TestStrNodeYAML11 checks strings that PyYAML (YAML 1.1, what vllm-omni
// loads configs with) would read as booleans or numbers are quoted, while
// ordinary words stay plain as vllm-omni's own configs write them.
func TestStrNodeYAML11(t *testing.T) {
	quoted := []string{"on", "off", "On", "OFF", "yes", "No", "y", "N", "1:30", "-190:20:30.15", "=",
		"true", "False", "null", "~", "12", "0.9", "0x1F", "012", "1_000", "1e3", ".inf", ""}
	plain := []string{"mp", "tcp", "rdma", "thinker", "kv_producer", "none", "yesterday", "onion", "1:300", "a:b", "0,1"}
	for _, s := range quoted {
		if got := renderNode(t, strNode(s)); !strings.HasPrefix(got, `"`) && !strings.HasPrefix(got, "'") {
			t.Errorf("strNode(%q) renders %q; PyYAML would not read it as a string", s, got)
		}
	}
	for _, s := range plain {
		if got := renderNode(t, strNode(s)); got != s+"\n" {
			t.Errorf("strNode(%q) renders %q, want it plain", s, got)
		}
	}
}

func TestNodeBuilders(t *testing.T) {
	for _, tc := range []struct {
		n    *yaml.Node
		want string
	}{
		{intNode(-3), "-3\n"},
		{boolNode(true), "true\n"},
		{strNode("a b"), "a b\n"},
		{strNode("null"), "\"null\"\n"},
		{quotedStrNode("0,1"), "\"0,1\"\n"},
		{nullNode(), "null\n"},
		{flowIntSeq([]int{0, 2}), "[0, 2]\n"},
		{keyNode("k"), "k\n"},
	} {
		if got := renderNode(t, tc.n); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

// A copy shares no node with its original, and editing one of its Content
// slices (an append that grows it) leaves its neighbours in the copy as
// they were: each slice's capacity ends where it does.
func TestDeepCopy_IndependentSlices(t *testing.T) {
	doc, err := Parse([]byte("stage_args: []\na: [1, 2]\nb: [3]\nc: {d: 4}\n"))
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := doc.Render()
	c := deepCopy(doc.root)
	top := c.Content[0]
	a := mapGet(top, "a")
	a.Content = append(a.Content, intNode(9))
	mapSet(top, "e", intNode(5))
	copied := &Document{root: c, Dialect: doc.Dialect}
	got, _ := copied.Render()
	if want := "stage_args: []\na: [1, 2, 9]\nb: [3]\nc: {d: 4}\ne: 5\n"; string(got) != want {
		t.Errorf("edited copy =\n%s\nwant\n%s", got, want)
	}
	if again, _ := doc.Render(); string(again) != string(orig) {
		t.Errorf("the original changed:\n%s", again)
	}
}
