package stageconfig

import (
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// omegaconfReader reads each document of a JSON list with OmegaConf's own
// loader (the one OmegaConf.load uses) and reports, per document, the type
// and value of the value under `a` and the type of the first key, or why
// loading failed.
const omegaconfReader = `import sys, json, math, yaml
from omegaconf._utils import get_yaml_loader
def kind(v):
    if v is None: return ["null", ""]
    if isinstance(v, bool): return ["bool", str(v).lower()]
    if isinstance(v, int): return ["int", str(v)]
    if isinstance(v, float): return ["float", repr(v)]
    if isinstance(v, str): return ["str", v]
    return ["other", type(v).__name__]
out = []
for doc in json.load(sys.stdin):
    try:
        d = yaml.load(doc, Loader=get_yaml_loader())
    except yaml.YAMLError as e:
        out.append({"err": type(e).__name__})
        continue
    except (ValueError, KeyError) as e:
        out.append({"err": "construct"})
        continue
    if not isinstance(d, dict) or len(d) != 1:
        out.append({"err": "shape"})
        continue
    k, v = next(iter(d.items()))
    out.append({"key": kind(k), "value": kind(v)})
json.dump(out, sys.stdout)
`

type pyResult struct {
	Err   string    `json:"err"`
	Key   [2]string `json:"key"`
	Value [2]string `json:"value"`
}

// readWithOmegaConf runs omegaconfReader over docs.
func readWithOmegaConf(t *testing.T, docs []string) []pyResult {
	t.Helper()
	return pythonOverDocs[pyResult](t, omegaconfReader, docs)
}

// scalarCorpus is every short string over characters that matter to YAML
// 1.1's scalar rules, and the spellings those rules single out.
func scalarCorpus() []string {
	out := []string{
		"yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF", "y", "Y", "n", "N",
		"true", "True", "TRUE", "tRUE", "false", "False", "FALSE", "null", "Null", "NULL", "nULL", "~",
		"1:30", "-1:30", "190:20:30", "1:30.5", "1:60", "01:30", "1_0:30", "0:30",
		"0o7", "07", "08", "010", "0x1F", "0X1F", "0x_1F", "-0x1F", "0b101", "0b", "0b_", "0x", "0x_", "0_", "0__7",
		"1_000", "1__0", "_1", "1_", "+1", "-0", "00", "99999999999999999999999", "-99999999999999999999999",
		"1e5", "1E5", "1e+5", "1e-05", "1.0e+5", "1.e5", "1.5E3", "+0.5e3", "1.", "0.", ".5", "+.5", "-.5", "._", "._1", "1_0.5", "1._",
		".inf", ".Inf", ".INF", "-.inf", "+.inf", ".nan", ".NaN", ".NAN", "-.nan", "inf", "nan", "1e400", "-1e400", "1e-400",
		"2001-12-14", "2001-12-14 21:59:43.10 -5", "=", "<<", "<", "a=b", "${a}", "1.5.5", "0.0.0.0", "10.0.0.1", "1,2",
	}
	const alphabet = "019._:-+eExoby~<="
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			s := prefix + string(c)
			out = append(out, s)
			gen(s, n-1)
		}
	}
	gen("", 3)
	return out
}

// TestScalarsReadAsOmegaConfReadsThem is the reference for pyRead: every
// scalar of the corpus, as a value and as a key, must read in Go as
// OmegaConf's loader reads it, or be refused where the loader fails.
func TestScalarsReadAsOmegaConfReadsThem(t *testing.T) {
	corpus := scalarCorpus()
	var docs []string
	var nodes [][2]*yaml.Node // value, key
	var texts []string
	for _, s := range corpus {
		for _, doc := range []string{"a: " + s + "\n", s + ": a\n"} {
			var root yaml.Node
			if yaml.Unmarshal([]byte(doc), &root) != nil || len(root.Content) != 1 || root.Content[0].Kind != yaml.MappingNode || len(root.Content[0].Content) != 2 {
				continue
			}
			m := root.Content[0]
			if m.Content[0].Kind != yaml.ScalarNode || m.Content[1].Kind != yaml.ScalarNode {
				continue
			}
			docs = append(docs, doc)
			nodes = append(nodes, [2]*yaml.Node{m.Content[1], m.Content[0]})
			texts = append(texts, s)
		}
	}
	res := readWithOmegaConf(t, docs)
	checked := 0
	for i, r := range res {
		doc := docs[i]
		value, key := pyRead(nodes[i][0]), pyRead(nodes[i][1])
		switch r.Err {
		case "":
		case "construct", "ConstructorError":
			// The loader fails on the value or the key: Go must see that. (A
			// merge key with a scalar value is refused by checkLoadable.)
			if key.Kind != pyMerge && value.Kind != pyInvalid && value.Kind != pyMerge && value.Kind != pyValue && key.Kind != pyInvalid {
				t.Errorf("%q: OmegaConf's loader fails (%s) but Go reads value %s, key %s", doc, r.Err, pyDescribe(value), pyDescribe(key))
			}
			checked++
			continue
		default:
			continue // a syntax the two parsers disagree on, not a scalar rule
		}
		if strings.HasPrefix(doc, "a: ") {
			if !sameReading(value, r.Value) {
				t.Errorf("value %q: OmegaConf reads %v, Go reads %s", texts[i], r.Value, pyDescribe(value))
			}
		} else if key.Kind != pyMerge && !sameReading(key, r.Key) {
			t.Errorf("key %q: OmegaConf reads %v, Go reads %s", texts[i], r.Key, pyDescribe(key))
		}
		checked++
	}
	if checked < 4000 {
		t.Fatalf("only %d documents compared", checked)
	}
}

func sameReading(r pyScalar, py [2]string) bool {
	switch py[0] {
	case "null":
		return r.Kind == pyNull
	case "bool":
		return r.Kind == pyBool && strconv.FormatBool(r.Bool) == py[1]
	case "int":
		return r.Kind == pyInt && r.Int.String() == py[1]
	case "float":
		if r.Kind != pyFloat {
			return false
		}
		want, err := strconv.ParseFloat(py[1], 64)
		if err != nil {
			return false
		}
		return want == r.Float || (math.IsNaN(want) && math.IsNaN(r.Float))
	case "str":
		return (r.Kind == pyStr || r.Kind == pyValue) && r.Text == py[1]
	}
	return false
}

// TestStringsAndKeysReadBackAsWritten: whatever string the planner writes,
// as a value or a key, both readers read back as that string.
func TestStringsAndKeysReadBackAsWritten(t *testing.T) {
	corpus := scalarCorpus()
	var docs []string
	for _, s := range corpus {
		m := newMap()
		m.Content = append(m.Content, keyNode(s), strNode(s))
		out, err := yaml.Marshal(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{m}})
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]string
		if err := yaml.Unmarshal(out, &back); err != nil || back[s] != s {
			t.Errorf("yaml.v3 reads %q back as %v (%v)", out, back, err)
		}
		docs = append(docs, string(out))
	}
	for i, r := range readWithOmegaConf(t, docs) {
		if r.Err != "" || r.Key != [2]string{"str", corpus[i]} || r.Value != [2]string{"str", corpus[i]} {
			t.Errorf("%q is written as %q, which OmegaConf reads as key %v, value %v (%s)", corpus[i], docs[i], r.Key, r.Value, r.Err)
		}
	}
}

// TestIdentifierKeysAreStrings pins isStringKey's shortcut to the rules.
func TestIdentifierKeysAreStrings(t *testing.T) {
	for _, s := range append(scalarCorpus(), "stage_id", "engine_args", "Yes", "NULL", "on_", "_", "a1", "ON") {
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
		if isIdentifier(s) && pyPlainKind(s) != pyStr {
			t.Errorf("%q is taken for an identifier, but the loader reads it as kind %d", s, pyPlainKind(s))
		}
		if got, want := isStringKey(k), pyPlainKind(s) == pyStr || pyPlainKind(s) == pyValue; got != want {
			t.Errorf("isStringKey(%q) = %t, want %t", s, got, want)
		}
	}
}

// The fast path reads the same numbers as the general one, and leaves
// everything else to it.
func TestPlainDecimal(t *testing.T) {
	for _, s := range []string{"0", "7", "25201", "999999999999999999", "1000000000000000000", "007", "0x1f", "1_000", "+5", "-5", "1:30", "", "12a"} {
		want, wantOK := pyParseInt("_" + s) // the underscore skips the fast path
		if s == "" {
			want, wantOK = nil, false
		}
		n, ok := plainDecimal(s)
		if ok && (!wantOK || want.Int64() != n) {
			t.Errorf("plainDecimal(%q) = %d, the general path reads %v, %t", s, n, want, wantOK)
		}
		if got, gotOK := pyParseInt(s); gotOK != wantOK || (gotOK && got.Cmp(want) != 0) {
			t.Errorf("pyParseInt(%q) = %v, %t; without the fast path %v, %t", s, got, gotOK, want, wantOK)
		}
	}
}

// pyBoolRE is PyYAML's bool resolver, which yaml11Bools spells out.
var pyBoolRE = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)

// pyPlainKind skips regexps that cannot match and reads digits.digits
// without one; over every short string of the characters that matter, it
// must classify as the regexps alone do.
func TestPyPlainKindShortcutsChangeNothing(t *testing.T) {
	byRegexps := func(s string) pyKind {
		c := s[0]
		number := strings.IndexByte("-+0123456789.", c) >= 0
		switch {
		case isDecimal(s):
			return pyInt
		case pyBoolRE.MatchString(s):
			return pyBool
		case number && pyFloatRE.MatchString(s):
			return pyFloat
		case number && c != '.' && pyIntRE.MatchString(s):
			return pyInt
		case s == "<<":
			return pyMerge
		case pyNullRE.MatchString(s):
			return pyNull
		case s == "=":
			return pyValue
		case number && omegaconfFloat.MatchString(s):
			return pyFloat
		}
		return pyStr
	}
	const alphabet = "09._eE+-:ynNtTfFoOuslrA~<="
	var check func(prefix string, depth int)
	n := 0
	check = func(prefix string, depth int) {
		if prefix != "" {
			n++
			if got, want := pyPlainKind(prefix), byRegexps(prefix); got != want {
				t.Fatalf("pyPlainKind(%q) = %v, the regexps say %v", prefix, got, want)
			}
		}
		if depth == 0 {
			return
		}
		for i := 0; i < len(alphabet); i++ {
			check(prefix+alphabet[i:i+1], depth-1)
		}
	}
	check("", 3)
	for _, s := range []string{"yes", "False", "OFF", "null", "NULL", "Null", "~", "0.9", "1.", "32.50", "1.05", "1.2.3",
		"0.0", "10.", ".5", "1_0.5", "+1.5", "1e5", "1.0e+5", "thinker", "talker_config", "true_", "nulls", "noway", "12:30.5"} {
		if got, want := pyPlainKind(s), byRegexps(s); got != want {
			t.Errorf("pyPlainKind(%q) = %v, the regexps say %v", s, got, want)
		}
	}
	if n < 10000 {
		t.Fatalf("checked %d strings", n)
	}
}

// yaml11Bools spells out PyYAML's bool resolver, no word more or less.
func TestYAML11BoolsAreTheResolversWords(t *testing.T) {
	for w := range yaml11Bools {
		if !pyBoolRE.MatchString(w) {
			t.Errorf("%q is in yaml11Bools but not read as a boolean", w)
		}
		if !yaml11Words[w] {
			t.Errorf("%q is a boolean word but not in yaml11Words", w)
		}
	}
	if n := strings.Count(pyBoolRE.String(), "|") + 1; len(yaml11Bools) != n {
		t.Errorf("yaml11Bools has %d words, the resolver %d", len(yaml11Bools), n)
	}
	for _, w := range []string{"null", "Null", "NULL"} {
		if !yaml11Words[w] || yaml11Bools[w] {
			t.Errorf("%q: a null word, not a boolean", w)
		}
	}
}
