package pipeline

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// modelRefusal is checkModel's one diagnostic for m, or nil.
func modelRefusal(m string) *Diagnostic {
	var ds Diagnostics
	checkModel(m, &ds)
	if len(ds) == 0 {
		return nil
	}
	return &ds[0]
}

// Ids of the provider's org/name form that huggingface_hub refuses, each
// refused at model with the rule it breaks; before, only a leading '.' or
// '-' was.
func TestModelIDHubRules(t *testing.T) {
	long := strings.Repeat("a", 97)
	for _, tc := range []struct {
		id   string
		says string // "" when the id is accepted
	}{
		{"Qwen/Qwen3-Omni-30B-A3B-Instruct", ""},
		{"Qwen/Qwen2.5-Omni-7B", ""},
		{"_org/_name_", ""}, // '_' is a word character to the hub
		{"a/" + strings.Repeat("a", 96), ""},
		{strings.Repeat("o", 200) + "/name", ""}, // the hub bounds the name only
		{"Qwen/Qwen3-Omni.", `the name ends with "."`},
		{"Qwen/Qwen3-Omni-", `the name ends with "-"`},
		{"Qwen-/Qwen3-Omni", `the organization ends with "-"`},
		{"Qwen./Qwen3-Omni", `the organization ends with "."`},
		{".Qwen/Qwen3-Omni", `the organization starts with "."`},
		{"Qwen/-Qwen3", `the name starts with "-"`},
		{"Qwen/Qwen3-Omni.git", `it ends with ".git"`},
		{"Qwen/Qwen3--Omni", `it holds "--"`},
		{"Qwen--x/Qwen3", `it holds "--"`},
		{"Qwen/Qwen3..Omni", `it holds ".."`},
		{"a/" + long, "the name has 97 characters, more than 96"},
		{"../qwen3-omni", `the organization starts with "."; the organization ends with "."; it holds ".."`},
		{"Qwen/a.git-", `the name ends with "-"`},
	} {
		d := modelRefusal(tc.id)
		switch {
		case tc.says == "" && d != nil:
			t.Errorf("%q refused: %s", tc.id, d)
		case tc.says != "" && d == nil:
			t.Errorf("%q accepted, want %q", tc.id, tc.says)
		case tc.says != "":
			if d.Code.String() != "model_invalid" || d.Path.String() != "model" || !strings.Contains(d.Detail, tc.says) ||
				!strings.Contains(d.Detail, "absolute local path") {
				t.Errorf("%q: %s\nwant model_invalid at model saying %q", tc.id, d, tc.says)
			}
		}
	}
}

// hubRepoIDRegex and hubValidRepoID transcribe huggingface_hub's
// validate_repo_id (src/huggingface_hub/utils/_validators.py@ee0a4510:
// 28-36, 131-148) for ASCII ids, where RE2's \w and \b are Python's.
var hubRepoIDRegex = regexp.MustCompile(`^(\b[\w\-.]+\b/)?\b[\w\-.]{1,96}\b$`)

func hubValidRepoID(id string) bool {
	return strings.Count(id, "/") <= 1 && hubRepoIDRegex.MatchString(id) &&
		!strings.Contains(id, "--") && !strings.Contains(id, "..") && !strings.HasSuffix(id, ".git")
}

// providerForm is what the provider adds to the hub's rule for an id: an
// organization (one '/') and the hub's ASCII characters.
var providerForm = regexp.MustCompile(`^[A-Za-z0-9._-]+/[A-Za-z0-9._-]+$`)

// checkModelAgainstHub fails t when checkModel's verdict on an id that is
// not a path differs from the transcribed hub rule within the provider's
// form.
func checkModelAgainstHub(t *testing.T, id string) {
	t.Helper()
	if id == "" || strings.HasPrefix(id, "/") {
		return
	}
	want := providerForm.MatchString(id) && hubValidRepoID(id)
	if got := modelRefusal(id) == nil; got != want {
		t.Errorf("%q: accepted %v, the hub's rule in the org/name form says %v", id, got, want)
	}
}

// FuzzModelID: checkModel accepts an id that is not a path exactly when
// the hub's rule does and it is of the provider's form.
func FuzzModelID(f *testing.F) {
	for _, s := range []string{"Qwen/Qwen3-Omni-30B-A3B-Instruct", "a/b.", "a/b.git", "a--b/c", "a/" + strings.Repeat("x", 97), "_/_", "a/b/c", ".a/b", "a/b..c"} {
		f.Add(s)
	}
	f.Fuzz(checkModelAgainstHub)
}

// randomIDs are ids from the characters the rules turn on, short and long.
func randomIDs(n int) []string {
	r := rand.New(rand.NewSource(34))
	const alphabet = "aZ9_.-/.-"
	out := make([]string, 0, n)
	for range n {
		size := 1 + r.Intn(8)
		if r.Intn(10) == 0 {
			size = 90 + r.Intn(12)
		}
		b := make([]byte, size)
		for i := range b {
			b[i] = alphabet[r.Intn(len(alphabet))]
		}
		id := string(b)
		if r.Intn(8) == 0 {
			id += ".git"
		}
		out = append(out, id)
	}
	return out
}

// The property over many ids, against the transcription.
func TestModelIDMatchesTheHubsRule(t *testing.T) {
	for _, id := range randomIDs(20000) {
		checkModelAgainstHub(t, id)
	}
}

// hubValidatorPy is validate_repo_id's checks, as
// src/huggingface_hub/utils/_validators.py@ee0a4510:28-36, 131-148 write
// them, run by Python's re over one id a line.
const hubValidatorPy = `import re, sys
REPO_ID_REGEX = re.compile(
    r"""
    ^
    (\b[\w\-.]+\b/)? # optional namespace (username or organization)
    \b               # starts with a word boundary
    [\w\-.]{1,96}    # repo_name: alphanumeric + . _ -
    \b               # ends with a word boundary
    $
    """,
    flags=re.VERBOSE,
)
def valid(repo_id):
    if repo_id.count("/") > 1:
        return False
    if not REPO_ID_REGEX.match(repo_id):
        return False
    if "--" in repo_id or ".." in repo_id:
        return False
    if repo_id.endswith(".git"):
        return False
    return True
for line in sys.stdin.read().split("\n")[:-1]:
    print(1 if valid(line) else 0)
`

// The transcription agrees with the hub's own code, run by python3, on
// every id the property test tries.
func TestHubRuleTranscription(t *testing.T) {
	python := testtool.Need(t, "python3")
	ids := randomIDs(20000)
	cmd := exec.Command(python, "-c", hubValidatorPy)
	cmd.Stdin = strings.NewReader(strings.Join(ids, "\n") + "\n")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	verdicts := bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
	if len(verdicts) != len(ids) {
		t.Fatalf("%d verdicts for %d ids", len(verdicts), len(ids))
	}
	for i, id := range ids {
		if py, goes := string(verdicts[i]) == "1", hubValidRepoID(id); py != goes {
			t.Errorf("%q: huggingface_hub says %v, the transcription %v", id, py, goes)
		}
	}
}

// A stage's own model or tokenizer that is a hub id is held to the hub's
// rule too, at the attribute or the base config stage that sets it; a
// valid id and a local path pass.
func TestStageModelIDsHubRules(t *testing.T) {
	tests := []struct {
		name string
		spec Spec
		attr string
		says []string
	}{
		{"a base config stage's model ending in .git", Spec{Model: seedModel, BaseConfig: baseWithEngine(t, "code2wav", "model: Qwen/Qwen3-Omni.git")},
			"base_config", []string{"code2wav)'s engine setting model", `ends with ".git"`}},
		{"a base config stage's tokenizer with --", Spec{Model: seedModel, BaseConfig: baseWithEngine(t, "talker", "tokenizer: Qwen/a--b")},
			"base_config", []string{"talker)'s engine setting tokenizer", `holds "--"`}},
		{"a stage override's tokenizer ending in -", Spec{Model: seedModel, StageOverrides: map[string]StageOverride{"talker": {EngineArgs: map[string]any{"tokenizer": "Qwen/tok-"}}}},
			"stage_overrides.talker.engine_args.tokenizer", []string{`ends with "-"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := Plan(tc.spec)
			found := false
			for _, d := range ds {
				if d.Code.String() == "model_invalid" && d.Path.String() == tc.attr {
					found = true
					for _, s := range tc.says {
						if !strings.Contains(d.Summary+" "+d.Detail, s) {
							t.Errorf("%s does not say %q", d, s)
						}
					}
				}
			}
			if !found {
				t.Errorf("no model_invalid at %s: %s", tc.attr, describeDiags(ds))
			}
		})
	}
	for _, ok := range []string{"model: Qwen/Qwen3-Omni-30B-A3B-Instruct", "tokenizer: Qwen/Qwen2.5-7B", "model: /srv/models/code2wav"} {
		if res, ds := Plan(Spec{Model: seedModel, BaseConfig: baseWithEngine(t, "code2wav", ok)}); res == nil {
			t.Errorf("%s refused: %s", ok, describeDiags(ds))
		}
	}
}
