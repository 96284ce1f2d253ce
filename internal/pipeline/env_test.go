package pipeline

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/omnipd/terraform-provider-omni/internal/envvar"

	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// baseWithEnv is the Qwen3-Omni preset with the given YAML lines in the
// thinker's (stage 0's) runtime.env.
func baseWithEnv(t testing.TB, lines ...string) string {
	t.Helper()
	src, err := presets.Source("qwen3_omni_moe")
	if err != nil {
		t.Fatal(err)
	}
	anchor := "    runtime:\n"
	env := anchor + "      env:\n        " + strings.Join(lines, "\n        ") + "\n"
	return strings.Replace(string(src), anchor, env, 1)
}

// A base config's runtime.env entry that systemd would drop, or that its
// process could not get as written, is refused at plan time as an error of
// base_config that names the entry and its stage; never written into a unit,
// and never blamed on the whole plan (render_failed).
func TestStageEnvRefused(t *testing.T) {
	for _, c := range []struct {
		line, code, says string
	}{
		{"A-B: x", "env_name_invalid", `runtime.env.A-B (stage 0 (thinker))`},
		{"1X: x", "env_name_invalid", `1X (stage 0 (thinker)) is not a name`},
		{`"": x`, "env_name_invalid", `the name is empty`},
		{`NL: "a\nb"`, "env_value_invalid", `NL (stage 0 (thinker)) cannot be carried as written: the value holds a newline`},
		{`NUL: ~`, "yaml_value_type", `None`},
		{`HEX: 0x10`, "yaml_value_type", `"16"`},
		{`L: [a, b]`, "yaml_value_type", `a list`},
	} {
		t.Run(c.line, func(t *testing.T) {
			for _, spec := range []Spec{
				{Model: seedModel, BaseConfig: baseWithEnv(t, c.line)},
				{Model: seedModel, BaseConfig: baseWithEnv(t, c.line), Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}},
			} {
				res, ds := Plan(spec)
				got := codesOf(ds, c.code)
				if res != nil || len(got) != 1 || got[0].Path.String() != "base_config" || !strings.Contains(got[0].Detail, c.says) || len(codesOf(ds, "render_failed")) > 0 {
					t.Errorf("want one %s at base_config saying %q:\n%s", c.code, c.says, describeDiags(ds))
				}
			}
		})
	}
}

// unquoteEnvironment reads an Environment= value back as systemd does
// (systemd.syntax(7): one double-quoted word, \\ and \" inside; %% is %).
func unquoteEnvironment(t *testing.T, v string) string {
	t.Helper()
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		t.Fatalf("not one quoted word: %q", v)
	}
	r := strings.NewReplacer(`\\`, `\`, `\"`, `"`, "%%", "%")
	return r.Replace(v[1 : len(v)-1])
}

// yamlScalar writes s as a YAML scalar: double-quoted, or as written.
func yamlScalar(t *testing.T, s string, quoted bool) string {
	t.Helper()
	if !quoted {
		return s
	}
	out, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Style: yaml.DoubleQuotedStyle, Value: s})
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// Any name and value in a base config's runtime.env, quoted or as written:
// either the plan refuses it as base_config's (never render_failed), or
// every unit of the stage's process sets that name last to the text its
// config gives vllm-omni (once, but for a cache path the template sets
// too), the process's env says the same, the units' own words are set once
// and are the plan's, and the name is none the plan writes itself
// (envvar.Lookup) and the value no plain secret (envvar.Secret).
func FuzzStageEnv(f *testing.F) {
	addStageEnvSeeds(f)
	f.Fuzz(func(t *testing.T, name, value string, quoted bool) {
		if strings.ContainsAny(name+value, "\n\r") && !quoted || len(name)+len(value) > 200 {
			return
		}
		line := yamlScalar(t, name, true) + ": " + yamlScalar(t, value, quoted)
		spec := Spec{Model: seedModel, BaseConfig: baseWithEnv(t, line), Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}}
		res, ds := Plan(spec)
		special, isSpecial := envvar.Lookup(name)
		secret := baseSecrecy(spec.BaseConfig, name, value)
		if res == nil {
			checkRefusedAtBaseConfig(t, line, ds)
			return
		}
		// What the plan accepts is no name it writes itself, and no secret.
		if isSpecial && special.Treatment == envvar.Refused || secret == envvar.PlainSecret {
			t.Fatalf("%s: planned:\n%s", line, describeDiags(ds))
		}
		want := plannedStageEnv(t, line, res, name)
		if len(want) != 2 { // prefill and decode, both from the thinker
			t.Fatalf("%s: %d stages carry %q", line, len(want), name)
		}
		cachePath := isSpecial && special.Treatment == envvar.WritablePath
		for _, l := range res.Launches {
			for _, proc := range l.Processes {
				if v, ok := want[*proc.StageID]; ok {
					checkProcessSetsEnv(t, line, res, proc, name, v, cachePath)
				}
			}
		}
	})
}

// addStageEnvSeeds seeds FuzzStageEnv: names and values of each kind, and
// every special name with a value of each kind it is judged by.
func addStageEnvSeeds(f *testing.F) {
	for _, s := range []struct {
		name, value string
		quoted      bool
	}{{"A", "x", false}, {"A-B", "1", true}, {"1X", "2", false}, {"", "3", true}, {"NL", "a\nb", true}, {"HEX", "0x10", false},
		{"F", "1.5", false}, {"B", "yes", false}, {"P", "50% $HOME \\ \"q\"", true}, {"N", "~", false}, {"U", "\ufdd0", true},
		{"HF_TOKEN", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", false}, {"OPENAI_API_KEY", "EMPTY", false}, {"path", "/usr/bin", false},
		{"HF_TOKEN", "0", false}} {
		f.Add(s.name, s.value, s.quoted)
	}
	for _, s := range envvar.Specials() {
		for _, v := range []string{"1", "/var/cache/vllm-omni/x", "/home/x", "rel"} {
			f.Add(s.Name, v, true)
		}
	}
}

// baseSecrecy judges value as a secret only where the base config reads
// it as text, as the planner does: an unquoted 0 or yes is a number or a
// boolean, which the rule does not judge.
func baseSecrecy(baseConfig, name, value string) envvar.Secrecy {
	var secret envvar.Secrecy
	if base, err := stageconfig.Parse([]byte(baseConfig)); err == nil {
		for _, txt := range base.Texts() {
			if txt.Key == name && txt.Value == value {
				secret, _ = envvar.Secret(name, value)
			}
		}
	}
	return secret
}

// checkRefusedAtBaseConfig: a refused variable is the base config's
// problem alone, never a rendering failure.
func checkRefusedAtBaseConfig(t *testing.T, line string, ds Diagnostics) {
	t.Helper()
	if len(codesOf(ds, "render_failed")) > 0 {
		t.Fatalf("%s: render_failed:\n%s", line, describeDiags(ds))
	}
	for _, d := range ds.Errors() {
		if d.Path.String() != "base_config" {
			t.Fatalf("%s: an error not of base_config:\n%s", line, describeDiags(ds))
		}
	}
}

// plannedStageEnv is the value each stage of the planned config gives
// name, by stage id, as vllm-omni's loader reads it.
func plannedStageEnv(t *testing.T, line string, res *Result, name string) map[int]string {
	t.Helper()
	doc, err := stageconfig.Parse([]byte(res.ConfigYAML))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{}
	for _, st := range doc.Stages() {
		env, problems := st.EnvVars()
		if len(problems) > 0 {
			t.Fatalf("%s: the planned config's env %+v", line, problems)
		}
		if v, ok := env[name]; ok {
			id, _ := st.ID()
			want[id] = v
		}
	}
	return want
}

// checkProcessSetsEnv: the process's env and its unit give name the
// config's value v, the unit last (systemd keeps a name's last
// assignment: a cache path the template sets too is the stage's), and the
// units' own words are the plan's, set once.
func checkProcessSetsEnv(t *testing.T, line string, res *Result, proc Process, name, v string, cachePath bool) {
	t.Helper()
	if proc.Env[name] != v {
		t.Fatalf("%s: the process env has %q, the config %q", line, proc.Env[name], v)
	}
	set := map[string][]string{}
	for _, u := range strings.Split(loadedUnit(res, proc), "\n") {
		if e, ok := strings.CutPrefix(u, "Environment="); ok {
			n, val, _ := strings.Cut(unquoteEnvironment(t, e), "=")
			set[n] = append(set[n], val)
		}
	}
	got := set[name]
	if cachePath && len(got) == 2 {
		got = got[1:]
	}
	if len(got) != 1 || got[0] != v {
		t.Fatalf("%s: the unit sets %q, the config %q", line, set[name], v)
	}
	for _, own := range []string{unitChecksVar, unitArgsVar} {
		if len(set[own]) != 1 {
			t.Fatalf("%s: the unit sets %s %d times", line, own, len(set[own]))
		}
	}
}
