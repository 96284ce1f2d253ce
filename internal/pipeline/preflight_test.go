package pipeline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// fakeSite is a site directory holding the distributions' metadata, as
// pip leaves it (name-version.dist-info/METADATA), and the modules the
// preflight imports: NIXL's transport package and the vllm_omni paths the
// seed plan names (fakeModules), with modules' entries changed or, where
// an entry is "", removed.
func fakeSite(t *testing.T, dists map[string]string, modules map[string]string) string {
	t.Helper()
	files := maps.Clone(fakeModules)
	for name, version := range dists {
		files[strings.ReplaceAll(name, "-", "_")+"-"+version+".dist-info/METADATA"] = distMetadata(name, version)
	}
	for path, src := range modules {
		if src == "" {
			delete(files, path)
			continue
		}
		files[path] = src
	}
	return writeFiles(t, files)
}

// distMetadata is a dist-info's METADATA file, as fakeSite writes it.
func distMetadata(name, version string) string {
	return "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version + "\n"
}

// writeFiles writes files, by their slash paths, into a new directory and
// returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for path, src := range files {
		full := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fakeModules are the modules the seed plan's preflight imports, each file
// by its path in the site directory: the nixl package's module vLLM
// imports (empty: the check only imports it), the schedulers, and
// Qwen3-Omni's input processors.
var fakeModules = map[string]string{
	"nixl/__init__.py":                                              "\n",
	"nixl/_api.py":                                                  "class nixl_agent:\n    pass\n",
	"vllm_omni/__init__.py":                                         "\n",
	"vllm_omni/core/__init__.py":                                    "\n",
	"vllm_omni/core/sched/__init__.py":                              "\n",
	"vllm_omni/core/sched/omni_ar_scheduler.py":                     "class OmniARScheduler:\n    pass\n",
	"vllm_omni/core/sched/omni_generation_scheduler.py":             "class OmniGenerationScheduler:\n    pass\n",
	"vllm_omni/model_executor/__init__.py":                          "\n",
	"vllm_omni/model_executor/stage_input_processors/__init__.py":   "\n",
	"vllm_omni/model_executor/stage_input_processors/qwen3_omni.py": "def thinker2talker(*args, **kwargs):\n    pass\n\ndef talker2code2wav(*args, **kwargs):\n    pass\n",
}

// fakeGPUs writes a directory holding an nvidia-smi that lists n GPUs as
// `nvidia-smi -L` does, for the PATH the preflight runs with; n < 0 leaves
// nvidia-smi out.
func fakeGPUs(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	if n < 0 {
		return dir
	}
	script := "#!/bin/sh\n"
	for i := 0; i < n; i++ {
		script += fmt.Sprintf("echo 'GPU %d: NVIDIA H100 80GB HBM3 (UUID: GPU-%08d-0000-0000-0000-000000000000)'\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "nvidia-smi"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// preflightEnv is the environment the preflight runs in under test: the
// fake site as the only site, and PATH holding only the fake nvidia-smi.
func preflightEnv(t *testing.T, site, bin string) []string {
	t.Helper()
	var env []string
	for _, kv := range os.Environ() {
		// The test's own CUDA_VISIBLE_DEVICES would be the preflight's.
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "PYTHONPATH=") && !strings.HasPrefix(kv, "CUDA_VISIBLE_DEVICES=") {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+bin, "PYTHONPATH="+site, "PYTHONNOUSERSITE=1")
}

// The preflight, run by Debian's python3 against fake installed
// distributions and modules, and a fake nvidia-smi: it passes on the
// planned release (a local build with a warning), and exits PreflightExit
// with both versions or both hashes named otherwise; then, before any GPU
// is taken, with the GPUs the host lacks, the transport package that does
// not import, or the dotted path the installed vllm-omni does not have.
func TestPreflight(t *testing.T) {
	python := testtool.Need(t, "python3")
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		python = "/usr/bin/python3"
	}
	type run struct {
		spec    Spec
		dists   map[string]string
		config  string
		modules map[string]string
		gpus    int // GPUs the fake nvidia-smi lists; -1 for no nvidia-smi
		proc    int // the process of the first launch to check
		env     []string
		shadow  map[string]string // files of a site directory before the fake site on PYTHONPATH
	}
	runPreflight := func(t *testing.T, r run) (string, int, []string) {
		t.Helper()
		r.spec.ConfigPath = "/etc/omni-test/deploy.yaml"
		res := mustPlan(t, r.spec)
		configPath := filepath.Join(t.TempDir(), "deploy.yaml")
		config := r.config
		if config == "" {
			config = res.ConfigYAML
		}
		if config != "missing" {
			if err := os.WriteFile(configPath, []byte(config), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		pre := withLocalPaths(preflightOf(res.Launches[0].Processes[r.proc]), map[string]string{r.spec.ConfigPath: configPath})
		argv := append([]string{python}, pre[slices.Index(pre, checkScriptFile()):]...) // the test's Python, then the script and on
		cmd := exec.Command(argv[0], argv[1:]...)
		site := fakeSite(t, r.dists, r.modules)
		if r.shadow != nil {
			site = writeFiles(t, r.shadow) + string(os.PathListSeparator) + site
		}
		cmd.Env = append(preflightEnv(t, site, fakeGPUs(t, r.gpus)), r.env...)
		out, err := cmd.CombinedOutput()
		return string(out), testtool.ExitStatus(t, err), argv
	}
	seed := Spec{Model: seedModel}
	line := Spec{Model: seedModel, VLLMOmniVersion: "0.24"}
	whole := Spec{Model: seedModel, VLLMOmniVersion: "0.22.0"} // one process for every stage
	acrossHosts := Spec{Model: seedModel, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}}
	mooncake := map[string]string{"mooncake/__init__.py": "\n", "mooncake/engine.py": "class TransferEngine:\n    pass\n"}
	match := map[string]string{"vllm-omni": "0.24.0", "vllm": "0.24.1"}
	const (
		processors = "vllm_omni/model_executor/stage_input_processors/qwen3_omni.py"
		arSched    = "vllm_omni/core/sched/omni_ar_scheduler.py"
		t2c        = "vllm_omni.model_executor.stage_input_processors.qwen3_omni.talker2code2wav"
	)
	noT2C := map[string]string{processors: "def thinker2talker(*args, **kwargs):\n    pass\n"}
	tests := []struct {
		name    string
		run     run
		status  int
		says    []string
		notSays []string
	}{
		{"the planned release", run{spec: seed, dists: match, gpus: 4}, 0, []string{"ok: vllm-omni 0.24.0, vLLM 0.24.1"}, []string{"warning"}},
		{"a line takes any release of it", run{spec: line, dists: map[string]string{"vllm-omni": "0.24.3", "vllm": "0.24.0"}, gpus: 1}, 0, []string{"ok:"}, nil},
		{"a local build, with a warning", run{spec: seed, dists: map[string]string{"vllm-omni": "0.24.0+cu128", "vllm": "0.24.0"}, gpus: 1}, 0,
			[]string{"warning: vllm-omni 0.24.0+cu128 is a pre-release, post-release or local build of 0.24.0"}, nil},
		{"a candidate of the release, with a warning", run{spec: seed, dists: map[string]string{"vllm-omni": "0.24.0rc1", "vllm": "0.24.0"}, gpus: 1}, 0, []string{"warning:"}, nil},
		{"another release", run{spec: seed, dists: map[string]string{"vllm-omni": "0.22.0", "vllm": "0.22.0"}, gpus: 1}, PreflightExit,
			[]string{"vllm-omni 0.22.0 is installed, but the plan is for vllm-omni 0.24.0; install vllm-omni==0.24.0"}, nil},
		{"another line", run{spec: line, dists: map[string]string{"vllm-omni": "0.26.0rc1", "vllm": "0.26.0"}, gpus: 1}, PreflightExit, []string{"the plan is for the 0.24 line"}, nil},
		{"a vLLM of another line", run{spec: seed, dists: map[string]string{"vllm-omni": "0.24.0", "vllm": "0.25.0"}, gpus: 1}, PreflightExit,
			[]string{"vLLM 0.25.0 is installed, but vllm-omni 0.24.0 needs vLLM 0.24.x"}, nil},
		{"vllm-omni missing", run{spec: seed, dists: map[string]string{"vllm": "0.24.0"}, gpus: 1}, PreflightExit, []string{"vllm-omni is not installed"}, nil},
		{"vLLM missing", run{spec: seed, dists: map[string]string{"vllm-omni": "0.24.0"}, gpus: 1}, PreflightExit, []string{"vllm is not installed"}, nil},
		{"a changed config", run{spec: seed, dists: match, config: "stage_args: []\n", gpus: 1}, PreflightExit,
			[]string{"has SHA-256 " + sha256Hex("stage_args: []\n") + ", but the plan's config_sha256 is"}, nil},
		{"no config", run{spec: seed, dists: match, config: "missing", gpus: 1}, PreflightExit, []string{"cannot be read"}, nil},

		// The GPUs: the process needs its highest device index + 1.
		{"enough GPUs", run{spec: seed, dists: match, gpus: 2, proc: 1}, 0, []string{"ok:"}, []string{"warning"}},
		{"fewer GPUs than the process is given", run{spec: seed, dists: match, gpus: 1, proc: 1}, PreflightExit,
			[]string{"this host has 1 GPU(s) (nvidia-smi -L)", "gives this process GPU index 1, so it needs 2", "gpus = 1"}, nil},
		{"no GPU at all", run{spec: seed, dists: match, gpus: 0}, PreflightExit, []string{"this host has 0 GPU(s)"}, nil},
		{"a whole-pipeline process needs every stage's GPUs", run{spec: whole, dists: map[string]string{"vllm-omni": "0.22.0", "vllm": "0.22.0"}, gpus: 2}, PreflightExit,
			[]string{"this host has 2 GPU(s)", "so it needs 3"}, nil},
		{"a whole-pipeline process on enough GPUs", run{spec: whole, dists: map[string]string{"vllm-omni": "0.22.0", "vllm": "0.22.0"}, gpus: 3}, 0,
			[]string{"ok: vllm-omni 0.22.0"}, nil},

		// A release of more than three parts (PEP 440's N(.N)*), which pip
		// installs: read, and another release of the same patch warned
		// about as a post-release is.
		{"a fourth release part", run{spec: seed, dists: map[string]string{"vllm-omni": "0.24.0.1", "vllm": "0.24.0"}, gpus: 1}, 0,
			[]string{"warning: vllm-omni 0.24.0.1 is not 0.24.0: they differ after the third release part", "ok: vllm-omni 0.24.0.1"}, nil},
		{"a zero fourth part is the release itself", run{spec: seed, dists: map[string]string{"vllm-omni": "0.24.0.0", "vllm": "0.24.0"}, gpus: 1}, 0,
			[]string{"ok: vllm-omni 0.24.0.0"}, []string{"warning"}},
		{"a fourth part on a line", run{spec: line, dists: map[string]string{"vllm-omni": "0.24.3.1", "vllm": "0.24.0.2"}, gpus: 1}, 0,
			[]string{"ok: vllm-omni 0.24.3.1, vLLM 0.24.0.2"}, []string{"warning"}},
		{"a fourth part of another patch", run{spec: seed, dists: map[string]string{"vllm-omni": "0.24.1.1", "vllm": "0.24.0"}, gpus: 1}, PreflightExit,
			[]string{"vllm-omni 0.24.1.1 is installed, but the plan is for vllm-omni 0.24.0"}, nil},
		{"a version PEP 440 writes otherwise", run{spec: seed, dists: map[string]string{"vllm-omni": "1!0.24.0", "vllm": "0.24.0"}, gpus: 1}, PreflightExit,
			[]string{"vllm-omni 1!0.24.0 is not a version this check reads: it reads PEP 440's normalized N.N[.N...]"}, nil},

		// A vLLM built for no CUDA GPU, on a process given GPUs.
		{"a CPU build of vLLM on a GPU plan", run{spec: seed, dists: map[string]string{"vllm-omni": "0.24.0", "vllm": "0.24.0+cpu"}, gpus: 1}, PreflightExit,
			[]string{"vLLM 0.24.0+cpu is vLLM's build for cpu, not for CUDA GPUs, but the plan gives this process GPU indices up to 0; install vLLM's CUDA build (pip install vllm==0.24.0, without the +cpu label)"}, nil},
		{"an XPU build in a longer label", run{spec: seed, dists: map[string]string{"vllm-omni": "0.24.0", "vllm": "0.24.0+g1234abc.xpu"}, gpus: 1}, PreflightExit,
			[]string{"build for xpu"}, nil},
		{"a CUDA build's label", run{spec: seed, dists: map[string]string{"vllm-omni": "0.24.0", "vllm": "0.24.0+cu128"}, gpus: 1}, 0, []string{"ok:"}, nil},

		// Two records of a distribution: the version is the one of the
		// package Python imports, and two versions recorded beside it are
		// refused, whatever order the directory lists them in.
		{"a stale vllm-omni record beside the installed one", run{spec: seed, dists: match, gpus: 1, modules: map[string]string{"vllm_omni-0.22.0.dist-info/METADATA": distMetadata("vllm-omni", "0.22.0")}}, PreflightExit,
			[]string{"vllm-omni is recorded as installed 2 times in ", "vllm_omni-0.22.0.dist-info, vllm_omni-0.24.0.dist-info", "cannot tell which version Python imports"}, []string{"ok:"}},
		{"a stale vLLM record beside the installed one", run{spec: seed, dists: match, gpus: 1, modules: map[string]string{"vllm-0.24.2.dist-info/METADATA": distMetadata("vllm", "0.24.2")}}, PreflightExit,
			[]string{"vllm is recorded as installed 2 times"}, nil},
		{"a record without its package earlier on sys.path: the imported package's record decides", run{spec: seed, dists: match, gpus: 1, shadow: map[string]string{"vllm_omni-0.22.0.dist-info/METADATA": distMetadata("vllm-omni", "0.22.0")}}, 0,
			[]string{"ok: vllm-omni 0.24.0"}, nil},
		{"two records of one version", run{spec: seed, dists: match, gpus: 1, modules: map[string]string{"vllm_omni-0.24.0.post0.dist-info/METADATA": distMetadata("vllm-omni", "0.24.0")}}, 0,
			[]string{"ok: vllm-omni 0.24.0"}, nil},

		// An inherited CUDA_VISIBLE_DEVICES (environment_file, or the
		// environment systemd runs in), through which vllm-omni maps the
		// config's devices: it must leave GPU i as GPU i for every index
		// the process is given.
		{"a mask that lists every GPU in order", run{spec: seed, dists: match, gpus: 4, proc: 1, env: []string{"CUDA_VISIBLE_DEVICES=0,1,2,3"}}, 0, []string{"ok:"}, []string{"CUDA_VISIBLE_DEVICES"}},
		{"a mask that lists the process's GPUs first, blanks as vllm-omni drops them", run{spec: seed, dists: match, gpus: 4, proc: 1, env: []string{"CUDA_VISIBLE_DEVICES= 0 , 1 ,"}}, 0, []string{"ok:"}, nil},
		{"a mask by UUID and a start of one, in order", run{spec: seed, dists: match, gpus: 2, proc: 1, env: []string{"CUDA_VISIBLE_DEVICES=GPU-00000000-0000-0000-0000-000000000000,GPU-00000001"}}, 0, []string{"ok:"}, nil},
		{"a mask that hides a GPU the process is given", run{spec: seed, dists: match, gpus: 2, proc: 1, env: []string{"CUDA_VISIBLE_DEVICES=0"}}, PreflightExit,
			[]string{"CUDA_VISIBLE_DEVICES=0, which this process inherits (from systemd.environment_file", "hides GPU 1", "GPU indices up to 1", "remove CUDA_VISIBLE_DEVICES from the unit's environment, or make it start with 0,1"}, []string{"ok:"}},
		{"a mask that moves the process to another GPU", run{spec: seed, dists: match, gpus: 4, env: []string{"CUDA_VISIBLE_DEVICES=2,3"}}, PreflightExit,
			[]string{"makes GPU 0 GPU 2", "make it start with 0"}, []string{"ok:"}},
		{"a mask that swaps GPUs", run{spec: seed, dists: match, gpus: 2, proc: 1, env: []string{"CUDA_VISIBLE_DEVICES=1,0"}}, PreflightExit,
			[]string{"makes GPU 0 GPU 1; makes GPU 1 GPU 0"}, nil},
		{"an empty mask hides every GPU", run{spec: seed, dists: match, gpus: 1, env: []string{"CUDA_VISIBLE_DEVICES="}}, PreflightExit,
			[]string{"CUDA_VISIBLE_DEVICES='',", "hides GPU 0"}, nil},
		{"UUIDs out of order", run{spec: seed, dists: match, gpus: 2, proc: 1, env: []string{"CUDA_VISIBLE_DEVICES=GPU-00000001,GPU-00000000"}}, PreflightExit,
			[]string{"makes GPU 0 GPU 1"}, nil},
		{"a MIG slice is no GPU index", run{spec: seed, dists: match, gpus: 1, env: []string{"CUDA_VISIBLE_DEVICES=MIG-5c3b7e2a"}}, PreflightExit,
			[]string{"names MIG-5c3b7e2a for GPU 0, which is no GPU index or UUID nvidia-smi -L lists"}, nil},
		{"every index up to the process's highest is judged", run{spec: seed, dists: match, gpus: 3, proc: 2, env: []string{"CUDA_VISIBLE_DEVICES=7"}}, PreflightExit,
			[]string{"makes GPU 0 GPU 7; hides GPU 1; hides GPU 2"}, nil},

		// The transport package the connector imports, which vLLM does not install.
		{"nixl missing", run{spec: seed, dists: match, gpus: 1, modules: map[string]string{"nixl/__init__.py": "", "nixl/_api.py": ""}}, PreflightExit,
			[]string{"NixlConnector needs the Python package nixl._api", "No module named 'nixl'", "install it (pip: nixl) into that Python"}, nil},
		{"a nixl without the module vLLM imports", run{spec: seed, dists: match, gpus: 1, modules: map[string]string{"nixl/_api.py": ""}}, PreflightExit,
			[]string{"NixlConnector needs the Python package nixl._api", "No module named 'nixl._api'"}, nil},
		{"nixl that fails to import", run{spec: seed, dists: match, gpus: 1, modules: map[string]string{"nixl/__init__.py": "raise ImportError('libucs.so.0: cannot open shared object file')\n"}}, PreflightExit,
			[]string{"NixlConnector needs the Python package nixl", "libucs.so.0"}, nil},
		// An edge's connector, which vllm-omni builds only at its first
		// transfer: a package that does not import is a warning.
		{"an edge's transport that imports", run{spec: acrossHosts, dists: match, gpus: 1, modules: mooncake}, 0,
			[]string{"ok:"}, []string{"warning"}},
		{"an edge's transport missing: a warning, not a refusal", run{spec: acrossHosts, dists: match, gpus: 1}, 0,
			[]string{"warning: the deploy config names MooncakeTransferEngineConnector on an edge of this stage", "mooncake.engine", "install mooncake-transfer-engine", "ok:"}, nil},
		{"a stage without the connector does not import nixl", run{spec: seed, dists: match, gpus: 3, proc: 2, modules: map[string]string{"nixl/__init__.py": "", "nixl/_api.py": ""}}, 0,
			[]string{"ok:"}, nil},

		// The dotted paths the release imports for the process's stages.
		{"a processor the installed vllm-omni lacks", run{spec: seed, dists: match, gpus: 1, modules: noT2C}, PreflightExit,
			[]string{"custom_process_input_func " + t2c + " does not resolve in the installed vllm-omni 0.24.0", "has no attribute talker2code2wav"}, nil},
		{"every stage imports every stage's processor: one install serves them all", run{spec: seed, dists: match, gpus: 3, proc: 2, modules: noT2C}, PreflightExit,
			[]string{"custom_process_input_func " + t2c}, nil},
		{"the stage whose processor is missing", run{spec: seed, dists: match, gpus: 3, proc: 3, modules: noT2C}, PreflightExit,
			[]string{"custom_process_input_func " + t2c}, nil},
		{"a processors module missing", run{spec: seed, dists: match, gpus: 1, modules: map[string]string{processors: ""}}, PreflightExit,
			[]string{"custom_process_input_func vllm_omni.model_executor.stage_input_processors.qwen3_omni.thinker2talker does not resolve", "No module named 'vllm_omni.model_executor.stage_input_processors.qwen3_omni'"}, nil},
		{"a scheduler the installed vllm-omni lacks", run{spec: seed, dists: match, gpus: 2, proc: 1, modules: map[string]string{arSched: "X = 1\n"}}, PreflightExit,
			[]string{"scheduler_cls vllm_omni.core.sched.omni_ar_scheduler.OmniARScheduler does not resolve"}, nil},
		{"vllm_omni not importable at all", run{spec: seed, dists: match, gpus: 1, modules: map[string]string{"vllm_omni/__init__.py": "raise RuntimeError('CUDA driver too old')\n"}}, PreflightExit,
			[]string{"does not resolve", "CUDA driver too old"}, nil},
		{"a whole-pipeline process imports every stage's", run{spec: whole, dists: map[string]string{"vllm-omni": "0.22.0", "vllm": "0.22.0"}, gpus: 3, modules: noT2C}, PreflightExit,
			[]string{"custom_process_input_func " + t2c}, nil},
	}
	if _, err := os.Stat("/proc/driver/nvidia/gpus"); err != nil {
		// Only where the driver's entries do not count the GPUs either.
		tests = append(tests, struct {
			name    string
			run     run
			status  int
			says    []string
			notSays []string
		}{"no nvidia-smi: a warning", run{spec: seed, dists: match, gpus: -1}, 0,
			[]string{"warning: cannot count this host's GPUs", "GPU indices up to 0", "ok:"}, nil})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, status, argv := runPreflight(t, tc.run)
			if status != tc.status {
				t.Errorf("status %d, want %d:\n%s\nargs: %q", status, tc.status, out, argv[4:])
			}
			for _, s := range tc.says {
				if !strings.Contains(out, s) {
					t.Errorf("output does not say %q:\n%s", s, out)
				}
			}
			for _, s := range tc.notSays {
				if strings.Contains(out, s) {
					t.Errorf("output says %q:\n%s", s, out)
				}
			}
		})
	}
}

// What each process's preflight checks: --gpus its highest device index
// + 1, --transport NixlConnector=nixl on the PD pair's processes, --import
// for each dotted path the release imports for its stages (the head's
// orchestrator runs every stage's input processor, so it imports them all).
func TestPreflightArgv(t *testing.T) {
	const (
		ar  = "scheduler_cls=vllm_omni.core.sched.omni_ar_scheduler.OmniARScheduler"
		gen = "scheduler_cls=vllm_omni.core.sched.omni_generation_scheduler.OmniGenerationScheduler"
		t2t = "custom_process_input_func=vllm_omni.model_executor.stage_input_processors.qwen3_omni.thinker2talker"
		t2c = "custom_process_input_func=vllm_omni.model_executor.stage_input_processors.qwen3_omni.talker2code2wav"
		tr  = "NixlConnector=nixl._api"
	)
	// The options after the script, "preflight" and the five words every
	// process shares.
	opts := func(proc Process) []string {
		argv := preflightOf(proc)
		return argv[slices.Index(argv, "preflight")+6:]
	}
	all := []string{"--import", ar, "--import", t2t, "--import", t2c, "--import", gen}
	wait := []string{"--head", "127.0.0.1:25203", "--head-wait", "600", "--head-unit", "vllm-omni-stage@0.service"}
	// Stage-based: the imports and the wait in the template, the GPUs and
	// the transport in the stage's drop-in.
	with := func(own ...string) []string { return append(append(append([]string(nil), all...), wait...), own...) }
	res := mustPlan(t, Spec{Model: seedModel})
	want := [][]string{
		with("--gpus", "1", "--transport", tr),
		with("--gpus", "2", "--transport", tr),
		with("--gpus", "3"),
		with("--gpus", "3"),
	}
	procs := res.Launches[0].Processes
	if len(procs) != len(want) {
		t.Fatalf("%d processes, want %d", len(procs), len(want))
	}
	for i, proc := range procs {
		if got := opts(proc); !reflect.DeepEqual(got, want[i]) {
			t.Errorf("process %d preflight options %q, want %q", i, got, want[i])
		}
	}
	// One process for every stage: every stage's devices, transports and paths.
	res = mustPlan(t, Spec{Model: seedModel, VLLMOmniVersion: "0.22.0"})
	if got, w := opts(res.Launches[0].Processes[0]), append([]string{"--gpus", "3", "--transport", tr}, all...); !reflect.DeepEqual(got, w) {
		t.Errorf("whole-pipeline preflight options %q, want %q", got, w)
	}
	// A MultiConnector's children's transports, each the PD pair loads.
	res = mustPlan(t, Spec{Model: seedModel, Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": []any{
		map[string]any{"kv_connector": "NixlConnector"}, map[string]any{"kv_connector": "MooncakeConnector"}}}}})
	if got, w := opts(res.Launches[0].Processes[1])[len(with()):], []string{"--gpus", "2", "--transport", tr, "--transport", "MooncakeConnector=mooncake.engine"}; !reflect.DeepEqual(got, w) {
		t.Errorf("MultiConnector decode preflight options %q, want %q", got, w)
	}
	// Devices given: the highest index counts, not how many.
	res = mustPlan(t, Spec{Model: seedModel, Prefill: RoleSpec{Devices: []int{5}}})
	if got := opts(res.Launches[0].Processes[0])[len(with()):]; len(got) < 2 || got[0] != "--gpus" || got[1] != "6" {
		t.Errorf("prefill on GPU 5: preflight options %q, want --gpus 6 first of its own", got)
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
	spec := Spec{Model: seedModel, ConfigPath: "/etc/omni-test/deploy.yaml", Service: ServiceSpec{VLLMPath: "/opt/omni-test/bin/vllm", PythonPath: python}}
	res := mustPlan(t, spec)
	local := map[string]string{spec.ConfigPath: filepath.Join(dir, "deploy.yaml"), spec.Service.VLLMPath: vllm}
	if err := os.WriteFile(local[spec.ConfigPath], []byte(res.ConfigYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	proc := res.Launches[0].Processes[0]
	argv := withLocalPaths(execArgv(proc, spec.Service.withDefaults()), local)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = preflightEnv(t, fakeSite(t, map[string]string{"vllm-omni": "0.24.0", "vllm": "0.24.0"}, nil), fakeGPUs(t, 1))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Join(withLocalPaths(proc.Argv[1:], local), "\n") + "\n"; string(got) != want {
		t.Errorf("vllm ran with\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(res.SystemdUnit.Content, "RestartPreventExitStatus=78") {
		t.Error("the unit does not stop restarting on the preflight's status")
	}
	// A vllm of another Python: the check would have judged the wrong
	// environment, so it refuses to start it.
	if err := os.WriteFile(vllm, []byte("#!/opt/other/bin/python3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(argv[0], argv[1:]...)
	cmd.Env = preflightEnv(t, fakeSite(t, map[string]string{"vllm-omni": "0.24.0", "vllm": "0.24.0"}, nil), fakeGPUs(t, 1))
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
		argv := healthArgv(python, h.ReadinessCommand, h.ReadinessURL, srv)
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

// The smoke check sends one text-only chat completion for the model and
// passes only when an answer with a choice comes back; a failed KV handoff
// (the orchestrator's error names remote_request_id, or [PD]) fails it with
// a hint at the connector.
func TestSmokeScript(t *testing.T) {
	python := testtool.Need(t, "python3")
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		python = "/usr/bin/python3"
	}
	res := mustPlan(t, Spec{Model: seedModel})
	h := res.Health
	if h.SmokeURL != "http://127.0.0.1:8091/v1/chat/completions" {
		t.Errorf("smoke URL %q", h.SmokeURL)
	}
	const hint = "journalctl -u vllm-omni-stage@0.service shows [Orchestrator][PD] Missing prefill kv_transfer_params"
	for _, tc := range []struct {
		name   string
		status int
		body   string
		ok     bool
		says   []string
		not    []string
	}{
		{"an answer", 200, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Hello"}}]}`, true,
			[]string{"answered through prefill and decode: 'Hello'"}, nil},
		// What vllm-omni 0.24.0 answers once _build_pd_decode_params has
		// raised and stopped the orchestrator (async_omni_engine.py@d4a869fe
		// :1388).
		{"the orchestrator died on a failed handoff", 500, `{"object":"error","message":"Orchestrator died unexpectedly. See logs above.","type":"InternalServerError","code":500}`, false,
			[]string{"answered 500 (if prefill could not hand its KV cache to decode, " + hint + ")", "Orchestrator died"}, nil},
		{"a handoff error in the body", 500, `{"error":{"message":"[Orchestrator][PD] Missing prefill kv_transfer_params.remote_request_id"}}`, false,
			[]string{hint, "remote_request_id"}, nil},
		{"a [PD] error", 500, `{"error":{"message":"[PD] decode failed"}}`, false, []string{hint}, nil},
		{"another server error", 500, `{"error":{"message":"CUDA out of memory"}}`, false, []string{"answered 500: ", "CUDA out of memory"}, []string{hint}},
		{"an answer with no choice", 200, `{"choices":[]}`, false, []string{"answered with no choice"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got map[string]any
			var method string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				method = r.Method
				if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			argv := healthArgv(python, h.SmokeCommand, h.SmokeURL, srv.URL+"/v1/chat/completions")
			out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
			if (err == nil) != tc.ok {
				t.Errorf("err %v, want ok=%v\n%s", err, tc.ok, out)
			}
			for _, s := range tc.says {
				if !strings.Contains(string(out), s) {
					t.Errorf("output does not say %q:\n%s", s, out)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(string(out), s) {
					t.Errorf("output says %q:\n%s", s, out)
				}
			}
			// One chat completion for the model, text only, held to one
			// token at prefill.
			if method != http.MethodPost || got["model"] != seedModel || got["max_tokens"] != float64(1) ||
				!reflect.DeepEqual(got["modalities"], []any{"text"}) {
				t.Errorf("request %s %v", method, got)
			}
			if msgs, _ := got["messages"].([]any); len(msgs) != 1 {
				t.Errorf("messages %v, want one", got["messages"])
			}
		})
	}
	// No server: the check fails, naming the URL.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/v1/chat/completions"
	srv.Close()
	argv := healthArgv(python, h.SmokeCommand, h.SmokeURL, url)
	if out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput(); err == nil || !strings.Contains(string(out), "smoke: "+url) {
		t.Errorf("no server: err %v\n%s", err, out)
	}
}

// healthArgv is one of health's commands as the test runs it: its words
// (plain ones, so split at spaces), with the test's Python, the check
// script's file and the test server's URL for the plan's.
func healthArgv(python, command, planned, url string) []string {
	argv := withLocalPaths(strings.Fields(command), map[string]string{"python3": python, DefaultCheckScriptPath: checkScriptFile(), planned: url})
	return argv
}

// The variables a drop-in hands the template are the ones the script
// removes before it execs vllm.
func TestCheckScriptRemovesTheUnitWords(t *testing.T) {
	if want := `UNIT_WORDS = ("` + unitChecksVar + `", "` + unitArgsVar + `")`; !strings.Contains(CheckScript, want) {
		t.Errorf("pd-check.py does not hold %s", want)
	}
}
