package envvar

import (
	"strings"
	"testing"
)

func TestSecret(t *testing.T) {
	const token = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
	for _, c := range []struct {
		key, value string
		want       Secrecy
	}{
		// A Hugging Face token by its form, under any key, in a URL too.
		{"HF_TOKEN", token, PlainSecret},
		{"MY_VAR", token, PlainSecret},
		{"endpoint", "https://user:" + token + "@huggingface.co", PlainSecret},
		{"x", "api_org_AbCdEfGhIjKlMnOpQrStUvWxYz0123", PlainSecret},
		{"x", "hf_short", NotSecret},
		{"x", "${oc.env:A} " + token, PlainSecret},
		{"x", "/run/secrets/" + token, PlainSecret},
		{"x", "chf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", NotSecret},
		// What the hub sends as a token, whatever its text.
		{"HF_TOKEN", "abc", PlainSecret},
		{"HUGGING_FACE_HUB_TOKEN", "abc", PlainSecret},
		{"hf_token", "abc", PlainSecret},
		{"hf_token", "true", NotSecret},
		{"hf_token", "", NotSecret},
		{"HF_TOKEN", "   ", NotSecret},
		// A credential's name and a generated-looking value.
		{"api_key", "q8Zr2Lx0Vb7Nw4Ke9Tp1", PlainSecret},
		{"OPENAI_API_KEY", "sk-proj-8f3Kd92LmQ0xVz7T", PlainSecret},
		{"clientSecret", "3c9f0a7e1b2d4c6f8a9b0c1d", PlainSecret},
		{"db-password", "Tr0ub4dor&3xyzQ9w", PlainSecret},
		{"AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", PlainSecret},
		// The judgement call: only the name says so.
		{"OPENAI_API_KEY", "token-abc123", SecretByName},
		{"db_password", "hunter2", SecretByName},
		{"eos_token", "<|endoftext|>", SecretByName},
		// Placeholders and references.
		{"OPENAI_API_KEY", "EMPTY", NotSecret},
		{"api_key", "none", NotSecret},
		{"HF_TOKEN_PATH", "/run/secrets/hf", NotSecret},
		{"api_key", "/run/secrets/key", NotSecret},
		{"api_key", "${oc.env:API_KEY}", NotSecret},
		// Not a credential's name.
		{"tokenizer", "Qwen/Qwen3-Omni-30B-A3B-Instruct", NotSecret},
		{"max_tokens", "q8Zr2Lx0Vb7Nw4Ke9Tp1", NotSecret},
		{"HF_TOKEN_PATH", "q8Zr2Lx0Vb7Nw4Ke9Tp1", NotSecret},
		{"model", "Qwen/Qwen3-Omni-30B-A3B-Instruct", NotSecret},
		{"kv_connector", "MooncakeConnector", NotSecret},
		{"secret_key", "aaaaaaaaaaaaaaaa1", SecretByName}, // long but not random
	} {
		got, why := Secret(c.key, c.value)
		if got != c.want {
			t.Errorf("Secret(%q, %q) = %v (%s), want %v", c.key, c.value, got, why, c.want)
		}
		if got != NotSecret && (why == "" || strings.Contains(why, c.value)) {
			t.Errorf("Secret(%q, %q): why %q must say why without the value", c.key, c.value, why)
		}
	}
}

func TestCredentialName(t *testing.T) {
	for key, want := range map[string]bool{
		"HF_TOKEN": true, "token": true, "apiKey": true, "API-KEY": true, "x.api_key": true, "ACCESS_KEY": true,
		"private_key": true, "Credentials": true, "PASSWD": true,
		"tokenizer": false, "max_tokens": false, "HF_TOKEN_PATH": false, "key": false, "secretive": false, "": false,
		"skip_tokenizer_init": false, "monkey": false,
	} {
		if got := CredentialName(key); got != want {
			t.Errorf("CredentialName(%q) = %v, want %v", key, got, want)
		}
	}
}

// Every special name is one a unit can set, says why and how to fix it,
// and cites where the fact is read; none is a secret's, which Secret
// judges instead.
func TestSpecials(t *testing.T) {
	if len(Specials()) < 20 {
		t.Fatalf("only %d special names", len(Specials()))
	}
	for _, s := range Specials() {
		if Name(s.Name) != nil || s.Reason == "" || s.Fix == "" || s.Source == "" || s.Treatment < Refused || s.Treatment > WritablePath {
			t.Errorf("%+v is incomplete", s)
		}
		if got, ok := Lookup(s.Name); !ok || got.Name != s.Name {
			t.Errorf("Lookup(%q) = %+v, %v", s.Name, got, ok)
		}
		if tokenNames[s.Name] {
			t.Errorf("%s is both special and a secret's name", s.Name)
		}
	}
	for _, name := range []string{"path", "Path", "HF_HUB_OFFLINE", "HF_TOKEN", "OMNI_PD", ""} {
		if _, ok := Lookup(name); ok {
			t.Errorf("%q is special", name)
		}
	}
}

// Any key and value: Secret never says why with the value in it, a
// Hugging Face token's form is plainly a secret wherever it stands, and a
// key that names no credential and is not a token's name is never judged by
// its name alone.
func FuzzSecret(f *testing.F) {
	for _, s := range [][2]string{{"HF_TOKEN", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"}, {"api_key", "EMPTY"}, {"x", "${a} hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"},
		{"apiKey", "q8Zr2Lx0Vb7Nw4Ke9Tp1"}, {"tokenizer", "/models/x"}, {"", ""}, {"é_TOKEN", "\xff"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		got, why := Secret(key, value)
		if got != NotSecret && why == "" {
			t.Fatalf("Secret(%q, %q) = %v without a reason", key, value, got)
		}
		if len(value) >= 4 && strings.Contains(why, value) {
			t.Fatalf("Secret(%q, %q) repeats the value: %s", key, value, why)
		}
		if tokenForm.MatchString(strings.TrimSpace(value)) && got != PlainSecret {
			t.Fatalf("Secret(%q, %q) = %v for a token's form", key, value, got)
		}
		if got == SecretByName && !CredentialName(key) {
			t.Fatalf("Secret(%q, %q) = SecretByName for a key that names no credential", key, value)
		}
		if got == PlainSecret && !tokenForm.MatchString(strings.TrimSpace(value)) && !tokenNames[key] && !CredentialName(key) {
			t.Fatalf("Secret(%q, %q) = PlainSecret with neither a token's form nor a credential's name", key, value)
		}
	})
}
