package envvar

import (
	"math"
	"regexp"
	"strings"
	"unicode"
)

// Secrecy is what Secret finds in a key and its value.
type Secrecy int

const (
	// NotSecret: nothing says the value is a secret.
	NotSecret Secrecy = iota
	// SecretByName: only the key's name says so (OPENAI_API_KEY: "sk"),
	// and the value is not shaped like a secret. A plan warns: the name
	// cannot tell a key from a placeholder (vLLM's OpenAI-compatible
	// clients send api_key "EMPTY") or from a model's token text, and
	// refusing would block plans that hold nothing secret.
	SecretByName
	// PlainSecret: the value is plainly a secret: a Hugging Face token by
	// its form (hf_...), any non-empty text in a variable or setting
	// huggingface_hub sends as a token, or a long generated-looking value
	// under a credential's name. A plan refuses it: every value of
	// base_config, engine_args, extra_config and stage_overrides is stored
	// in Terraform state and shown in the plan as soon as the plan
	// succeeds, and is written to the config and the units (each
	// machine's user_data), so only an error keeps it out of them.
	PlainSecret
)

// tokenForm is a Hugging Face access token anywhere in a value (a URL's
// user part included): "hf_" and 34 letters and digits for a user token,
// "api_org_" for an organisation's (huggingface.co/docs/hub/security-tokens;
// huggingface_hub/utils/_auth.py reads them as they are). 30 keeps a
// shortened or future form.
var tokenForm = regexp.MustCompile(`(^|[^A-Za-z0-9])(hf|api_org)_[A-Za-z0-9]{30,}`)

// tokenNames are the settings huggingface_hub or vLLM sends to the hub as
// a bearer token, whatever their text: the variables
// (huggingface_hub/constants.py, HF_TOKEN and the older
// HUGGING_FACE_HUB_TOKEN) and vLLM's engine argument (vllm/config/model.py,
// hf_token: "The token to use as HTTP bearer authorization for remote
// files"; true means the login's stored token, which is not a secret here).
var tokenNames = map[string]bool{"HF_TOKEN": true, "HUGGING_FACE_HUB_TOKEN": true, "hf_token": true}

// credentialWords end a key that names a credential: HF_TOKEN, api_key,
// db_password, client-secret, AccessKey. Only the last word counts, so
// HF_TOKEN_PATH (a file), tokenizer and max_tokens are not credentials.
var credentialWords = map[string]bool{"token": true, "secret": true, "password": true, "passwd": true, "apikey": true,
	"credential": true, "credentials": true}

// credentialPairs are the two-word endings that name one.
var credentialPairs = map[[2]string]bool{{"api", "key"}: true, {"access", "key"}: true, {"secret", "key"}: true,
	{"private", "key"}: true, {"auth", "key"}: true}

// placeholders are texts that stand where a key would and are none.
var placeholders = map[string]bool{"empty": true, "none": true, "null": true, "dummy": true, "placeholder": true,
	"changeme": true, "true": true, "false": true, "x": true, "-": true}

// Secret judges a key (an environment variable's name, or a setting's
// key) and its text value: whether Terraform state, the plan's output and
// the machines' user_data would hold a secret. why says what gave it away,
// for a message that follows the key.
func Secret(key, value string) (s Secrecy, why string) {
	v := strings.TrimSpace(value)
	// A token's form first: beside an interpolation or in a path it is
	// still written out.
	if tokenForm.MatchString(v) {
		return PlainSecret, "holds a Hugging Face access token (hf_...)"
	}
	if v == "" || reference(v) {
		return NotSecret, ""
	}
	if tokenNames[key] && !placeholders[strings.ToLower(v)] {
		return PlainSecret, "is a token huggingface_hub sends to the hub, whatever its text"
	}
	if !CredentialName(key) {
		return NotSecret, ""
	}
	if generated(v) {
		return PlainSecret, "names a credential and holds a long generated-looking value"
	}
	if placeholders[strings.ToLower(v)] {
		return NotSecret, ""
	}
	return SecretByName, "names a credential"
}

// CredentialName reports whether a key's last word, or last two, name a
// credential. Words are split at anything but a letter or a digit, and
// where a lower-case letter meets an upper-case one (apiKey).
func CredentialName(key string) bool {
	var words []string
	var cur []rune
	prevLower := false
	for _, r := range key {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			if len(cur) > 0 {
				words = append(words, strings.ToLower(string(cur)))
			}
			cur, prevLower = nil, false
			continue
		case unicode.IsUpper(r) && prevLower:
			words = append(words, strings.ToLower(string(cur)))
			cur = nil
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r)
	}
	if len(cur) > 0 {
		words = append(words, strings.ToLower(string(cur)))
	}
	n := len(words)
	return n > 0 && credentialWords[words[n-1]] || n > 1 && credentialPairs[[2]string{words[n-2], words[n-1]}]
}

// reference is a value that points at a secret kept elsewhere: a file's
// path (HF_TOKEN_PATH) or an interpolation vllm-omni's loader resolves on
// the machine.
func reference(v string) bool {
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "~/") || strings.HasPrefix(v, "./") ||
		strings.HasPrefix(v, "../") || strings.Contains(v, "${")
}

// generated is a value shaped like a generated secret: 16 or more
// characters with no space, letters and digits both, and at least 3 bits
// of entropy a character (a random alphanumeric string has about 5; a
// word, or a version such as 0.24.0, far less).
func generated(v string) bool {
	if len(v) < 16 || strings.ContainsFunc(v, unicode.IsSpace) ||
		!strings.ContainsFunc(v, unicode.IsLetter) || !strings.ContainsFunc(v, unicode.IsDigit) {
		return false
	}
	counts := map[rune]int{}
	n := 0
	for _, r := range v {
		counts[r]++
		n++
	}
	h := 0.0
	for _, c := range counts {
		p := float64(c) / float64(n)
		h -= p * math.Log2(p)
	}
	return h >= 3
}
