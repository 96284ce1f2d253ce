package boot

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnipd/terraform-provider-omni/internal/container"
	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

// containerRelease is the release the container test's image stands in
// for.
const containerRelease = "0.24.0"

// stageContainer is the container a unit of a container launch runs
// for one process, rendered by internal/container as the unit's would
// be: podman, its unit named as the plan names a stage's
// (<prefix>-stage@<id>.service, the container for it), the machine's
// network and IPC, exactly its GPUs as CDI devices, the mounts and the
// environment, the secret passed on by name.
func stageContainer(p podman, unit, image string, gpus []int, mounts []container.Mount, env []container.EnvVar, command []string) container.Spec {
	return container.Spec{
		Runtime: container.Podman, RuntimePath: p.path, Image: image,
		// The image is built here: there is no registry to pull from.
		Pull: container.PullNever,
		Name: container.NameFor(unit), Unit: unit, GPUs: gpus, GPUMode: container.CDI,
		Mounts: mounts, Env: env, PassEnv: []string{"HF_TOKEN"},
		// The plan's 1048576 open files is above this machine's hard
		// limit, and any --ulimit replaces the engine's default limits
		// (podman 4.3.1), which sandboxEngine sets where it must: the
		// container keeps the engine's.
		NoFile: 0,
		// A user's option, passed through.
		Options:     []string{"--label", standinLabel + ".stage=" + unit},
		StopTimeout: 5, Command: command,
	}
}

// localDevices is what the deploy config's devices become for a process
// that runs alone in its container: its GPUs as the container numbers
// them.
func localDevices(t *testing.T, gpus []int) string {
	t.Helper()
	local, err := container.LocalDevices(gpus, gpus)
	if err != nil {
		t.Fatal(err)
	}
	words := make([]string, len(local))
	for i, g := range local {
		words[i] = strconv.Itoa(g)
	}
	return strings.Join(words, ",")
}

// TestContainerStages runs a stage-based pipeline of two processes the
// way units would run them in the release's image, with podman on one
// machine: the head (stage 0, host GPUs 2 and 3) and a headless stage
// (stage 1, host GPU 1) that takes its input from the head through
// /dev/shm. Each runs the preflight in its container, which checks the
// image's vllm-omni and vLLM, the deploy config and the GPUs the
// container was given, then execs vllm. Each container is started,
// stopped and removed with the argv internal/container renders for its
// unit. The test checks that each
// container got exactly its argv, environment, mounts and devices, that
// the head answers once the headless stage has registered with it, and
// that a request passes through both. Then that an image of another
// release, and a container given fewer GPUs than its stage needs, fail
// the preflight with its status and one line.
func TestContainerStages(t *testing.T) {
	p, r, image, dir := containerHost(t, containerRelease)
	const address = "10.20.0.11"
	netns := newLAN(t, "containers").host(address)

	headGPUs, headlessGPUs := []int{2, 3}, []int{1}
	config := filepath.Join(dir, "etc", "deploy.yaml")
	configYAML := fmt.Sprintf(`stage_args:
  - stage_id: 0
    runtime:
      devices: "%s"
  - stage_id: 1
    runtime:
      devices: "%s"
    engine_input_source: [0]
`, localDevices(t, headGPUs), localDevices(t, headlessGPUs))
	check := filepath.Join(dir, "etc", "pd-check.py")
	cache := filepath.Join(dir, "cache")
	for path, content := range map[string]string{config: configYAML, check: pipeline.CheckScript} {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(configYAML))
	// At the paths the argv names, on the host and in the container.
	mounts := []container.Mount{{Source: config, Target: config, ReadOnly: true}, {Source: check, Target: check, ReadOnly: true},
		{Source: cache, Target: cache}}

	// The stage_args dialect, whose stages are the file's own: in the
	// stages dialect they are a registered pipeline's, which this
	// hand-made pair is not.
	loader := ""
	for _, l := range r.Loaders {
		if l.Dialect == releases.StageArgs {
			loader = l.Flag
		}
	}
	const model, masterPort, apiPort = "Qwen/Qwen2.5-Omni-7B", 25100, 25101
	// The test's own name for its containers: two runs at once, and a
	// machine's own containers, keep theirs.
	prefix := "omnitest-" + hex.EncodeToString(sum[:3]) + strconv.Itoa(os.Getpid())
	preflight := func(want string, gpus int, extra ...string) []string {
		argv := []string{officialPython, check, "preflight", want, "release", r.VLLM, config, hex.EncodeToString(sum[:]), "--gpus", strconv.Itoa(gpus)}
		return append(append(argv, extra...), "--")
	}
	serve := []string{officialVLLM, "serve", model, "--omni", loader, config}
	master := []string{"--omni-master-address", address, "--omni-master-port", strconv.Itoa(masterPort)}
	env := func(stage string) []container.EnvVar {
		return []container.EnvVar{{Name: "HOME", Value: cache}, {Name: "HF_HOME", Value: cache}, {Name: "VLLM_HOST_IP", Value: address},
			{Name: "CUDA_DEVICE_ORDER", Value: "PCI_BUS_ID"}, {Name: "OMNI_TEST_STAGE", Value: stage}}
	}
	unit := func(id string) string { return prefix + "-stage@" + id + ".service" }
	head := stageContainer(p, unit("0"), image, headGPUs, mounts, env("0"),
		append(append(append(preflight(r.Version, len(headGPUs)), serve...), "--stage-id", "0"), append(master, "--port", strconv.Itoa(apiPort))...))
	headless := stageContainer(p, unit("1"), image, headlessGPUs, mounts, env("1"),
		append(append(append(preflight(r.Version, len(headlessGPUs),
			"--head", address+":"+strconv.Itoa(masterPort), "--head-wait", "60", "--head-unit", unit("0")),
			serve...), "--stage-id", "1", "--headless"), master...))
	for _, s := range []container.Spec{head, headless} {
		if problems := container.Check(s); len(problems) > 0 {
			t.Fatalf("%s: %v", s.Unit, problems)
		}
	}

	started := time.Now()
	logs := map[string]*containerLog{}
	for _, s := range []container.Spec{headless, head} {
		logs[s.Name] = startContainer(t, p, netns, s)
	}
	url := fmt.Sprintf("http://%s:%d", address, apiPort)
	waitInNamespace(t, netns, "the head to serve "+model, 60*time.Second, logs, "python3", check, "ready", url+"/v1/models", model)
	t.Logf("both containers up and the head ready in %s", time.Since(started).Round(10*time.Millisecond))
	if out, err := inNamespace(netns, "python3", check, "smoke", url+"/v1/chat/completions", model, head.Name); err != nil {
		t.Fatalf("a request through both stages: %v\n%s\n%s", err, out, dumpLogs(logs))
	}

	hostIPC, err := os.Readlink("/proc/self/ns/ipc")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []container.Spec{head, headless} {
		checkContainer(t, p, wantOf(s), cache, hostIPC)
	}

	t.Run("preflight", func(t *testing.T) {
		for _, c := range []struct {
			what  string
			stage container.Spec
			want  string
		}{
			{"an image of another release", stageContainer(p, prefix+"-wrong-release.service", image, []int{0}, mounts, nil,
				append(preflight("0.22.0", 1), serve...)), "vllm-omni 0.24.0 is installed"},
			{"fewer GPUs than the stage needs", stageContainer(p, prefix+"-few-gpus.service", image, []int{0}, mounts, nil,
				append(preflight(r.Version, 2), serve...)), "this host has 1 GPU(s)"},
		} {
			t.Cleanup(func() { removeContainer(t, p, c.stage) })
			cmd := p.command(netns, container.RunArgv(c.stage)[1:]...)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != pipeline.PreflightExit {
				t.Errorf("%s: podman run ended with %v, want exit status %d:\n%s", c.what, err, pipeline.PreflightExit, out)
				continue
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != 1 || !strings.HasPrefix(lines[0], "vllm-omni preflight: error: ") || !strings.Contains(lines[0], c.want) {
				t.Errorf("%s: the preflight said\n%s\nwant one error line with %q", c.what, out, c.want)
			}
		}
	})
}

// containerHost sets this machine up to run containers of the stand-in
// image of a release: podman as the machine needs it, the image, a
// directory of the test's own, and four GPUs declared by a fake CDI spec.
func containerHost(t *testing.T, release string) (p podman, r releases.Release, image, dir string) {
	t.Helper()
	p = needPodman(t)
	r, problem := releases.Lookup(release)
	if problem != nil {
		t.Fatal(problem.Detail)
	}
	image = standinImage(t, p, r)
	p = p.engineFor(t, image)
	dir = t.TempDir()
	smi := filepath.Join(dir, "nvidia-smi")
	if err := os.WriteFile(smi, []byte(readStandin(t, "nvidia-smi")), 0o755); err != nil {
		t.Fatal(err)
	}
	fakeGPUs(t, 4, smi)
	return p, r, image, dir
}

// containerLog is what a container's podman run printed.
type containerLog struct {
	mu  sync.Mutex
	out strings.Builder
}

func (l *containerLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.out.Write(b)
}

func (l *containerLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.out.String()
}

// startContainer starts s's container in netns as its unit would, with
// the commands internal/container renders for it: the unit's
// ExecStartPre= removes a container ID file left behind, ExecStart= runs
// podman in the foreground, ExecStop= stops the container and
// ExecStopPost= removes it.
func startContainer(t *testing.T, p podman, netns string, s container.Spec) *containerLog {
	t.Helper()
	return startUnit(t, p, netns, specCommands(s), time.Duration(s.StopTimeout+25)*time.Second)
}

// specCommands are the commands of the unit that runs s's container.
func specCommands(s container.Spec) unitCommands {
	return unitCommands{unit: s.Unit, start: container.RunArgv(s),
		pre:  []unitCommand{{argv: []string{"/bin/rm", "-f", "/run/" + s.Unit + ".ctr-id"}}},
		stop: []unitCommand{{argv: container.StopArgv(s)}}, post: []unitCommand{{argv: container.RemoveArgv(s), ignore: true}}}
}

// startUnit runs a unit's commands in netns as systemd would: each
// ExecStartPre=, then ExecStart= in the background with HF_TOKEN in its
// environment, as a unit's EnvironmentFile gives it. When the test ends
// it runs ExecStop=, which must end ExecStart= within stopWait, then
// ExecStopPost=.
func startUnit(t *testing.T, p podman, netns string, u unitCommands, stopWait time.Duration) *containerLog {
	t.Helper()
	for _, c := range u.pre {
		if out, err := p.commandFor(netns, c.argv, u.env).CombinedOutput(); err != nil && !c.ignore {
			t.Fatalf("%s: ExecStartPre=%s: %v\n%s", u.unit, strings.Join(c.argv, " "), err, out)
		}
	}
	cmd := p.commandFor(netns, u.start, append(u.env, "HF_TOKEN="+testToken))
	log := &containerLog{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", strings.Join(u.start, " "), err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		defer removeIDFile(t, u.unit)
		defer stopUnit(t, p, u.unit, u.post, u.env)
		stopUnit(t, p, u.unit, u.stop, u.env)
		select {
		case <-done:
		case <-time.After(stopWait):
			t.Errorf("%s: podman run still runs after the container was stopped", u.unit)
			_ = cmd.Process.Kill()
		}
	})
	return log
}

// stopUnit runs a unit's stop commands, ExecStop= or ExecStopPost=.
func stopUnit(t *testing.T, p podman, unit string, commands []unitCommand, env []string) {
	t.Helper()
	for _, c := range commands {
		if out, err := p.commandFor("", c.argv, env).CombinedOutput(); err != nil && !c.ignore {
			t.Errorf("%s: %s: %v\n%s", unit, strings.Join(c.argv, " "), err, out)
		}
	}
}

// removeContainer removes s's container, whether it runs or not, by its
// ID file, as its unit's ExecStopPost= would, then the file.
func removeContainer(t *testing.T, p podman, s container.Spec) {
	t.Helper()
	rm := container.RemoveArgv(s)
	if out, err := p.command("", rm[1:]...).CombinedOutput(); err != nil {
		t.Errorf("%s: %v\n%s", strings.Join(rm, " "), err, out)
	}
	removeIDFile(t, s.Unit)
}

// removeIDFile removes the container ID file podman writes for a unit
// (/run/<unit>.ctr-id), which the unit's next ExecStartPre= would: the
// test leaves none behind.
func removeIDFile(t *testing.T, unit string) {
	t.Helper()
	if err := os.Remove("/run/" + unit + ".ctr-id"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Error(err)
	}
}

// testToken is the secret the units' environment file would hold.
const testToken = "hf_container_test_token"

// waitInNamespace runs a command in netns until it succeeds, or fails the
// test with its last output and every container's after timeout.
func waitInNamespace(t *testing.T, netns, what string, timeout time.Duration, logs map[string]*containerLog, args ...string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		out, err := inNamespace(netns, args...)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s: %v\n%s\n%s", timeout, what, err, out, dumpLogs(logs))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func dumpLogs(logs map[string]*containerLog) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(logs)) {
		fmt.Fprintf(&b, "--- %s:\n%s\n", name, logs[name])
	}
	return b.String()
}

// inspected is what the test reads of `podman inspect`.
type inspected struct {
	Path   string   `json:"Path"`
	Args   []string `json:"Args"`
	Config struct {
		CreateCommand []string `json:"CreateCommand"`
		Env           []string `json:"Env"`
	} `json:"Config"`
	HostConfig struct {
		NetworkMode string `json:"NetworkMode"`
		Init        bool   `json:"Init"`
		Devices     []struct {
			PathInContainer string `json:"PathInContainer"`
		} `json:"Devices"`
	} `json:"HostConfig"`
	Mounts []inspectedMount `json:"Mounts"`
}

type inspectedMount struct {
	Source      string `json:"Source"`
	Destination string `json:"Destination"`
	RW          bool   `json:"RW"`
}

// containerWant is what a running container must show of its unit: the
// argv the runtime was given, the command after the image, the host's
// GPUs it asked for, its mounts and environment, and the name of the
// record the stand-in vllm writes in the cache.
type containerWant struct {
	name    string
	argv    []string
	command []string
	gpus    []int
	mounts  []container.Mount
	env     []container.EnvVar
	record  string
}

// wantOf is what s's container must show; its stand-in records under the
// stage OMNI_TEST_STAGE names.
func wantOf(s container.Spec) containerWant {
	stage := s.Env[slices.IndexFunc(s.Env, func(e container.EnvVar) bool { return e.Name == "OMNI_TEST_STAGE" })].Value
	return containerWant{name: s.Name, argv: container.RunArgv(s), command: s.Command, gpus: s.GPUs, mounts: s.Mounts, env: s.Env, record: "stage-" + stage}
}

// checkContainer checks one running container against what its unit
// asked for: the runtime's record of its argv, its command, network,
// devices and mounts; what its processes see (GPUs, IPC namespace); and
// what vllm was given, recorded by the stand-in in the cache.
func checkContainer(t *testing.T, p podman, w containerWant, cache, hostIPC string) {
	t.Helper()
	var got []inspected
	if err := json.Unmarshal([]byte(p.must(t, "inspect", "--type", "container", w.name)), &got); err != nil || len(got) != 1 {
		t.Fatalf("%s: podman inspect: %v (%d containers)", w.name, err, len(got))
	}
	c := got[0]
	if !slices.Equal(c.Config.CreateCommand, w.argv) {
		t.Errorf("%s: created by\n%q\nwant\n%q", w.name, c.Config.CreateCommand, w.argv)
	}
	if cmd := append([]string{c.Path}, c.Args...); !c.HostConfig.Init || len(cmd) < len(w.command) || !slices.Equal(cmd[len(cmd)-len(w.command):], w.command) {
		t.Errorf("%s: runs %q (init %v), want %q under the image's init", w.name, cmd, c.HostConfig.Init, w.command)
	}
	if c.HostConfig.NetworkMode != "host" {
		t.Errorf("%s: network %q, want host", w.name, c.HostConfig.NetworkMode)
	}
	var devices, want []string
	for _, d := range c.HostConfig.Devices {
		devices = append(devices, d.PathInContainer)
	}
	for _, g := range w.gpus {
		want = append(want, "/dev/nvidia"+strconv.Itoa(g))
	}
	if slices.Sort(devices); !slices.Equal(devices, want) {
		t.Errorf("%s: devices %q, want %q", w.name, devices, want)
	}
	for _, m := range w.mounts {
		i := slices.IndexFunc(c.Mounts, func(g inspectedMount) bool { return g.Destination == m.Target })
		if i < 0 || c.Mounts[i].Source != m.Source || c.Mounts[i].RW == m.ReadOnly {
			t.Errorf("%s: mounts %+v, want %s from the host's %s, read-only %v", w.name, c.Mounts, m.Target, m.Source, m.ReadOnly)
		}
	}
	for _, e := range w.env {
		if !slices.Contains(c.Config.Env, e.Name+"="+e.Value) {
			t.Errorf("%s: environment %q lacks %s=%s", w.name, c.Config.Env, e.Name, e.Value)
		}
	}

	// What the processes in it see.
	smi := strings.Split(strings.TrimSpace(p.must(t, "exec", w.name, "nvidia-smi", "-L")), "\n")
	if len(smi) != len(w.gpus) || !strings.HasPrefix(smi[0], "GPU 0: ") {
		t.Errorf("%s: nvidia-smi -L lists\n%s\nwant its %d GPU(s), from GPU 0", w.name, strings.Join(smi, "\n"), len(w.gpus))
	}
	if ipc := strings.TrimSpace(p.must(t, "exec", w.name, "readlink", "/proc/self/ns/ipc")); ipc != hostIPC {
		t.Errorf("%s: IPC namespace %s, want the machine's, %s", w.name, ipc, hostIPC)
	}
	checkRecord(t, w, cache)
}

// checkRecord checks what vllm was given in w's container, as the
// stand-in recorded it: the command after the preflight's `--`, the
// container's environment, the secret passed through by name, no device
// mask, root as in the official image.
func checkRecord(t *testing.T, w containerWant, cache string) {
	t.Helper()
	rec := readRecord(t, w, cache)
	if want := w.command[slices.Index(w.command, "--")+1:]; !slices.Equal(rec.Argv, want) {
		t.Errorf("%s: vllm ran with %q, want %q", w.name, rec.Argv, want)
	}
	for _, e := range w.env {
		if rec.Env[e.Name] != e.Value {
			t.Errorf("%s: vllm's %s is %q, want %q", w.name, e.Name, rec.Env[e.Name], e.Value)
		}
	}
	if rec.Env["HF_TOKEN"] != testToken {
		t.Errorf("%s: vllm's HF_TOKEN is %q, want the caller's", w.name, rec.Env["HF_TOKEN"])
	}
	if v, ok := rec.Env["CUDA_VISIBLE_DEVICES"]; ok {
		t.Errorf("%s: vllm inherits CUDA_VISIBLE_DEVICES=%s; in a container it must be unset", w.name, v)
	}
	if rec.UID != 0 {
		t.Errorf("%s: vllm runs as uid %d, want root as in the official image", w.name, rec.UID)
	}
}

// standinRecord is what the stand-in vllm recorded of itself: its argv,
// environment, process ID (in its container) and user.
type standinRecord struct {
	Argv []string          `json:"argv"`
	Env  map[string]string `json:"env"`
	PID  int               `json:"pid"`
	UID  int               `json:"uid"`
}

// readRecord reads the record the stand-in vllm of w's container wrote in
// the cache.
func readRecord(t *testing.T, w containerWant, cache string) standinRecord {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(cache, "vllm-standin", w.record+".json"))
	if err != nil {
		t.Fatalf("%s: the stand-in's record: %v", w.name, err)
	}
	var rec standinRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return rec
}
