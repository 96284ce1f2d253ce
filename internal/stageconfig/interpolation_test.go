package stageconfig

import (
	"math/rand"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// omegaconfResolved reads each document as the deploy loader reads
// `pipeline:`: OmegaConf.load, then to_container(resolve=True)
// (vllm_omni/config/stage_config.py@2ce15ab7:641), and reports the value
// under `a`, or the error's type.
const omegaconfResolved = `import sys, json, io
from omegaconf import OmegaConf
out = []
for doc in json.load(sys.stdin):
    try:
        out.append({"value": OmegaConf.to_container(OmegaConf.load(io.StringIO(doc)), resolve=True)["a"]})
    except Exception as e:
        out.append({"err": type(e).__name__})
json.dump(out, sys.stdout)
`

type resolvedResult struct {
	Value string `json:"value"`
	Err   string `json:"err"`
}

// interpolationCorpus: strings around `${`, with backslashes before and
// after it, unclosed and nested, and in text YAML quotes.
func interpolationCorpus() []string {
	out := []string{
		"${x}", "${oc.env:HOME}", "my${oc.env:HOME}pd", `\${x}`, `\\${x}`, `\\\${x}`, `a\b${x}`, `${x}\`, `${x}\\`,
		"${", "${a", "$${x}", "$", "${}", "${a}${b}", "{${x}}", "${x}}", `${a\}`, "${${x}}", `a\\b`, `\`, "x: ${y}",
		"'${x}'", `"${x}"`, "${x} # not a comment", "yes${x}", "\t${x}\n", "${\u00e9}",
	}
	// Random strings over the characters that matter here: deterministic,
	// so a failure reproduces.
	r := rand.New(rand.NewSource(23))
	alphabet := []string{"$", "{", "}", `\`, "a", ":", " ", "${", `\${`}
	for i := 0; i < 300; i++ {
		var b strings.Builder
		for n := 1 + r.Intn(8); n > 0; n-- {
			b.WriteString(alphabet[r.Intn(len(alphabet))])
		}
		out = append(out, b.String())
	}
	return out
}

// TestEscapedInterpolationsReadBackAsWritten: a string written with
// loaderStrNode is read by OmegaConf, resolved once, as the string itself,
// and never as an interpolation.
func TestEscapedInterpolationsReadBackAsWritten(t *testing.T) {
	corpus := interpolationCorpus()
	docs := make([]string, 2*len(corpus))
	for i, s := range corpus {
		// Each string escaped, then as it is (to hold the Go model to
		// OmegaConf where it says what OmegaConf reads).
		for j, n := range []*yaml.Node{loaderStrNode(s), strNode(s)} {
			b, err := encode(&yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{keyNode("a"), n}})
			if err != nil {
				t.Fatal(err)
			}
			docs[j*len(corpus)+i] = string(b)
		}
	}
	res := pythonOverDocs[resolvedResult](t, omegaconfResolved, docs)
	for i, r := range res[len(corpus):] {
		if want, interp := omegaconfText(corpus[i]); !interp && (r.Err != "" || r.Value != want) {
			t.Errorf("the Go model reads %q as %q, OmegaConf as %q (%s)", corpus[i], want, r.Value, r.Err)
		}
	}
	for i, r := range res[:len(corpus)] {
		if r.Err != "" || r.Value != corpus[i] {
			t.Errorf("%q, written as %q, reads back as %q (%s)", corpus[i], docs[i], r.Value, r.Err)
		}
		if got, interp := omegaconfText(escapeInterpolation(corpus[i])); interp || got != corpus[i] {
			t.Errorf("the Go model reads %q as %q (interpolation %v)", escapeInterpolation(corpus[i]), got, interp)
		}
	}
}

// omegaconfText is how OmegaConf reads a string value, resolved once, for
// the text it leaves alone: what a run of backslashes before `${` becomes,
// and whether an interpolation is left (then the text is not known).
// TestEscapedInterpolationsReadBackAsWritten checks it against OmegaConf.
func omegaconfText(s string) (string, bool) {
	if !strings.Contains(s, "${") {
		return s, false
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == '\\' {
			j++
		}
		opens := j+1 < len(s) && s[j] == '$' && s[j+1] == '{'
		switch {
		case opens && (j-i)%2 == 0:
			return "", true
		case opens:
			b.WriteString(strings.Repeat(`\`, (j-i)/2) + "${")
			i = j + 2
		case j > i:
			b.WriteString(s[i:j])
			i = j
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), false
}

// FuzzEscapeInterpolation: every string, escaped, reads back as itself
// and holds no interpolation; a string without `${` is not changed.
func FuzzEscapeInterpolation(f *testing.F) {
	for _, s := range interpolationCorpus()[:40] {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := escapeInterpolation(s)
		if got, interp := omegaconfText(e); interp || got != s {
			t.Fatalf("%q escaped as %q reads back as %q (interpolation %v)", s, e, got, interp)
		}
		if !strings.Contains(s, "${") && e != s {
			t.Fatalf("%q has no ${ but was changed to %q", s, e)
		}
		if _, unclosed := unclosedInterpolation(e); unclosed {
			t.Fatalf("%q escaped as %q still opens an interpolation", s, e)
		}
	})
}
