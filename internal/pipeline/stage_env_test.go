package pipeline

import (
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/envvar"
)

// Every name the plan or vLLM treats specially, set in a base config's
// runtime.env: a name the plan writes is refused at base_config, naming
// the entry, its stage and the attribute to set instead; a cache path is
// judged against the units' sandbox as systemd.cache_dir is; the plan
// goes on for one inside the cache. Before this check each was planned
// with no word: OMNI_PD_STAGE_ARGS started the head --headless with no
// --port, CUDA_VISIBLE_DEVICES narrowed the GPUs under the host's indices,
// HF_HOME=/home/... moved the cache where ProtectHome hides it.
func TestStageEnvSpecialNames(t *testing.T) {
	type want struct{ code, says string }
	cases := map[string]want{}
	for _, s := range envvar.Specials() {
		switch s.Treatment {
		case envvar.Refused:
			cases[s.Name+`: "2"`] = want{"env_var_planned", "runtime.env." + s.Name + " (stage 0 (thinker)) " + s.Reason}
		case envvar.WritablePath:
			cases[s.Name+`: /home/vllm/cache`] = want{"systemd_path_protected", "line 6: stage 0 (thinker)'s runtime.env." + s.Name + `: "/home/vllm/cache" is under /home`}
			cases[s.Name+`: cache`] = want{"systemd_path_protected", "runtime.env." + s.Name + ` (stage 0 (thinker)) is "cache", not an absolute path`}
			cases[s.Name+`: /var/cache/vllm-omni/other`] = want{}
		}
	}
	// The examples the issue names, with their fixes.
	for line, fix := range map[string]string{
		`OMNI_PD_STAGE_ARGS: "--headless"`: "remove it or rename it",
		`CUDA_VISIBLE_DEVICES: "1"`:        "prefill.devices",
		`VLLM_PORT: "25000"`:               "port_range",
		`PATH: /usr/bin`:                   "systemd.vllm_path",
		`VLLM_HOST_IP: 10.0.0.9`:           "decode.host",
	} {
		cases[line] = want{"env_var_planned", fix}
	}
	// Names are case-sensitive: these are the user's own.
	cases[`path: /usr/bin`] = want{}
	cases[`OMNI_PD_CHECKS_EXTRA: x`] = want{}
	for line, w := range cases {
		t.Run(line, func(t *testing.T) {
			for _, spec := range []Spec{
				{Model: seedModel, BaseConfig: baseWithEnv(t, line)},
				{Model: seedModel, BaseConfig: baseWithEnv(t, line), Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}},
			} {
				res, ds := Plan(spec)
				if w.code == "" {
					if res == nil {
						t.Fatalf("refused:\n%s", describeDiags(ds))
					}
					continue
				}
				got := codesOf(ds, w.code)
				if res != nil || len(got) != 1 || got[0].Path.String() != "base_config" || !strings.Contains(got[0].Detail, w.says) {
					t.Fatalf("want one %s at base_config saying %q:\n%s", w.code, w.says, describeDiags(ds))
				}
			}
		})
	}
}

// A secret in any input Terraform stores is an error at the attribute
// that holds it, naming systemd.environment_file; a key whose name alone
// says credential is a warning; the rest passes.
func TestSecretsInInputs(t *testing.T) {
	const token = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
	for _, c := range []struct {
		name string
		spec func(*Spec)
		code string
		path string
	}{
		{"HF_TOKEN in runtime.env", func(s *Spec) { s.BaseConfig = baseWithEnv(t, "HF_TOKEN: "+token) }, "secret_in_state", "base_config"},
		{"HF_TOKEN of any text", func(s *Spec) { s.BaseConfig = baseWithEnv(t, "HF_TOKEN: abc") }, "secret_in_state", "base_config"},
		{"HUGGING_FACE_HUB_TOKEN", func(s *Spec) { s.BaseConfig = baseWithEnv(t, "HUGGING_FACE_HUB_TOKEN: abc") }, "secret_in_state", "base_config"},
		{"a token under another name", func(s *Spec) { s.BaseConfig = baseWithEnv(t, "MY_VAR: "+token) }, "secret_in_state", "base_config"},
		{"hf_token in the base's engine_args", func(s *Spec) {
			s.BaseConfig = strings.Replace(baseWithEnv(t, "A: x"), "      env:\n", "      env:\n        B: y\n", 1)
			s.BaseConfig = strings.Replace(s.BaseConfig, "    engine_args:\n", "    engine_args:\n      hf_token: "+token+"\n", 1)
		}, "secret_in_state", "base_config"},
		{"engine_args.hf_token", func(s *Spec) { s.Prefill.EngineArgs = map[string]any{"hf_token": token} }, "secret_in_state", "prefill.engine_args.hf_token"},
		{"engine_args.hf_token = true", func(s *Spec) { s.Decode.EngineArgs = map[string]any{"hf_token": true} }, "", ""},
		{"a generated api key in extra_config", func(s *Spec) {
			s.Connector.ExtraConfig = map[string]any{"auth": map[string]any{"api_key": "q8Zr2Lx0Vb7Nw4Ke9Tp1"}}
		}, "secret_in_state", "connector.extra_config.auth.api_key"},
		{"a token in a stage override", func(s *Spec) {
			s.StageOverrides = map[string]StageOverride{"talker": {EngineArgs: map[string]any{"hf_overrides": map[string]any{"x": []any{token}}}}}
		}, "secret_in_state", "stage_overrides.talker.engine_args.hf_overrides.x[0]"},
		{"an API key by its name only", func(s *Spec) { s.BaseConfig = baseWithEnv(t, "OPENAI_API_KEY: token-abc123") }, "secret_by_name", "base_config"},
		{"a placeholder", func(s *Spec) { s.BaseConfig = baseWithEnv(t, "OPENAI_API_KEY: EMPTY") }, "", ""},
		{"a token's file", func(s *Spec) { s.BaseConfig = baseWithEnv(t, "HF_TOKEN_PATH: /run/secrets/hf") }, "", ""},
		{"tokenizer", func(s *Spec) { s.Prefill.EngineArgs = map[string]any{"tokenizer": "Qwen/Qwen3-Omni-30B-A3B-Instruct"} }, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := Spec{Model: seedModel}
			c.spec(&spec)
			res, ds := Plan(spec)
			var found []Diagnostic
			for _, code := range []string{"secret_in_state", "secret_by_name"} {
				found = append(found, codesOf(ds, code)...)
			}
			if c.code == "" {
				if len(found) > 0 {
					t.Fatalf("want no secret diagnostic:\n%s", describeDiags(ds))
				}
				return
			}
			if len(found) != 1 || found[0].Code.String() != c.code || found[0].Path.String() != c.path ||
				!strings.Contains(found[0].Detail, "systemd.environment_file ("+DefaultEnvironmentFile+")") {
				t.Fatalf("want one %s at %s naming environment_file:\n%s", c.code, c.path, describeDiags(ds))
			}
			if (c.code == "secret_in_state") != (res == nil) {
				t.Fatalf("an error must stop the plan and a warning must not (result %v):\n%s", res != nil, describeDiags(ds))
			}
			if strings.Contains(found[0].Detail, token) {
				t.Fatalf("the diagnostic repeats the secret: %s", found[0].Detail)
			}
		})
	}
}
