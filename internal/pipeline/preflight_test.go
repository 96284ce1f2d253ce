package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/systemd"
	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// fakeSite is a site directory holding only the distributions' metadata,
// as pip leaves it: name-version.dist-info/METADATA.
func fakeSite(t *testing.T, dists map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, version := range dists {
		info := filepath.Join(dir, strings.ReplaceAll(name, "-", "_")+"-"+version+".dist-info")
		if err := os.MkdirAll(info, 0o755); err != nil {
			t.Fatal(err)
		}
		meta := "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n"
		if err := os.WriteFile(filepath.Join(info, "METADATA"), []byte(meta), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The preflight, run by Debian's python3 against fake installed
// distributions: it passes on the planned release (a local build with a
// warning), and exits PreflightExit with both versions or both hashes
// named otherwise.
func TestPreflight(t *testing.T) {
	python := testtool.Need(t, "python3")
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		python = "/usr/bin/python3"
	}
	run := func(t *testing.T, spec Spec, dists map[string]string, config string) (string, int) {
		t.Helper()
		dir := t.TempDir()
		spec.ConfigPath = filepath.Join(dir, "deploy.yaml")
		res := mustPlan(t, spec)
		if config == "" {
			config = res.ConfigYAML
		}
		if config != "missing" {
			if err := os.WriteFile(spec.ConfigPath, []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		argv := res.Launches[0].Processes[0].Preflight
		argv[0] = python
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), "PYTHONPATH="+fakeSite(t, dists), "PYTHONNOUSERSITE=1")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return string(out), exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return string(out), 0
	}
	seed := Spec{Model: seedModel}
	line := Spec{Model: seedModel, VLLMOmniVersion: "0.24"}
	match := map[string]string{"vllm-omni": "0.24.0", "vllm": "0.24.1"}
	tests := []struct {
		name   string
		spec   Spec
		dists  map[string]string
		config string
		status int
		says   []string
	}{
		{"the planned release", seed, match, "", 0, []string{"ok: vllm-omni 0.24.0, vLLM 0.24.1"}},
		{"a line takes any release of it", line, map[string]string{"vllm-omni": "0.24.3", "vllm": "0.24.0"}, "", 0, []string{"ok:"}},
		{"a local build, with a warning", seed, map[string]string{"vllm-omni": "0.24.0+cu128", "vllm": "0.24.0"}, "", 0, []string{"warning: vllm-omni 0.24.0+cu128 is a pre-release, post-release or local build of 0.24.0"}},
		{"a candidate of the release, with a warning", seed, map[string]string{"vllm-omni": "0.24.0rc1", "vllm": "0.24.0"}, "", 0, []string{"warning:"}},
		{"another release", seed, map[string]string{"vllm-omni": "0.22.0", "vllm": "0.22.0"}, "", PreflightExit, []string{"vllm-omni 0.22.0 is installed, but the plan is for vllm-omni 0.24.0; install vllm-omni==0.24.0"}},
		{"another line", line, map[string]string{"vllm-omni": "0.26.0rc1", "vllm": "0.26.0"}, "", PreflightExit, []string{"the plan is for the 0.24 line"}},
		{"a vLLM of another line", seed, map[string]string{"vllm-omni": "0.24.0", "vllm": "0.25.0"}, "", PreflightExit, []string{"vLLM 0.25.0 is installed, but vllm-omni 0.24.0 needs vLLM 0.24.x"}},
		{"vllm-omni missing", seed, map[string]string{"vllm": "0.24.0"}, "", PreflightExit, []string{"vllm-omni is not installed"}},
		{"vLLM missing", seed, map[string]string{"vllm-omni": "0.24.0"}, "", PreflightExit, []string{"vllm is not installed"}},
		{"a changed config", seed, match, "stage_args: []\n", PreflightExit, []string{"has SHA-256 " + sha256Hex("stage_args: []\n") + ", but the plan's config_sha256 is"}},
		{"no config", seed, match, "missing", PreflightExit, []string{"cannot be read"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, status := run(t, tc.spec, tc.dists, tc.config)
			if status != tc.status {
				t.Errorf("status %d, want %d:\n%s", status, tc.status, out)
			}
			for _, s := range tc.says {
				if !strings.Contains(out, s) {
					t.Errorf("output does not say %q:\n%s", s, out)
				}
			}
		})
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// What a unit starts: the preflight, which then execs vllm with the
// process's argv, so vllm is the unit's main process.
func TestPreflightExecsTheProcess(t *testing.T) {
	python := "/usr/bin/python3" // a path the units may run: not under /home or /root
	if _, err := os.Stat(python); err != nil {
		testtool.Need(t, "python3-in-/usr/bin")
	}
	dir := t.TempDir()
	record := filepath.Join(dir, "args")
	vllm := filepath.Join(dir, "vllm")
	// A vllm as pip installs it: a script of the Python it runs in.
	stub := "#!" + python + "\nimport sys\nopen(" + strconvQuote(record) + ", \"w\").write(\"\\n\".join(sys.argv[1:]) + \"\\n\")\n"
	if err := os.WriteFile(vllm, []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := Spec{Model: seedModel, ConfigPath: filepath.Join(dir, "deploy.yaml"), Service: ServiceSpec{VLLMPath: vllm, PythonPath: python}}
	res := mustPlan(t, spec)
	if err := os.WriteFile(spec.ConfigPath, []byte(res.ConfigYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	proc := res.Launches[0].Processes[0]
	argv := execArgv(proc, spec.Service.withDefaults())
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+fakeSite(t, map[string]string{"vllm-omni": "0.24.0", "vllm": "0.24.0"}), "PYTHONNOUSERSITE=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(proc.Argv[1:], "\n") + "\n"; string(got) != want {
		t.Errorf("vllm ran with\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(proc.SystemdUnit, "RestartPreventExitStatus=78") {
		t.Error("the unit does not stop restarting on the preflight's status")
	}
	// A vllm of another Python: the check would have judged the wrong
	// environment, so it refuses to start it.
	if err := os.WriteFile(vllm, []byte("#!/opt/other/bin/python3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+fakeSite(t, map[string]string{"vllm-omni": "0.24.0", "vllm": "0.24.0"}), "PYTHONNOUSERSITE=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != PreflightExit || !strings.Contains(string(out), "set systemd.python_path to /opt/other/bin/python3") {
		t.Errorf("a vllm of another Python: %v\n%s", err, out)
	}
}

func strconvQuote(s string) string { return strconv.Quote(s) }

// The readiness check passes only when the models list has the model.
func TestReadinessScript(t *testing.T) {
	python := testtool.Need(t, "python3")
	res := mustPlan(t, Spec{Model: seedModel})
	h := res.Health
	if h.LivenessURL != "http://127.0.0.1:8091/health" || h.ReadinessURL != "http://127.0.0.1:8091/v1/models" {
		t.Errorf("health = %+v", h)
	}
	for _, tc := range []struct {
		body string
		ok   bool
	}{
		{`{"data":[{"id":"Qwen/Qwen3-Omni-30B-A3B-Instruct"}]}`, true},
		{`{"data":[]}`, false}, // the server runs, its engines do not
		{`{"data":[{"id":"other"}]}`, false},
	} {
		srv := serveOnce(t, tc.body)
		argv := append([]string{python}, h.ReadinessArgv[1:]...)
		argv[len(argv)-2] = srv
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok=%v\n%s", tc.body, err, tc.ok, out)
		}
	}
}

// serveOnce answers every request with body, until the test ends, and
// returns its URL.
func serveOnce(t *testing.T, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1/models"
}

// shellJoin and systemdCommand take the preflight script's quoted forms
// from package variables; they must give what quoting every word gives,
// errors included, wherever the script is and whatever comes around it.
func TestPreflightQuotedOnce_SameAsQuotingEveryWord(t *testing.T) {
	cases := [][]string{
		{"/usr/bin/python3", "-c", preflightScript, "0.24", "line", "0.11", "/etc/vllm-omni/deploy-config.yaml", "abc"},
		{"/opt/venv/bin/python3", "-c", preflightScript, "0.24.0", "release", "0.11", "/x y/it's.yaml", "abc", "--",
			"/opt/venv/bin/vllm", "serve", "m", "--port", "8091", "%h$HOME", `a"b\c`},
		{"python3", "-c", preflightScript, "0.24.0"},                 // not an absolute path: systemd refuses it
		{"/usr/bin/python3", "-c", preflightScript, "a\nb", "c\x01"}, // control characters after the script
		{"/usr/bin/python3", "-c\x01", preflightScript},              // and before it
		{"if", "x=y", preflightScript, "if", "x=y"},                  // first-word rules apply to the first word only
		{"/usr/bin/python3", "-c", "print(1)"},                       // no script
		{"/usr/bin/python3", "-c", preflightScript[:len(preflightScript)-1] + "x"},
	}
	for _, argv := range cases {
		if got, want := shellJoin(argv), ShellJoin(argv); got != want {
			t.Errorf("shellJoin(%.60q...) =\n%.200s\nwant\n%.200s", argv, got, want)
		}
		got, gotErr := systemdCommand(argv)
		want, wantErr := systemd.Command(argv)
		if got != want || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("systemdCommand(%.60q...) = %.200s, %v; want %.200s, %v", argv, got, gotErr, want, wantErr)
		}
	}
	if preflightScriptSysErr != nil {
		t.Fatalf("the preflight script does not quote for systemd: %v", preflightScriptSysErr)
	}
	if i := scriptAt(cases[0]); i != 2 {
		t.Fatalf("scriptAt = %d, want 2", i)
	}
}
