package pipeline

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// standinRegistry is the project's stand-in for vllm-omni's pipeline
// registry, its dataclasses and its CLI's module, which the boot test
// installs too: a directory for PYTHONPATH.
const standinRegistry = "../boot/standin"

// registrationRows are the releases a PD plan writes its registration for.
func registrationRows() []releases.Release {
	var out []releases.Release
	for _, r := range releases.Table {
		if r.WritesRegistration() {
			out = append(out, r)
		}
	}
	return out
}

// On every release that loads only the stages dialect the thinker alone is
// planned on a registration the plan writes: a module named by its hash,
// which the config's pipeline: names, at the path the units hand the
// launcher; the talker is refused there (pd_thinker_only), and a release
// that reads stage_args writes none.
func TestRegistrationPlanned(t *testing.T) {
	rows := registrationRows()
	if len(rows) == 0 || rows[0].Version != "0.26.0" {
		t.Fatalf("the first release that writes a registration is %v, want 0.26.0", rows)
	}
	for _, r := range rows {
		res := mustPlan(t, Spec{Model: thinkingModel, VLLMOmniVersion: r.Version})
		reg := res.Registration
		if reg == nil || reg.Content == "" {
			t.Fatalf("%s: no registration written", r.Version)
		}
		if reg.Pipeline != registrationName(reg.Content) || reg.Path != "/usr/local/lib/vllm-omni/"+reg.Pipeline+".py" {
			t.Errorf("%s: registration %s at %s, want its hash's name beside the check script", r.Version, reg.Pipeline, reg.Path)
		}
		if !strings.HasPrefix(res.ConfigYAML, "pipeline: "+reg.Pipeline+"\nasync_chunk: false\n") {
			t.Errorf("%s: the config does not name the registration with async_chunk false:\n%.80s", r.Version, res.ConfigYAML)
		}
		if !strings.Contains(res.SystemdUnit.Content, " --registration "+reg.Path+" ") {
			t.Errorf("%s: the units do not hand the preflight the registration:\n%s", r.Version, res.SystemdUnit.Content)
		}
		if strings.Contains(reg.Content, reg.Pipeline) {
			t.Errorf("%s: the module holds its own name, so its name cannot be its hash", r.Version)
		}
		_, ds := Plan(Spec{Model: seedModel, VLLMOmniVersion: r.Version})
		if !hasCode(ds, "pd_thinker_only", "vllm_omni_version") {
			t.Errorf("%s: the talker pipeline is not refused as thinker-only: %v", r.Version, ds)
		}
	}
	if res := mustPlan(t, Spec{Model: thinkingModel, VLLMOmniVersion: "0.26.0rc1"}); res.Registration != nil {
		t.Errorf("0.26.0rc1 reads stage_args, yet the plan writes a registration")
	}
	// The user's own module: not written, but imported from beside the
	// check script, on a release with a registry only.
	res := mustPlan(t, Spec{Model: thinkingModel, Pipeline: "my_pd", VLLMOmniVersion: "0.27.0rc1", Service: ServiceSpec{CheckScriptPath: "/opt/omni/check.py"}})
	if reg := res.Registration; reg == nil || reg.Content != "" || reg.Path != "/opt/omni/my_pd.py" {
		t.Errorf("the user's registration: %+v", res.Registration)
	}
	if res := mustPlan(t, Spec{Model: thinkingModel, Pipeline: "my_pd", VLLMOmniVersion: "0.23.0rc1"}); res.Registration != nil {
		t.Errorf("0.23.0rc1 has no registry, yet the units import the user's module")
	}
}

// The module each release's plan writes compiles, and registers against
// the stand-in registry (the release's signature and dataclass fields):
// validate() finds nothing, the pipeline is stored under the module's own
// name, and its stages' extras hold one prefill and one decode stage with
// adjacent ids, as vllm-omni's PD detection needs.
func TestRegistrationRegisters(t *testing.T) {
	python := testtool.Need(t, "python3")
	standin, err := filepath.Abs(standinRegistry)
	if err != nil {
		t.Fatal(err)
	}
	const probe = `import importlib.util, json, sys
path, key = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location(key, path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
from vllm_omni.config import pipeline_registry as r
p = r.OMNI_PIPELINES[key]
print(json.dumps({"keys": sorted(r.OMNI_PIPELINES), "errors": r.VALIDATION[key],
    "stages": [[s.stage_id, list(s.input_sources), s.final_output, s.extras] for s in p.stages]}))
`
	for _, r := range registrationRows() {
		t.Run(r.Version, func(t *testing.T) {
			reg := mustPlan(t, Spec{Model: thinkingModel, VLLMOmniVersion: r.Version}).Registration
			path := filepath.Join(t.TempDir(), reg.Pipeline+".py")
			if err := os.WriteFile(path, []byte(reg.Content), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(python, "-m", "py_compile", path).CombinedOutput(); err != nil {
				t.Fatalf("py_compile: %v\n%s", err, out)
			}
			cmd := exec.Command(python, "-c", probe, path, reg.Pipeline)
			cmd.Env = append(os.Environ(), "PYTHONPATH="+standin, "PYTHONDONTWRITEBYTECODE=1")
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var got struct {
				Keys   []string
				Errors []string
				Stages [][]any
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			want := `[[0,[],false,{"is_prefill_only":true}],[1,[0],true,{"is_decode_only":true}]]`
			if stages, _ := json.Marshal(got.Stages); !slices.Equal(got.Keys, []string{reg.Pipeline}) || len(got.Errors) > 0 || string(stages) != want {
				t.Errorf("registered %v with problems %v and stages %s, want %s", got.Keys, got.Errors, stages, want)
			}
		})
	}
}

// The stand-in's StagePipelineConfig has the fields the newest release
// read has, in its order, so a module that names a field a release lacks
// fails against it as against the release.
func TestStandinRegistryFields(t *testing.T) {
	python := testtool.Need(t, "python3")
	cmd := exec.Command(python, "-c", "import dataclasses, json; from vllm_omni.config.stage_config import StagePipelineConfig as S; print(json.dumps([f.name for f in dataclasses.fields(S)]))")
	cmd.Env = append(os.Environ(), "PYTHONPATH="+standinRegistry, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var fields []string
	if err := json.Unmarshal(out, &fields); err != nil {
		t.Fatal(err)
	}
	if want := releases.Newest().Registry.StageFields; !slices.Equal(fields, want) {
		t.Errorf("the stand-in's fields\n  %q\nthe newest release's\n  %q", fields, want)
	}
}

// standinModules are the stand-in registry's files, by their path in a
// site directory, with a vllm_omni CLI whose main() records what it ran
// with at record: its argv, the pipelines registered, and whether a
// process multiprocessing spawns from it ran the launcher again.
func standinModules(t *testing.T, record string) map[string]string {
	t.Helper()
	files := map[string]string{
		"vllm_omni/config/__init__.py":          "",
		"vllm_omni/entrypoints/__init__.py":     "",
		"vllm_omni/entrypoints/cli/__init__.py": "",
		"vllm_omni/entrypoints/cli/main.py": `import json, multiprocessing, os, sys
from vllm_omni.config import pipeline_registry as r
def main():
    # vLLM's CLI spawns its engines: the child must not run the launcher.
    child = multiprocessing.get_context("spawn").Process(target=os.getpid)
    child.start()
    child.join()
    with open(` + strconvQuote(record) + `, "w") as f:
        json.dump({"argv": sys.argv, "pipelines": sorted(r.OMNI_PIPELINES), "child": child.exitcode}, f)
    return 0
`,
	}
	for _, name := range []string{"pipeline_registry.py", "stage_config.py"} {
		b, err := os.ReadFile(filepath.Join(standinRegistry, "vllm_omni", "config", name))
		if err != nil {
			t.Fatal(err)
		}
		files["vllm_omni/config/"+name] = string(b)
	}
	return files
}

// What a unit of a plan with a registration starts: the preflight, then
// its launcher in the same Python, which imports the registry and the
// module, checks the pipeline is registered with a PD pair, and runs
// vllm-omni's CLI with vllm's argv; every failure of that is one line and
// PreflightExit, so systemd does not restart it.
func TestPreflightLaunchesThroughTheRegistration(t *testing.T) {
	python := "/usr/bin/python3" // a path the units may run
	if _, err := os.Stat(python); err != nil {
		testtool.Need(t, "python3-in-/usr/bin")
	}
	const userModule = "my_pd"
	type run struct {
		spec   Spec
		module *string // the module file's text; nil for the plan's own, "" for none
		site   map[string]string
	}
	plain := func(s string) *string { return &s }
	noFlags := "from vllm_omni.config.pipeline_registry import register_pipeline\nfrom vllm_omni.config.stage_config import PipelineConfig, StagePipelineConfig\n" +
		"register_pipeline(PipelineConfig(model_type=__name__, stages=(StagePipelineConfig(0, 'thinker'), StagePipelineConfig(1, 'thinker', input_sources=(0,)))))\n"
	flags := strings.NewReplacer("'thinker')", "'thinker', extras={'is_prefill_only': True})", "(0,))", "(0,), extras={'is_decode_only': True})").Replace(noFlags)
	bridge := Spec{Model: thinkingModel, VLLMOmniVersion: "0.27.0rc1"}
	user := Spec{Model: thinkingModel, VLLMOmniVersion: "0.27.0rc1", Pipeline: userModule}
	tests := []struct {
		name   string
		run    run
		status int
		says   string
	}{
		{"the plan's registration", run{spec: bridge}, 0, ""},
		{"the user's registration, with the flags in extras", run{spec: user, module: plain(flags)}, 0, ""},
		{"the plan's registration missing", run{spec: bridge, module: plain("")}, PreflightExit, "vllm-omni preflight: error: the pipeline registration /"},
		{"another plan's registration", run{spec: bridge, module: plain(flags)}, PreflightExit, "which does not start with its name's"},
		{"no pipeline registry", run{spec: bridge, site: map[string]string{"vllm_omni/config/pipeline_registry.py": ""}}, PreflightExit,
			"vllm-omni's pipeline registry vllm_omni.config.pipeline_registry does not import"},
		{"a registry without OMNI_PIPELINES", run{spec: bridge, site: map[string]string{"vllm_omni/config/pipeline_registry.py": "def register_pipeline(p, model_type=None):\n    pass\n"}}, PreflightExit,
			"has no OMNI_PIPELINES dict"},
		{"the user's module missing", run{spec: user, module: plain("")}, PreflightExit, "the pipeline registration my_pd is neither a file there nor a module on Python's path"},
		{"the user's module without the flags in extras", run{spec: user, module: plain(noFlags)}, PreflightExit,
			"pipeline my_pd marks prefill stages [] and decode stages [] in its stages' extras"},
		{"the user's module registering another name", run{spec: user, module: plain(strings.Replace(flags, "model_type=__name__", "model_type='other'", 1))}, PreflightExit,
			"vllm-omni's registry holds no pipeline my_pd"},
		{"a field the release's dataclass lacks", run{spec: user, module: plain(strings.Replace(flags, "StagePipelineConfig(0, 'thinker'", "StagePipelineConfig(0, 'thinker', is_prefill_only=True", 1))}, PreflightExit,
			"got an unexpected keyword argument 'is_prefill_only'"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			record := filepath.Join(dir, "record.json")
			tc.run.spec.ConfigPath = "/etc/omni-test/deploy.yaml"
			tc.run.spec.Service = ServiceSpec{PythonPath: python}
			res := mustPlan(t, tc.run.spec)
			reg := res.Registration
			local := map[string]string{tc.run.spec.ConfigPath: filepath.Join(dir, "deploy.yaml"), reg.Path: filepath.Join(dir, filepath.Base(reg.Path)),
				DefaultVLLMPath: filepath.Join(dir, "vllm")}
			content := reg.Content
			if tc.run.module != nil {
				content = *tc.run.module
			}
			for path, text := range map[string]string{local[tc.run.spec.ConfigPath]: res.ConfigYAML, local[reg.Path]: content, local[DefaultVLLMPath]: "#!" + python + "\n"} {
				if text == "" {
					continue
				}
				if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			proc := res.Launches[0].Processes[0]
			argv := withLocalPaths(execArgv(proc, ServiceSpec{}), local)
			cmd := exec.Command(argv[0], argv[1:]...)
			site := standinModules(t, record)
			for k, v := range tc.run.site {
				site[k] = v
			}
			cmd.Env = append(preflightEnv(t, fakeSite(t, map[string]string{"vllm-omni": "0.27.0rc1", "vllm": "0.27.0"}, site), fakeGPUs(t, 1)), "PYTHONDONTWRITEBYTECODE=1")
			out, err := cmd.CombinedOutput()
			if status := testtool.ExitStatus(t, err); status != tc.status {
				t.Fatalf("status %d, want %d:\n%s", status, tc.status, out)
			}
			if tc.status != 0 {
				lines := strings.Split(strings.TrimSpace(string(out)), "\n")
				if len(lines) != 1 || !strings.Contains(lines[0], tc.says) {
					t.Errorf("want one line saying %q, got:\n%s", tc.says, out)
				}
				return
			}
			raw, err := os.ReadFile(record)
			if err != nil {
				t.Fatalf("vllm-omni's CLI did not run: %v\n%s", err, out)
			}
			var got struct {
				Argv      []string
				Pipelines []string
				Child     int
			}
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatal(err)
			}
			if want := withLocalPaths(proc.Argv, local); !slices.Equal(got.Argv[1:], want[1:]) || got.Argv[0] != local[DefaultVLLMPath] {
				t.Errorf("the CLI ran with %q, want vllm's own argv %q", got.Argv, want)
			}
			if !slices.Equal(got.Pipelines, []string{reg.Pipeline}) || got.Child != 0 {
				t.Errorf("registered %v (want %s); a spawned child exited %d\n%s", got.Pipelines, reg.Pipeline, got.Child, out)
			}
		})
	}
}
