package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// The first lines of a vllm as each installer writes it, pointing at the
// Python the preflight runs in or at another one, and what the preflight
// makes of it: it checks that vllm runs in its own Python, and execs vllm
// only then.
//
// The trampolines are the forms installers write when "#!<python>" would be
// longer than the kernel's 127 bytes or hold a space:
//   - pip and virtualenv, through distlib's ScriptMaker._build_shebang
//     (pip 24.2's vendored distlib 0.3.8, scripts.py:154-183; the path in
//     double quotes where it holds a space, enquote_executable :71-84;
//     virtualenv's seeder quotes it the same way,
//     pypa/virtualenv src/virtualenv/seed/embed/via_app_data/pip_install/base.py
//     ScriptMakerCustom): `”'exec' <python> "$0" "$@"`;
//   - uv, format_shebang (astral-sh/uv@02c8f141
//     crates/uv-install-wheel/src/wheel.rs): the path in single quotes, a
//     quote in it as '"'"' (uv-shell escape_posix_for_single_quotes), and
//     for a relocatable environment (`uv venv --relocatable`) the path
//     relative to the script's real directory; uv before that
//     (astral-sh/uv@006cca65 crates/install-wheel-rs/src/wheel.rs) wrote the
//     directory as `$(CDPATH= cd -- "$(dirname -- "$0")" && echo "$PWD")`.
//
// Each script here is a working one: sh runs the trampoline, which runs
// the file again in the Python it names.
func TestPreflightFindsVLLMsPython(t *testing.T) {
	python := "/usr/bin/python3" // a path the units may run
	if _, err := os.Stat(python); err != nil {
		testtool.Need(t, "python3-in-/usr/bin")
	}
	testtool.Need(t, "realpath")
	testtool.Need(t, "dirname")
	const (
		ran   = "vllm ran"
		wrong = "set systemd.python_path to "
	)
	long := strings.Repeat("l", 120) // over the kernel's 127-byte line with the rest of the path
	// link puts a python3 at dir/rel that is the test's Python under another
	// name, as a venv's bin/python3 is.
	link := func(t *testing.T, path string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(python, path); err != nil {
			t.Fatal(err)
		}
	}
	type script struct {
		head    string // the first lines, before the Python body
		vllmDir string // where vllm is, under the test's directory; "" for bin
	}
	tests := []struct {
		name string
		// setup makes what the script needs under dir and returns its head.
		setup  func(t *testing.T, dir string) script
		status int
		says   []string
		not    []string
	}{
		{"#!python, the interpreter's own path", func(t *testing.T, dir string) script {
			return script{head: "#!" + python + "\n"}
		}, 0, []string{ran}, []string{"warning"}},
		{"#!python with an option", func(t *testing.T, dir string) script {
			return script{head: "#!" + python + " -E\n"}
		}, 0, []string{ran}, nil},
		{"pip: a long path, unquoted", func(t *testing.T, dir string) script {
			py := filepath.Join(dir, long, "venv", "bin", "python3")
			link(t, py)
			return script{head: "#!/bin/sh\n'''exec' " + py + " \"$0\" \"$@\"\n' '''\n"}
		}, 0, []string{ran}, []string{"warning"}},
		{"pip and virtualenv: a path with a space, double-quoted", func(t *testing.T, dir string) script {
			py := filepath.Join(dir, "my venv", "bin", "python3")
			link(t, py)
			return script{head: "#!/bin/sh\n'''exec' \"" + py + "\" \"$0\" \"$@\"\n' '''\n"}
		}, 0, []string{ran}, nil},
		{"uv: a long path, single-quoted", func(t *testing.T, dir string) script {
			py := filepath.Join(dir, long, ".venv", "bin", "python3")
			link(t, py)
			return script{head: "#!/bin/sh\n'''exec' '" + py + "' \"$0\" \"$@\"\n' '''\n"}
		}, 0, []string{ran}, nil},
		{"uv: a quote in the path", func(t *testing.T, dir string) script {
			py := filepath.Join(dir, "it's a venv", "bin", "python3")
			link(t, py)
			return script{head: "#!/bin/sh\n'''exec' '" + strings.ReplaceAll(py, "'", `'"'"'`) + "' \"$0\" \"$@\"\n' '''\n"}
		}, 0, []string{ran}, nil},
		{"uv --relocatable: the python beside the script", func(t *testing.T, dir string) script {
			link(t, filepath.Join(dir, "rel", "bin", "python"))
			return script{head: "#!/bin/sh\n'''exec' \"$(dirname -- \"$(realpath -- \"$0\")\")\"/'python' \"$0\" \"$@\"\n' '''\n", vllmDir: "rel/bin"}
		}, 0, []string{ran}, nil},
		{"uv --relocatable, older: the directory by cd", func(t *testing.T, dir string) script {
			link(t, filepath.Join(dir, "old", "bin", "python"))
			return script{head: "#!/bin/sh\n'''exec' \"$(CDPATH= cd -- \"$(dirname -- \"$0\")\" && echo \"$PWD\")\"/'python' \"$0\" \"$@\"\n' '''\n", vllmDir: "old/bin"}
		}, 0, []string{ran}, nil},
		{"uv --relocatable into a venv the check did not run in", func(t *testing.T, dir string) script {
			link(t, filepath.Join(dir, "venv", "bin", "python"))
			if err := os.WriteFile(filepath.Join(dir, "venv", "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return script{head: "#!/bin/sh\n'''exec' \"$(dirname -- \"$(realpath -- \"$0\")\")\"/'python' \"$0\" \"$@\"\n' '''\n", vllmDir: "venv/bin"}
		}, PreflightExit, []string{wrong + "$DIR/venv/bin/python"}, []string{ran}},
		{"a venv's #!python, checked with the Python it was made from", func(t *testing.T, dir string) script {
			link(t, filepath.Join(dir, "venv", "bin", "python3"))
			if err := os.WriteFile(filepath.Join(dir, "venv", "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			return script{head: "#!" + filepath.Join(dir, "venv", "bin", "python3") + "\n"}
		}, PreflightExit, []string{wrong + "$DIR/venv/bin/python3", "this check ran in " + python}, []string{ran}},
		{"pip's trampoline to another Python", func(t *testing.T, dir string) script {
			return script{head: "#!/bin/sh\n'''exec' /opt/" + long + "/bin/python3 \"$0\" \"$@\"\n' '''\n"}
		}, PreflightExit, []string{wrong + "/opt/" + long + "/bin/python3"}, []string{wrong + "/bin/sh", ran}},
		{"uv's trampoline to another Python", func(t *testing.T, dir string) script {
			return script{head: "#!/bin/sh\n'''exec' '/opt/other venv/bin/python3' \"$0\" \"$@\"\n' '''\n"}
		}, PreflightExit, []string{wrong + "/opt/other venv/bin/python3"}, []string{wrong + "/bin/sh", ran}},
		{"env: the python3 on the unit's PATH", func(t *testing.T, dir string) script {
			return script{head: "#!/usr/bin/env python3\n"}
		}, 0, []string{ran}, nil},
		{"env -S with an option", func(t *testing.T, dir string) script {
			return script{head: "#!/usr/bin/env -S python3 -u\n"}
		}, 0, []string{ran}, nil},
		{"env finds no such Python", func(t *testing.T, dir string) script {
			return script{head: "#!/usr/bin/env python3.99\n"}
		}, PreflightExit, []string{"finds no python3.99 on PATH"}, []string{ran}},
		{"a shell wrapper of the user's: a warning, and it runs", func(t *testing.T, dir string) script {
			body := filepath.Join(dir, "body.py")
			return script{head: "#!/bin/sh\nexec " + python + " " + body + " \"$@\"\n"}
		}, 0, []string{"warning: $DIR/bin/vllm is a /bin/sh script, not a trampoline of pip, uv or virtualenv", ran}, []string{wrong}},
		{"#!python left unrewritten", func(t *testing.T, dir string) script {
			return script{head: "#!python\n"}
		}, PreflightExit, []string{"names python, not an absolute path"}, []string{wrong, ran}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := tc.setup(t, dir)
			record := filepath.Join(dir, "args")
			body := "import sys\nopen(" + strconvQuote(record) + ", \"w\").write(\"\\n\".join(sys.argv[1:]) + \"\\n\")\n"
			if err := os.WriteFile(filepath.Join(dir, "body.py"), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			vllm := filepath.Join(dir, firstNonEmpty(s.vllmDir, "bin"), "vllm")
			if err := os.MkdirAll(filepath.Dir(vllm), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(vllm, []byte(s.head+body), 0o755); err != nil {
				t.Fatal(err)
			}
			argv := planForLocalRun(t, dir, vllm, python)
			cmd := exec.Command(argv[0], argv[1:]...)
			bin := fakeGPUs(t, 1)
			link(t, filepath.Join(bin, "python3")) // for #!/usr/bin/env python3
			for _, tool := range []string{"realpath", "dirname"} {
				p, _ := exec.LookPath(tool)
				if err := os.Symlink(p, filepath.Join(bin, tool)); err != nil {
					t.Fatal(err)
				}
			}
			cmd.Env = preflightEnv(t, fakeSite(t, map[string]string{"vllm-omni": "0.24.0", "vllm": "0.24.0"}, nil), bin)
			out, err := cmd.CombinedOutput()
			status := testtool.ExitStatus(t, err)
			said := string(out)
			if _, err := os.Stat(record); err == nil {
				said += "\n" + ran
			}
			if status != tc.status {
				t.Errorf("status %d, want %d:\n%s", status, tc.status, said)
			}
			for _, w := range tc.says {
				if w = strings.ReplaceAll(w, "$DIR", dir); !strings.Contains(said, w) {
					t.Errorf("output does not say %q:\n%s", w, said)
				}
			}
			for _, w := range tc.not {
				if w = strings.ReplaceAll(w, "$DIR", dir); strings.Contains(said, w) {
					t.Errorf("output says %q:\n%s", w, said)
				}
			}
		})
	}
}

// For any path an installer can write into its trampoline, the preflight
// finds the Python sh runs: each path here is a link to the test's Python,
// so the check passes and vllm runs only if the path read is the one sh
// ran. The paths are drawn from what each form quotes: distlib puts a path
// with a space in double quotes (so no ", $, ` or \ in it), uv puts every
// path in single quotes and writes a quote as '"'"'; lengths run past the
// kernel's 127 bytes.
func TestPreflightTrampolines_AnyPath(t *testing.T) {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		testtool.Need(t, "python3-in-/usr/bin")
	}
	forms := []struct {
		name     string
		alphabet string
		quote    func(string) string
	}{
		{"distlib", "abcXYZ019 ._-+@,=:'", func(p string) string {
			if strings.Contains(p, " ") {
				return `"` + p + `"`
			}
			return p
		}},
		{"uv", "abcXYZ019 ._-+@,=:'\"$`\\;&|()*?[]{}<>!#~", func(p string) string {
			return "'" + strings.ReplaceAll(p, "'", `'"'"'`) + "'"
		}},
	}
	rng := newPathRand(23)
	bin := fakeGPUs(t, 1)
	site := fakeSite(t, map[string]string{"vllm-omni": "0.24.0", "vllm": "0.24.0"}, nil)
	tried := 0
	for _, form := range forms {
		for i := 0; i < 12; i++ {
			dir := t.TempDir()
			// One to four directories, each of 1 to 70 characters, never
			// starting with a space or holding two quotes in a row (which
			// Python would read as the end of the trampoline's string).
			rel := ""
			for n := 1 + rng.next(4); n > 0; n-- {
				seg := rng.word(form.alphabet, 1+rng.next(70))
				seg = strings.TrimLeft(strings.ReplaceAll(seg, "''", "'a'"), " ")
				if seg == "" || seg == "." || seg == ".." {
					seg = "d"
				}
				rel = filepath.Join(rel, seg)
			}
			py := filepath.Join(dir, rel, "bin", "python3")
			if err := os.MkdirAll(filepath.Dir(py), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(python, py); err != nil {
				t.Fatal(err)
			}
			record := filepath.Join(dir, "args")
			head := "#!/bin/sh\n'''exec' " + form.quote(py) + " \"$0\" \"$@\"\n' '''\n"
			body := "import sys\nopen(" + strconvQuote(record) + ", \"w\").write(\"ok\\n\")\n"
			vllm := filepath.Join(dir, "vllm")
			if err := os.WriteFile(vllm, []byte(head+body), 0o755); err != nil {
				t.Fatal(err)
			}
			argv := planForLocalRun(t, dir, vllm, python)
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = preflightEnv(t, site, bin)
			out, err := cmd.CombinedOutput()
			if _, statErr := os.Stat(record); err != nil || statErr != nil {
				t.Errorf("%s trampoline to %q: %v, vllm ran: %v\n%s", form.name, py, err, statErr == nil, out)
			}
			tried++
		}
	}
	t.Logf("%d trampolines", tried)
}

// pathRand is a small deterministic generator, so that a failing path is
// the same on every run.
type pathRand struct{ state uint64 }

func newPathRand(seed uint64) *pathRand { return &pathRand{state: seed} }

func (r *pathRand) next(n int) int {
	r.state = r.state*6364136223846793005 + 1442695040888963407
	return int((r.state >> 33) % uint64(n))
}

func (r *pathRand) word(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.next(len(alphabet))]
	}
	return string(b)
}

// python_path unset: the python3 beside vllm_path, except in
// /usr/local/bin, where both a Python built into /usr/local and the
// distribution's pip (for /usr/bin/python3) put vllm; there the preflight
// starts with python3 as the unit's PATH finds it, /usr/local/bin before
// /usr/bin, through /usr/bin/env.
func TestDefaultPythonPath(t *testing.T) {
	for _, tc := range []struct {
		service ServiceSpec
		want    []string
	}{
		{ServiceSpec{}, []string{"/usr/bin/env", "python3", DefaultCheckScriptPath}},
		{ServiceSpec{VLLMPath: "/usr/local/bin/vllm"}, []string{"/usr/bin/env", "python3", DefaultCheckScriptPath}},
		{ServiceSpec{VLLMPath: "/usr/bin/vllm"}, []string{"/usr/bin/python3", DefaultCheckScriptPath}},
		{ServiceSpec{VLLMPath: "/opt/venv/bin/vllm"}, []string{"/opt/venv/bin/python3", DefaultCheckScriptPath}},
		{ServiceSpec{VLLMPath: "/usr/local/bin/vllm", PythonPath: "/usr/bin/python3"}, []string{"/usr/bin/python3", DefaultCheckScriptPath}},
		{ServiceSpec{VLLMPath: "/opt/bin/vllm", PythonPath: "/usr/local/bin/python3.12"}, []string{"/usr/local/bin/python3.12", DefaultCheckScriptPath}},
	} {
		res := mustPlan(t, Spec{Model: seedModel, Service: tc.service})
		for _, l := range res.Launches {
			for _, proc := range l.Processes {
				if got := proc.exec[:len(tc.want)]; !reflect.DeepEqual(got, tc.want) {
					t.Errorf("%+v: preflight starts %q, want %q", tc.service, got, tc.want)
				}
				if want := "ExecStart=" + strings.Join(tc.want, " ") + " "; !strings.Contains(loadedUnit(res, proc), "\n"+want) {
					t.Errorf("%+v: the unit does not start with %q", tc.service, want)
				}
			}
		}
	}
}

// A system-wide pip install, as the default python_path meets it: vllm in
// the directory that stands for /usr/local/bin, its Python in the one that
// stands for /usr/bin, the unit's PATH in that order. The preflight runs in
// that Python and starts vllm; with another python3 earlier on PATH (a
// Python built into /usr/local), it refuses and names the one to set.
func TestDefaultPythonPath_SystemWidePip(t *testing.T) {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		testtool.Need(t, "python3-in-/usr/bin")
	}
	res := mustPlan(t, Spec{Model: seedModel})
	proc := res.Launches[0].Processes[0]
	if proc.exec[0] != "/usr/bin/env" {
		t.Fatalf("the default preflight starts %q", proc.exec[:2])
	}
	for _, tc := range []struct {
		name         string
		localPython  bool // a python3 of its own in the /usr/local/bin stand-in
		status       int
		says, notSay string
	}{
		{"the distribution's Python", false, 0, "", "error"},
		{"another python3 first on PATH", true, PreflightExit, "set systemd.python_path to $USR/bin/python3", "vllm ran"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			local, usr := filepath.Join(dir, "usr", "local", "bin"), filepath.Join(dir, "usr", "bin")
			for _, d := range []string{local, usr} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Symlink(python, filepath.Join(usr, "python3")); err != nil {
				t.Fatal(err)
			}
			if tc.localPython {
				// Another environment: a venv-like prefix of its own.
				if err := os.Symlink(python, filepath.Join(local, "python3")); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "usr", "local", "pyvenv.cfg"), []byte("home = /usr/bin\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			record := filepath.Join(dir, "ran")
			vllm := filepath.Join(local, "vllm")
			script := "#!" + filepath.Join(usr, "python3") + "\nopen(" + strconvQuote(record) + ", \"w\").write(\"ran\\n\")\n"
			if err := os.WriteFile(vllm, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			config := filepath.Join(dir, "deploy.yaml")
			if err := os.WriteFile(config, []byte(res.ConfigYAML), 0o644); err != nil {
				t.Fatal(err)
			}
			argv := execArgv(proc, ServiceSpec{VLLMPath: vllm})
			for i, a := range argv {
				if a == res.ConfigPath {
					argv[i] = config
				}
			}
			bin := fakeGPUs(t, 1)
			cmd := exec.Command(argv[0], argv[1:]...)
			env := preflightEnv(t, fakeSite(t, map[string]string{"vllm-omni": "0.24.0", "vllm": "0.24.0"}, nil), bin)
			for i, kv := range env {
				if strings.HasPrefix(kv, "PATH=") {
					env[i] = "PATH=" + local + ":" + usr + ":" + bin
				}
			}
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			said := string(out)
			if _, err := os.Stat(record); err == nil {
				said += "\nvllm ran"
			}
			status := testtool.ExitStatus(t, err)
			if status != tc.status || tc.says != "" && !strings.Contains(said, strings.ReplaceAll(tc.says, "$USR", filepath.Join(dir, "usr"))) ||
				strings.Contains(said, tc.notSay) || tc.status == 0 && !strings.Contains(said, "vllm ran") {
				t.Errorf("status %d, want %d saying %q:\n%s", status, tc.status, tc.says, said)
			}
		})
	}
}

// planForLocalRun plans the seed with paths the units can see (the
// sandbox refuses a temporary directory), writes its config into dir, and
// returns the head's exec argv with the test's own vllm and config put in
// their place.
func planForLocalRun(t *testing.T, dir, vllm, python string) []string {
	t.Helper()
	spec := Spec{Model: seedModel, ConfigPath: "/etc/omni-test/deploy.yaml", Service: ServiceSpec{VLLMPath: "/opt/omni-test/bin/vllm", PythonPath: python}}
	res := mustPlan(t, spec)
	config := filepath.Join(dir, "deploy.yaml")
	if err := os.WriteFile(config, []byte(res.ConfigYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	local := map[string]string{spec.ConfigPath: config, spec.Service.VLLMPath: vllm}
	return withLocalPaths(execArgv(res.Launches[0].Processes[0], spec.Service.withDefaults()), local)
}
