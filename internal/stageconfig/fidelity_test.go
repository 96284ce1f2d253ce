package stageconfig

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// omegaconfLoad reads each document of a JSON list as vllm-omni does,
// with OmegaConf.create (OmegaConf.load on text), and prints its data as
// JSON, or the error it fails with. Interpolations are left unresolved;
// keys are written with their Python type.
const omegaconfLoad = `import sys, json
from omegaconf import OmegaConf
def plain(v):
    # Keys keep their type: 1, 1.0, True and "1" are told apart.
    if isinstance(v, dict):
        return {type(k).__name__ + ":" + repr(k): plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v
out = []
for doc in json.load(sys.stdin):
    try:
        c = OmegaConf.to_container(OmegaConf.create(doc), resolve=False)
        out.append({"data": json.dumps(plain(c), sort_keys=True, default=repr)})
    except Exception as e:
        out.append({"err": type(e).__name__ + ": " + str(e).splitlines()[0]})
json.dump(out, sys.stdout)
`

type loaded struct {
	Data string `json:"data"`
	Err  string `json:"err"`
}

// loadWithOmegaConf runs omegaconfLoad over docs.
func loadWithOmegaConf(t *testing.T, docs []string) []loaded {
	t.Helper()
	return pythonOverDocs[loaded](t, omegaconfLoad, docs)
}

// loaderCase is a document vllm-omni's loader cannot read as yaml.v3 does.
type loaderCase struct {
	name string
	src  string
	line int    // the line the error names
	want string // words of the message
	// loads is set where OmegaConf reads the document without an error
	// (and reads it other than yaml.v3, or than it can be written back).
	loads bool
}

// stageWith is a one-stage stage_args config with extra lines in the
// stage; its first extra line is line 3.
func stageWith(lines ...string) string {
	return "stage_args:\n  - stage_id: 0\n    " + strings.Join(lines, "\n    ") + "\n"
}

func loaderCases() []loaderCase {
	return []loaderCase{
		// Tags beyond the safe core schema, on scalars, lists and mappings.
		{"python object from a list", stageWith("x: !!python/object/apply:os.system [ls]"), 3, "asks for a Python object", false},
		{"python name", stageWith("x: !!python/name:os.system"), 3, "asks for a Python object", false},
		{"python object mapping", stageWith("engine_args: !!python/object:vllm.EngineArgs {model: m}"), 3, "asks for a Python object", false},
		{"python tag on the top level", "!!python/object/new:os.system\nstage_args: []\n", 1, "asks for a Python object", false},
		{"local tag", stageWith("x: !custom 3"), 3, "tag !custom is not supported", false},
		{"binary", stageWith("x: !!binary aGk="), 3, "tag !!binary is not supported", true},
		{"timestamp", stageWith("x: !!timestamp 2001-12-14"), 3, "tag !!timestamp is not supported", false},
		{"set", stageWith("x: !!set {a: null}"), 3, "tag !!set on a mapping", false},
		{"omap", stageWith("x: !!omap [{a: 1}]"), 3, "tag !!omap on a list", true},
		{"str tag on a mapping", stageWith("x: !!str {a: 1}"), 3, "tag !!str on a mapping", false},
		{"bool tag on a word", stageWith("x: !!bool maybe"), 3, `!!bool "maybe" is not a value`, false},
		{"int tag on an octal PyYAML reads", stageWith("x: !!int 0o7"), 3, "remove the tag", true},
		{"float tag on a word", stageWith("x: !!float fast"), 3, "remove the tag", false},
		// YAML 1.1 keys that are not values.
		{"bare = value", stageWith("x: ="), 3, "bare `=`", false},
		{"bare = in a list", stageWith("x: [a, =]"), 3, "bare `=`", false},
		{"<< as a value", stageWith("x: <<"), 3, "merge key", false},
		{"<< in a list", stageWith("x:", "  - <<"), 4, "merge key", false},
		// Merge keys that merge no mapping.
		{"merge of a number", stageWith("<<: 3"), 3, "takes a mapping or a list of mappings", false},
		{"merge of null", stageWith("<<: ~"), 3, "takes a mapping or a list of mappings", false},
		{"merge of a list with a number", "d: &d {a: 1}\nstage_args:\n  - stage_id: 0\n    <<: [*d, 1]\n", 4, "must hold only mappings", false},
		{"merge of a string alias", "d: &d text\nstage_args:\n  - stage_id: 0\n    <<: *d\n", 4, "takes a mapping", false},
		// Keys the loader cannot hold, or reads as one.
		{"null key", stageWith("~: 1"), 3, "a mapping key is null", false},
		{"empty null key", stageWith("null: 1"), 3, "a mapping key is null", false},
		{"list as a key", stageWith("? [1, 2]", ": x"), 3, "is a list or a mapping", false},
		{"yes and true", stageWith("env: {yes: a, true: b}"), 3, `keys "yes" (line 3) and "true" are one key`, true},
		{"1 and 0x1", stageWith("x:", "  1: a", "  0x1: b"), 5, `keys "1" (line 4) and "0x1" are one key`, true},
		{"1 and 1.0", stageWith("x: {1: a, 1.0: b}"), 3, "the number 1", true},
		{"on and True", stageWith("x: {on: a, True: b}"), 3, "the boolean true", true},
		// Interpolations OmegaConf cannot parse.
		{"unclosed interpolation", stageWith("x: ${a"), 3, "never closed", false},
		{"unclosed resolver", stageWith(`x: "${oc.env:HOME"`), 3, "never closed", false},
		{"second one unclosed", stageWith(`x: "a ${b} ${c"`), 3, `at "${c"`, false},
		// Numbers the loader recognises and then fails to build.
		{"binary without digits", stageWith("x: 0b_"), 3, "fails to read it", false},
		{"hex without digits", stageWith("x: 0x_"), 3, "fails to read it", false},
		{"point and underscore", stageWith("x: ._"), 3, "fails to read it", false},
		// Base-60 numbers yaml.v3 would write quoted in a flow collection.
		{"base-60 in a flow list", stageWith("x: [1:30]"), 3, "write 90", true},
		{"base-60 float in a flow mapping", stageWith("x: {t: 1:30.5}"), 3, "write 90.5", true},
		{"base-60 key in a flow mapping", stageWith("x: {1:30: a}"), 3, "write 90", true},
		{"base-60 brought into a flow list by an alias", "t: &t 1:30\nstage_args:\n  - stage_id: 0\n    x: [*t]\n", 4, "write 90", true},
		{"base-60 brought into a flow mapping by a merge", "d: &d\n  t: 1:30\nstage_args:\n  - stage_id: 0\n    x: {<<: *d}\n", 2, "write 90", true},
		{"null key by an alias", "n: &n ~\nstage_args:\n  - stage_id: 0\n    *n : 1\n", 4, "a mapping key is null", false},
	}
}

// TestParseRefusesWhatTheLoaderCannotRead: each document is refused, with
// the line and the fix, and vllm-omni's loader indeed fails on it (or
// reads it in a way the planner could not write back).
func TestParseRefusesWhatTheLoaderCannotRead(t *testing.T) {
	cases := loaderCases()
	var docs []string
	for _, c := range cases {
		docs = append(docs, c.src)
	}
	py := loadWithOmegaConf(t, docs)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := Parse([]byte(c.src))
			if err == nil {
				t.Fatalf("Parse accepted it:\n%s", mustRender(t, d))
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not one *ParseError", err, err)
			}
			if !pe.Loader {
				t.Errorf("error %v is not marked as the loader's", err)
			}
			if pe.line != c.line || !strings.Contains(err.Error(), fmt.Sprintf("line %d", c.line)) {
				t.Errorf("error %q: want line %d", err, c.line)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not say %q", err, c.want)
			}
			if failed := py[i].Err != ""; failed == c.loads {
				t.Errorf("OmegaConf: %+v; the case says loads=%t", py[i], c.loads)
			}
		})
	}
}

// TestParseReportsEveryLoaderProblem: one pass finds them all, in order.
func TestParseReportsEveryLoaderProblem(t *testing.T) {
	src := stageWith("a: =", "b: !!binary aGk=", "<<: 3", "c: {yes: 1, on: 2}", "d: ${x")
	_, err := Parse([]byte(src))
	var list ParseErrors
	if !errors.As(err, &list) {
		t.Fatalf("error %v (%T) is not a ParseErrors", err, err)
	}
	var lines []int
	for _, e := range list {
		lines = append(lines, e.line)
	}
	if want := []int{3, 4, 5, 6, 7}; !reflect.DeepEqual(lines, want) {
		t.Errorf("lines %v, want %v: %v", lines, want, err)
	}
}

// anchorCases are documents whose aliases and merge keys Parse writes out.
var anchorCases = []struct{ name, src string }{
	{"stage defaults merged into each stage",
		"defaults: &stage\n  stage_type: llm\n  engine_args: &ea\n    model_stage: thinker\n    model_arch: Qwen3OmniMoeForConditionalGeneration\n    worker_type: ar\nstage_args:\n  - <<: *stage  # shared\n    stage_id: 0\n  - <<: *stage\n    stage_id: 1\n    engine_args:\n      <<: *ea\n      model_stage: talker\n    engine_input_source: [0]\n"},
	{"own keys win over merged ones",
		"d: &d {a: 1, b: 2}\nstage_args:\n  - stage_id: 0\n    b: 3\n    <<: *d\n"},
	{"the first of a merged list wins",
		"x: &x {a: 1, b: 1}\ny: &y {b: 2, c: 2}\nstage_args:\n  - stage_id: 0\n    <<: [*x, *y]\n"},
	{"a merge inside a merged mapping",
		"base: &base {a: 1}\nmid: &mid {<<: *base, b: 2}\nstage_args:\n  - <<: *mid\n    stage_id: 0\n"},
	{"an inline merged mapping",
		"stage_args:\n  - <<: {stage_id: 0, stage_type: llm}\n    final_output: true\n"},
	{"merged keys that override each other across a list",
		"x: &x {a: 1}\nstage_args:\n  - stage_id: 0\n    <<: [{a: 2, b: 2}, *x, {a: 3, c: 3}]\n"},
	{"merged numbers equal as keys",
		"stage_args:\n  - stage_id: 0\n    m:\n      1: own\n      <<: {1.0: merged, 0x2: two}\n"},
	{"aliases of scalars and lists",
		"tp: &tp 2\nins: &ins [0]\nstage_args:\n  - stage_id: 0\n    engine_args: {tensor_parallel_size: *tp}\n  - stage_id: 1\n    engine_input_source: *ins\n"},
	{"a merge in the top-level runtime",
		"rt: &rt {enabled: true, edges: [{from: 0, to: 1}]}\nstage_args:\n  - stage_id: 0\n  - stage_id: 1\nruntime:\n  <<: *rt\n"},
	{"a quoted << is a plain key",
		"stage_args:\n  - stage_id: 0\n    \"<<\": {a: 1}\n"},
	{"an explicit merge tag",
		"stage_args:\n  - stage_id: 0\n    !!merge m: {a: 1}\n"},
}

// TestAnchorsWrittenOutAsTheLoaderReadsThem: what Parse writes out is, to
// vllm-omni's loader, the data it read from the source, with no alias,
// anchor or merge key left.
func TestAnchorsWrittenOutAsTheLoaderReadsThem(t *testing.T) {
	var docs []string
	var outs []string
	for _, c := range anchorCases {
		d := mustParse(t, c.src)
		out := mustRender(t, d)
		if strings.Contains(out, "&") || strings.Contains(out, "*") || strings.Contains(out, "<<:") {
			t.Errorf("%s: an anchor, alias or merge key is left:\n%s", c.name, out)
		}
		docs = append(docs, c.src, out)
		outs = append(outs, out)
	}
	res := loadWithOmegaConf(t, docs)
	for i, c := range anchorCases {
		src, out := res[2*i], res[2*i+1]
		if src.Err != "" || out.Err != "" {
			t.Errorf("%s: OmegaConf fails: %s / %s", c.name, src.Err, out.Err)
			continue
		}
		if src.Data != out.Data {
			t.Errorf("%s: OmegaConf reads the source as\n  %s\nand the written-out config as\n  %s\n%s", c.name, src.Data, out.Data, outs[i])
		}
	}
}

func TestAnchorsWrittenOutKeepComments(t *testing.T) {
	d := mustParse(t, anchorCases[0].src)
	out := mustRender(t, d)
	if !strings.Contains(out, "# shared") {
		t.Errorf("the comment on the merge line is lost:\n%s", out)
	}
	if a, m := d.WrittenOut(); a != 8 || m != 8 {
		t.Errorf("WrittenOut = %d, %d; want 8, 8 (the first alias and merge key)", a, m)
	}
	// Each stage is its own: editing one leaves the other alone.
	s := d.Stages()
	mapSet(s[0].engineArgs(), "max_num_seqs", intNode(4))
	if mapGet(s[1].engineArgs(), "max_num_seqs") != nil || mapGet(pathGet(d.top(), "defaults", "engine_args"), "max_num_seqs") != nil {
		t.Errorf("an edit of one merged stage reached another:\n%s", mustRender(t, d))
	}
	if got := s[1].ModelStage(); got != "talker" {
		t.Errorf("stage 1 model_stage = %q, want its own talker", got)
	}
	if got, _ := scalarString(s[1].engine("model_arch")); got != "Qwen3OmniMoeForConditionalGeneration" {
		t.Errorf("stage 1 model_arch = %q, want the merged one", got)
	}
	if plain := mustParse(t, "stage_args: [{stage_id: 0}]\n"); plain.aliasLine != 0 || plain.mergeLine != 0 {
		t.Errorf("WrittenOut of a plain document is not 0, 0")
	}
}

// TestReadersReadAsTheLoader: the views read values as vllm-omni does.
func TestReadersReadAsTheLoader(t *testing.T) {
	tests := []struct {
		value string
		i     int
		isInt bool
		f     float64
		isNum bool
		b     bool
		isB   bool
	}{
		{"yes", 0, false, 0, false, true, true},
		{"Off", 0, false, 0, false, false, true},
		{"on", 0, false, 0, false, true, true},
		{`"true"`, 0, false, 0, false, false, false},
		{"y", 0, false, 0, false, false, false},
		{"2", 2, true, 2, true, false, false},
		{`"2"`, 0, false, 0, false, false, false},
		{"0x10", 16, true, 16, true, false, false},
		{"010", 8, true, 8, true, false, false},
		{"0o7", 0, false, 0, false, false, false},
		{"08", 0, false, 0, false, false, false},
		{"1_000", 1000, true, 1000, true, false, false},
		{"1:30", 90, true, 90, true, false, false},
		{"1e3", 0, false, 1000, true, false, false},
		{"!!int 3", 3, true, 3, true, false, false},
		{"!!float 1", 0, false, 1, true, false, false},
		{"!!str 3", 0, false, 0, false, false, false},
		{"2001-12-14", 0, false, 0, false, false, false},
		{"99999999999999999999", 0, false, 1e20, true, false, false},
	}
	for _, tc := range tests {
		_, m := top(t, "v: "+tc.value+"\n")
		n := mapGet(m, "v")
		i, isInt := scalarInt(n)
		f, isNum := scalarFloat(n)
		b, isB := scalarBool(n)
		if i != tc.i || isInt != tc.isInt || f != tc.f || isNum != tc.isNum || b != tc.b || isB != tc.isB {
			t.Errorf("%s: int %d %t, float %g %t, bool %t %t; want int %d %t, float %g %t, bool %t %t",
				tc.value, i, isInt, f, isNum, b, isB, tc.i, tc.isInt, tc.f, tc.isNum, tc.b, tc.isB)
		}
	}
	_, m := top(t, "a: ~\nb: !!null x\nc: ''\n")
	for _, k := range []string{"a", "b"} {
		if _, ok := scalarString(mapGet(m, k)); ok {
			t.Errorf("%s: a null reads as text", k)
		}
	}
	if s, ok := scalarString(mapGet(m, "c")); !ok || s != "" {
		t.Errorf("c: the empty string reads as %q %t", s, ok)
	}
}

// TestFlowSequenceCommentSurvivesReplace: a replaced flow list keeps its
// line comment.
func TestFlowSequenceCommentSurvivesReplace(t *testing.T) {
	for _, src := range []string{
		"engine_input_source: [0]  # note\n",
		"engine_input_source: [0, 1] # two inputs\n",
		"engine_input_source: []  # none yet\n",
	} {
		doc, m := top(t, src)
		comment := strings.TrimSpace(src[strings.Index(src, "#"):])
		mapSet(m, "engine_input_source", flowIntSeq([]int{2}))
		if got := renderNode(t, doc); got != "engine_input_source: [2] "+comment+"\n" {
			t.Errorf("%q became %q", src, got)
		}
	}
	var root yaml.Node
	if err := yaml.Unmarshal([]byte("a: [0] # c\n"), &root); err != nil {
		t.Fatal(err)
	}
	mapSet(root.Content[0], "a", newSeq())
	if got := mapGet(root.Content[0], "a").LineComment; got != "" {
		t.Errorf("a block list took the line comment %q, which would land after its key", got)
	}
}

// TestGeneratedMergesMatchTheLoader writes out merges of mappings whose
// keys overlap, in every spelling the loader treats as one key, and checks
// OmegaConf reads each the same before and after.
func TestGeneratedMergesMatchTheLoader(t *testing.T) {
	// Classes of keys the loader reads as one key; a mapping takes at most
	// one spelling of each, and the merge brings the others together.
	classes := [][]string{{"a"}, {"b"}, {"1", "1.0", "0x1", "yes", "true", "on"}, {"'1'", "\"1\""}, {"2", "2.0", "0b10"}}
	pick := func(seed, n int) string {
		var parts []string
		for i, c := range classes {
			if (seed>>i)&1 == 1 && len(parts) < n {
				parts = append(parts, fmt.Sprintf("%s: v%d_%d", c[(seed/7+i)%len(c)], seed, i))
			}
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	var docs, srcs []string
	for seed := 1; seed < 160; seed++ {
		var b strings.Builder
		b.WriteString("m0: &m0 " + pick(seed*7%32+seed/32, 3) + "\n")
		b.WriteString("m1: &m1 " + pick(seed*13%32+seed/16, 3) + "\n")
		b.WriteString("m2: &m2 {<<: *m0, z: " + fmt.Sprint(seed) + "}\n")
		b.WriteString("stage_args:\n  - stage_id: 0\n    x:\n")
		own := pick(seed*31%32, 2)
		for _, kv := range strings.Split(strings.Trim(own, "{}"), ", ") {
			if kv != "" {
				b.WriteString("      " + kv + "\n")
			}
		}
		switch seed % 3 {
		case 0:
			b.WriteString("      <<: *m1\n")
		case 1:
			b.WriteString("      <<: [*m0, *m1]\n")
		case 2:
			b.WriteString("      <<: [*m1, *m2, " + pick(seed*5%32+seed, 2) + "]\n")
		}
		src := b.String()
		d, err := Parse([]byte(src))
		if err != nil {
			continue // keys spelled apart that the loader reads as one
		}
		docs = append(docs, src, mustRender(t, d))
		srcs = append(srcs, src)
	}
	if len(srcs) < 100 {
		t.Fatalf("only %d generated documents parse", len(srcs))
	}
	res := loadWithOmegaConf(t, docs)
	for i, src := range srcs {
		if a, b := res[2*i], res[2*i+1]; a != b {
			t.Errorf("OmegaConf reads\n%s\nas %+v, and its written-out form\n%s\nas %+v", src, a, docs[2*i+1], b)
		}
	}
}

// TestKeysTheLoaderTellsApart: a plain on (the boolean true) and a quoted
// "on" are two keys to vllm-omni's loader, and to Parse and mapGet.
func TestKeysTheLoaderTellsApart(t *testing.T) {
	srcs := []string{
		stageWith("x: {on: a, \"on\": b}"),
		stageWith("x:", "  1: a", "  '1': b"),
		stageWith("x: {yes: a, 'yes': b, null_: c}"),
	}
	res := loadWithOmegaConf(t, srcs)
	for i, src := range srcs {
		d := mustParse(t, src)
		x := mapGet(d.Stages()[0].node, "x")
		if len(x.Content) < 4 {
			t.Errorf("%q: keys lost: %s", src, mustRender(t, d))
		}
		if res[i].Err != "" || !strings.Contains(res[i].Data, `"str:'`) {
			t.Errorf("%q: OmegaConf reads %+v", src, res[i])
		}
	}
	x := mapGet(mustParse(t, srcs[0]).Stages()[0].node, "x")
	if v, _ := scalarString(mapGet(x, "on")); v != "b" {
		t.Errorf("mapGet(on) = %q, want the quoted key's b", v)
	}
}
