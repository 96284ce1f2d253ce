package stageconfig

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
)

// envWith is a one-stage stage_args config whose runtime.env holds the
// given line, on line 5.
func envWith(line string) string {
	return "stage_args:\n  - stage_id: 3\n    runtime:\n      env:\n        " + line + "\n"
}

// Every entry of a stage's environment that its process could not get as
// written is one finding, naming the entry and the stage: a name systemd or
// a shell refuses, a value vllm-omni would set as other text than the units
// (null, 0x10, 1.50), and a value a unit's line cannot carry.
func TestLintEnv(t *testing.T) {
	for _, c := range []struct {
		line string
		code diagcode.Code
		says string
	}{
		{"A-B: x", diagcode.EnvNameInvalid, `runtime.env.A-B (stage 3) is not a name systemd or a shell takes`},
		{"1X: x", diagcode.EnvNameInvalid, `starts with a digit`},
		{`"": x`, diagcode.EnvNameInvalid, `the name is empty`},
		{"É: x", diagcode.EnvNameInvalid, `holds`},
		{"A.B: x", diagcode.EnvNameInvalid, `"A.B"`},
		{`"A B": x`, diagcode.EnvNameInvalid, `"A B"`},
		{"yes: x", diagcode.EnvNameInvalid, `reads as the boolean true`},
		{"12: x", diagcode.EnvNameInvalid, `reads as the integer 12`},
		{"A: ~", diagcode.YAMLValueType, `is null, which vllm-omni sets as the text None`},
		{"A:", diagcode.YAMLValueType, `is null`},
		{"A: 0x10", diagcode.YAMLValueType, `sets as "16" while the units would carry "0x10": write it in quotes, "0x10", or as 16`},
		{"A: 1_000", diagcode.YAMLValueType, `"1000"`},
		{"A: +1", diagcode.YAMLValueType, `"1"`},
		{"A: 010", diagcode.YAMLValueType, `"8"`},
		{"A: 1.50", diagcode.YAMLValueType, `"1.5"`},
		{"A: 1e3", diagcode.YAMLValueType, `"1000.0"`},
		{"A: .5", diagcode.YAMLValueType, `"0.5"`},
		{"A: 1:30", diagcode.YAMLValueType, `"90"`},
		{"A: .inf", diagcode.YAMLValueNotFinite, `not a finite number`},
		{"A: yes", diagcode.YAMLValueType, `the boolean true`},
		{"A: True", diagcode.YAMLValueType, `the boolean true`},
		{"A: [a, b]", diagcode.YAMLValueType, `is a list, where vllm-omni reads a single value`},
		{"A: {b: c}", diagcode.YAMLValueType, `is a mapping`},
		{`A: "a\nb"`, diagcode.EnvValueInvalid, `a newline`},
		{`A: "a\tb"`, diagcode.EnvValueInvalid, `a tab`},
		{`A: "a\x7fb"`, diagcode.EnvValueInvalid, `control character`},
		{`A: "\uFDD0"`, diagcode.EnvValueInvalid, `noncharacter U+FDD0`},
		{`A: "${oc.env:HOME}"`, diagcode.YAMLInterpolation, `OmegaConf interpolation`},
	} {
		t.Run(c.line, func(t *testing.T) {
			fs := mustParse(t, envWith(c.line)).Lint()
			if len(fs) != 1 {
				t.Fatalf("%d findings, want 1: %+v", len(fs), fs)
			}
			if fs[0].Code != c.code || fs[0].line != 5 || !strings.HasPrefix(fs[0].Detail, "line 5: stage_args[0].runtime.env.") ||
				!strings.Contains(fs[0].Detail, "(stage 3)") || !strings.Contains(fs[0].Detail, c.says) {
				t.Errorf("got %s at line %d: %s; want %s saying %q", fs[0].Code, fs[0].line, fs[0].Detail, c.code, c.says)
			}
			env, problems := mustParse(t, envWith(c.line)).Stages()[0].EnvVars()
			if len(env) != 0 || len(problems) != 1 || problems[0].code != c.code {
				t.Errorf("EnvVars: %v, %+v", env, problems)
			}
		})
	}
	// What both carriers give the same text passes, as written.
	for _, line := range []string{"A: x", "A: 8000", "A: -3", "A: 0", "A: 0.5", "A: 1.0", "A: 1e-05", "A: 1e+16", "A: 123456789012345678901234567890",
		`A: "0x10"`, `A: "yes"`, `A: ''`, "_a_1: x", "A: expandable_segments:True", `A: "50% $HOME \\ \"q\""`, "A: é😀"} {
		doc := mustParse(t, envWith(line))
		if fs := doc.Lint(); len(fs) > 0 {
			t.Errorf("%s: %+v", line, fs)
		}
		env, problems := doc.Stages()[0].EnvVars()
		want := strings.TrimSpace(strings.SplitN(line, ":", 2)[1])
		if r := pyRead(resolve(mapGet(doc.Stages()[0].env(), strings.SplitN(line, ":", 2)[0]))); r.Kind == pyStr {
			want = r.Text
		}
		if len(problems) > 0 || len(env) != 1 {
			t.Errorf("%s: %v, %+v", line, env, problems)
		}
		for _, v := range env {
			if v != want {
				t.Errorf("%s: %q, want %q", line, v, want)
			}
		}
	}
}

// The stages dialect's flat env is judged by the same rule, and so is
// runtime.env beside it.
func TestLintEnvStages(t *testing.T) {
	fs := mustParse(t, flatWith("env: {A-B: x}", "runtime: {env: {C: ~}}")).Lint()
	if len(fs) != 2 || fs[0].Code != diagcode.EnvNameInvalid || fs[1].Code != diagcode.YAMLValueType ||
		!strings.Contains(fs[0].Detail, "stages[0].env.A-B (stage 0)") || !strings.Contains(fs[1].Detail, "stages[0].runtime.env.C (stage 0)") {
		t.Errorf("%+v", fs)
	}
}

// What vllm-omni sets a number to is Python's str() of what its loader
// read: checked against PyYAML and OmegaConf themselves, over written
// numbers and random floats, and the rule passes exactly the numbers whose
// str() is their text.
func TestEnvNumbersAsPython(t *testing.T) {
	texts := []string{"0", "7", "-3", "+3", "007", "0x1F", "0b101", "1_000", "12345678901234567890123", "1:30", "-0",
		"0.5", ".5", "1.", "1.0", "1.50", "-0.0", "1e3", "1E3", "1.5e-7", "1.0e+16", "1e+16", "1e-05", "0.0001", "0.00001",
		"123456789012345678.0", "1234567890123456.0", "12345678901234567.0", "3.141592653589793", "2.5e+300", "6.02e23"}
	r := rand.New(rand.NewPCG(2, 3))
	for range 400 {
		f := math.Float64frombits(r.Uint64())
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		texts = append(texts, strconv.FormatFloat(f, 'g', -1, 64))
		texts = append(texts, strconv.FormatFloat(float64(r.IntN(1_000_000))/math.Pow(10, float64(r.IntN(12))), 'f', -1, 64))
	}
	var docs []string
	for _, s := range texts {
		docs = append(docs, envWith("A: "+s))
	}
	got := pythonOverDocs[string](t, `import sys, json, yaml
from omegaconf import OmegaConf
out = []
for d in json.load(sys.stdin):
    out.append(str(OmegaConf.to_container(OmegaConf.create(d))["stage_args"][0]["runtime"]["env"]["A"]))
print(json.dumps(out))`, docs)
	for i, s := range texts {
		env := mustParse(t, docs[i]).Stages()[0].env()
		k, n := env.Content[0], resolve(env.Content[1])
		r := pyRead(n)
		if r.Kind != pyInt && r.Kind != pyFloat {
			if got[i] != s {
				t.Errorf("%s: read as %v here, but Python gives %q", s, r.Kind, got[i])
			}
			continue
		}
		if pythonStr(r) != got[i] {
			t.Errorf("%s: str() is %q here, %q in Python", s, pythonStr(r), got[i])
		}
		_, p := envEntry(k, n)
		if (p == nil) != (got[i] == s) {
			t.Errorf("%s (Python sets %q): the rule says %+v", s, got[i], p)
		}
	}
}

// EnvEntries reads both environments of a `stages` stage, with each name's
// line; Texts gives every text value with its key and dotted path, and no
// number, boolean or null.
func TestEnvEntriesAndTexts(t *testing.T) {
	d := mustParse(t, flatWith("env: {CUDA_VISIBLE_DEVICES: \"1\", N: 2}", "runtime:", "  env:", "    HF_HOME: /x", "    L: [a]"))
	got := d.Stages()[0].EnvEntries()
	want := []EnvEntry{{"runtime.env", "HF_HOME", "/x", 6}, {"runtime.env", "L", "", 7}, {"env", "CUDA_VISIBLE_DEVICES", "1", 3}, {"env", "N", "2", 3}}
	if len(got) != len(want) {
		t.Fatalf("EnvEntries = %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("EnvEntries[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	texts := mustParse(t, "stage_args:\n  - stage_id: 0\n    engine_args: {hf_token: abc, n: 1, b: true, z: ~, l: [x, 2]}\n").Texts()
	var paths []string
	for _, x := range texts {
		paths = append(paths, x.Path+"="+x.Key+":"+x.Value)
	}
	if strings.Join(paths, " ") != "stage_args[0].engine_args.hf_token=hf_token:abc stage_args[0].engine_args.l[0]=l:x" {
		t.Errorf("Texts = %v", paths)
	}
}
