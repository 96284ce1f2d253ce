package boot

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnipd/terraform-provider-omni/internal/container"
	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// planModel is the model the container plan serves: the default pipeline
// of four stages, prefill and decode joined by NIXL.
const planModel = "Qwen/Qwen3-Omni-30B-A3B-Instruct"

// TestContainerPlan runs the containers of a real plan's units with
// podman: the planner's template and drop-ins, each instance's commands
// read as systemd reads them (ExecStartPre=, ExecStart=, and at the end
// ExecStop= and ExecStopPost=), run as they are, the head first as its
// headless stages are ordered after it. Every container must get exactly
// the argv, environment, mounts and GPUs (host indices as CDI devices,
// from a fake spec) its unit says; its preflight passes against the
// stand-in image; the head answers once its headless stages registered
// with it, and a request crosses the stages. The deploy config is the
// plan's, with devices as each container numbers them.
func TestContainerPlan(t *testing.T) {
	p, _, image, dir := containerHost(t, containerRelease)
	netns := newLAN(t, "plan").host("10.20.0.12")
	spec := containerPlanSpec(p, image, dir, planModel, containerRelease)
	runContainerPlan(t, p, netns, spec)

	// The same image under a plan for another release: its unit's
	// container fails its preflight, with the status that keeps the unit
	// from restarting and one line.
	t.Run("another release's image", func(t *testing.T) {
		other := spec
		other.VLLMOmniVersion, other.Service.UnitPrefix, other.ConfigPath = "0.22.0", spec.Service.UnitPrefix+"x", filepath.Join(dir, "etc", "other.yaml")
		res, ds := pipeline.Plan(other)
		if res == nil || ds.HasErrors() {
			t.Fatalf("the plan: %v", ds)
		}
		writeFiles(t, map[string]string{other.ConfigPath: res.ConfigYAML})
		headFailsOnce(t, p, netns, res, headUnit(t, res), "vllm-omni 0.24.0 is installed")
	})
}

// containerPlanSpec is a plan of model on release whose units run the
// stand-in image with podman, its files in dir and its units named for
// this test run.
func containerPlanSpec(p podman, image, dir, model, release string) pipeline.Spec {
	return pipeline.Spec{Model: model, VLLMOmniVersion: release, ConfigPath: filepath.Join(dir, "etc", "deploy-config.yaml"),
		Service: pipeline.ServiceSpec{CacheDir: filepath.Join(dir, "cache"), CheckScriptPath: filepath.Join(dir, "etc", "pd-check.py"),
			UnitPrefix: fmt.Sprintf("omniplan%d", os.Getpid()), HeadWaitSeconds: ptr(60)},
		Container: &pipeline.ContainerSpec{Runtime: "podman", RuntimePath: p.path, Image: image, Pull: "never"}}
}

// plannedRun is a container plan running: the plan, what each process's
// container must show (the head first) and what each printed, by
// container name.
type plannedRun struct {
	res   *pipeline.Result
	wants []containerWant
	logs  map[string]*containerLog
}

// runContainerPlan plans spec, writes the files the plan's hosts keep (the
// deploy config, the check script and the pipeline registration if it
// writes one), starts each process's unit in netns as systemd would, and
// checks the run: the head answers and a request crosses the stages,
// every container is what its unit says, and every headless stage
// registered with the head. The units stop when the test ends.
func runContainerPlan(t *testing.T, p podman, netns string, spec pipeline.Spec) plannedRun {
	t.Helper()
	res, ds := pipeline.Plan(spec)
	if res == nil || len(ds) > 0 {
		t.Fatalf("the plan: %v", ds)
	}
	files := map[string]string{spec.ConfigPath: res.ConfigYAML, spec.Service.CheckScriptPath: pipeline.CheckScript}
	if reg := res.Registration; reg != nil {
		files[reg.Path] = reg.Content
	}
	writeFiles(t, files)
	// The cache is not made here: the units make it (ExecStartPre=, the
	// test's cache lying outside /var/cache), and podman refuses to mount a
	// missing one.
	if _, err := os.Stat(spec.Service.CacheDir); err == nil {
		t.Fatalf("%s exists before the units run", spec.Service.CacheDir)
	}

	started := time.Now()
	run := plannedRun{res: res, logs: map[string]*containerLog{}}
	for _, proc := range res.Launches[0].Processes {
		u := readUnitCommands(t, proc.UnitName, res.SystemdUnit.Content, proc.DropIn.Content)
		w := planWant(t, spec, res.Registration, proc, u)
		run.logs[w.name] = startUnit(t, p, netns, u, 140*time.Second)
		run.wants = append(run.wants, w)
	}
	url := "http://127.0.0.1:" + strconv.Itoa(res.APIPort)
	waitInNamespace(t, netns, "the head to serve "+spec.Model, 90*time.Second, run.logs, "python3", spec.Service.CheckScriptPath, "ready", url+"/v1/models", spec.Model)
	t.Logf("%d containers of the plan for vllm-omni %s up and the head ready in %s", len(run.wants), res.Release, time.Since(started).Round(10*time.Millisecond))
	if out, err := inNamespace(netns, "python3", spec.Service.CheckScriptPath, "smoke", url+"/v1/chat/completions", spec.Model, run.wants[0].name); err != nil {
		t.Fatalf("a request through the stages: %v\n%s\n%s", err, out, dumpLogs(run.logs))
	}

	hostIPC, err := os.Readlink("/proc/self/ns/ipc")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range run.wants {
		checkContainer(t, p, w, spec.Service.CacheDir, hostIPC)
	}
	for _, w := range run.wants[1:] {
		if !strings.Contains(run.logs[w.name].String(), "registered with the omni master") {
			t.Errorf("%s did not register with the head:\n%s", w.name, run.logs[w.name])
		}
	}
	return run
}

// headUnit is the commands of the unit of res's head: the first process
// of its first launch.
func headUnit(t *testing.T, res *pipeline.Result) unitCommands {
	t.Helper()
	proc := res.Launches[0].Processes[0]
	dropin := ""
	if proc.DropIn != nil {
		dropin = proc.DropIn.Content
	}
	return readUnitCommands(t, proc.UnitName, res.SystemdUnit.Content, dropin)
}

// headFailsOnce runs u, the head's unit of res, once: its container must
// fail the preflight with the status that keeps the unit from
// restarting (res's RestartPreventExitStatus=), and one line that says
// want.
func headFailsOnce(t *testing.T, p podman, netns string, res *pipeline.Result, u unitCommands, want string) {
	t.Helper()
	t.Cleanup(func() {
		stopUnit(t, p, u.unit, u.post, u.env)
		removeIDFile(t, u.unit)
	})
	out, err := p.commandFor(netns, u.start, u.env).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != pipeline.PreflightExit || !strings.Contains(restartPrevented(res.SystemdUnit.Content), " "+strconv.Itoa(pipeline.PreflightExit)+" ") {
		t.Fatalf("podman run ended with %v, want exit status %d, which the unit does not restart after:\n%s", err, pipeline.PreflightExit, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "vllm-omni preflight: error: ") || !strings.Contains(lines[0], want) {
		t.Errorf("the preflight said\n%s\nwant one error line with %q", out, want)
	}
	t.Logf("%s refused once, status %d: %s", u.unit, exit.ExitCode(), lines[0])
}

// restartPrevented is a unit's RestartPreventExitStatus= value, with a
// blank on each side.
func restartPrevented(unit string) string {
	for _, line := range strings.Split(unit, "\n") {
		if v, ok := strings.CutPrefix(line, "RestartPreventExitStatus="); ok {
			return " " + v + " "
		}
	}
	return ""
}

// planWant is what proc's container must show, from the plan: its unit's
// argv as systemd reads it, the command after the image, the process's
// GPUs, the plan's mounts at their own paths (the pipeline registration
// reg read-only among them, when the plan has one), and the cache, the
// device order and the stage's environment.
func planWant(t *testing.T, spec pipeline.Spec, reg *pipeline.Registration, proc pipeline.Process, u unitCommands) containerWant {
	t.Helper()
	image := spec.Container.Image
	at := slices.Index(u.start, image)
	if at < 0 || u.start[0] != spec.Container.RuntimePath || u.start[1] != "run" {
		t.Fatalf("%s: ExecStart= does not run the image with podman: %q", proc.UnitName, u.start)
	}
	cache := spec.Service.CacheDir
	w := containerWant{name: container.NameFor(proc.UnitName), argv: u.start, command: u.start[at+1:], gpus: proc.Devices,
		mounts: []container.Mount{{Source: spec.ConfigPath, Target: spec.ConfigPath, ReadOnly: true},
			{Source: spec.Service.CheckScriptPath, Target: spec.Service.CheckScriptPath, ReadOnly: true}, {Source: cache, Target: cache}},
		env:    []container.EnvVar{{Name: "HOME", Value: cache}, {Name: "HF_HOME", Value: cache}, {Name: "CUDA_DEVICE_ORDER", Value: "PCI_BUS_ID"}},
		record: "stage-" + strconv.Itoa(*proc.StageID)}
	if reg != nil {
		w.mounts = append(w.mounts, container.Mount{Source: reg.Path, Target: reg.Path, ReadOnly: true})
	}
	for k, v := range proc.Env {
		w.env = append(w.env, container.EnvVar{Name: k, Value: v})
	}
	if want := append([]string{pipeline.ImagePythonPath, spec.Service.CheckScriptPath, "preflight"}, w.command[3:slices.Index(w.command, "--")]...); !slices.Equal(w.command[:len(want)], want) ||
		w.command[slices.Index(w.command, "--")+1] != pipeline.ImageVLLMPath || !slices.Equal(w.command[slices.Index(w.command, "--")+2:], proc.Argv[1:]) {
		t.Errorf("%s: the container runs %q, want the image's Python with the preflight, then the image's vllm with %q", proc.UnitName, w.command, proc.Argv[1:])
	}
	return w
}

// writeFiles writes each file, its directory made.
func writeFiles(t *testing.T, files map[string]string) {
	t.Helper()
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func ptr[T any](v T) *T { return &v }
