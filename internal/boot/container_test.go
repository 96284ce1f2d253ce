package boot

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
)

// containerRelease is the release the container test's image stands in
// for.
const containerRelease = "0.24.0"

// containerStage is one process of a plan, run as its unit would run it
// in the release's image: its own container, named for its unit, on its
// machine's network and IPC, given exactly its GPUs.
type containerStage struct {
	name    string            // the container's name
	gpus    []int             // the host's GPU indices it is given
	env     map[string]string // its environment, as the plan computes it
	passEnv []string          // variables passed from the caller's environment (secrets)
	command []string          // in the container: the preflight, then vllm
}

// bindMount is a host path mounted at the same path in a container, so
// that an argv names one path on the host and in the container.
type bindMount struct {
	path     string
	readOnly bool
}

// runArgv is the `podman run` a unit's ExecStart carries for s, but for
// the runtime's own path: removed when it stops, replacing a container
// of its name left by a killed run, the image's init as PID 1 to reap
// vLLM's worker processes and pass signals on, the machine's network
// and IPC namespaces, one CDI device per GPU, the mounts, the
// environment, then the image and the command.
func (s containerStage) runArgv(image string, mounts []bindMount) []string {
	argv := []string{"run", "--rm", "--replace", "--name", s.name, "--init", "--network", "host", "--ipc", "host"}
	for _, g := range s.gpus {
		argv = append(argv, "--device", cdiKind+"="+strconv.Itoa(g))
	}
	for _, m := range mounts {
		v := m.path + ":" + m.path
		if m.readOnly {
			v += ":ro"
		}
		argv = append(argv, "--volume", v)
	}
	for _, k := range slices.Sorted(maps.Keys(s.env)) {
		argv = append(argv, "--env", k+"="+s.env[k])
	}
	for _, k := range s.passEnv {
		argv = append(argv, "--env", k)
	}
	return append(append(argv, image), s.command...)
}

// containerLocal is what the deploy config's devices become for a
// process in a container: its GPUs numbered from 0 in the host's order,
// as the driver numbers them in the container.
func containerLocal(gpus []int) string {
	local := make([]string, len(gpus))
	for i := range gpus {
		local[i] = strconv.Itoa(i)
	}
	return strings.Join(local, ",")
}

// TestContainerStages runs a stage-based pipeline of two processes the
// way units would run them in the release's image, with podman on one
// machine: the head (stage 0, host GPUs 2 and 3) and a headless stage
// (stage 1, host GPU 1) that takes its input from the head through
// /dev/shm. Each runs the preflight in its container, which checks the
// image's vllm-omni and vLLM, the deploy config and the GPUs the
// container was given, then execs vllm. The test checks that each
// container got exactly its argv, environment, mounts and devices, that
// the head answers once the headless stage has registered with it, and
// that a request passes through both. Then that an image of another
// release, and a container given fewer GPUs than its stage needs, fail
// the preflight with its status and one line.
func TestContainerStages(t *testing.T) {
	p := needPodman(t)
	r, problem := releases.Lookup(containerRelease)
	if problem != nil {
		t.Fatal(problem.Detail)
	}
	image := standinImage(t, p, r)
	p = p.engineFor(t, image)

	dir := t.TempDir()
	smi := filepath.Join(dir, "nvidia-smi")
	if err := os.WriteFile(smi, []byte(readStandin(t, "nvidia-smi")), 0o755); err != nil {
		t.Fatal(err)
	}
	fakeGPUs(t, 4, smi)
	const address = "10.20.0.11"
	netns := newLAN(t, "containers").host(address)

	head := containerStage{gpus: []int{2, 3}}
	headless := containerStage{gpus: []int{1}}
	config := filepath.Join(dir, "etc", "deploy.yaml")
	configYAML := fmt.Sprintf(`stages:
  - stage_id: 0
    runtime:
      devices: "%s"
  - stage_id: 1
    runtime:
      devices: "%s"
    engine_input_source: [0]
`, containerLocal(head.gpus), containerLocal(headless.gpus))
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
	mounts := []bindMount{{config, true}, {check, true}, {cache, false}}

	loader := ""
	for _, l := range r.Loaders {
		if l.Dialect == releases.Stages {
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
	env := func(stage string) map[string]string {
		return map[string]string{"HOME": cache, "HF_HOME": cache, "VLLM_HOST_IP": address,
			"CUDA_DEVICE_ORDER": "PCI_BUS_ID", "OMNI_TEST_STAGE": stage}
	}
	head.name, head.env, head.passEnv = prefix+"-stage-0", env("0"), []string{"HF_TOKEN"}
	head.command = append(append(append(preflight(r.Version, len(head.gpus)), serve...), "--stage-id", "0"), append(master, "--port", strconv.Itoa(apiPort))...)
	headless.name, headless.env, headless.passEnv = prefix+"-stage-1", env("1"), []string{"HF_TOKEN"}
	headless.command = append(append(append(preflight(r.Version, len(headless.gpus),
		"--head", address+":"+strconv.Itoa(masterPort), "--head-wait", "60", "--head-unit", "omni-stage@0.service"),
		serve...), "--stage-id", "1", "--headless"), master...)

	started := time.Now()
	logs := map[string]*containerLog{}
	for _, s := range []containerStage{headless, head} {
		logs[s.name] = startContainer(t, p, netns, s.runArgv(image, mounts))
	}
	url := fmt.Sprintf("http://%s:%d", address, apiPort)
	waitInNamespace(t, netns, "the head to serve "+model, 60*time.Second, logs, "python3", check, "ready", url+"/v1/models", model)
	t.Logf("both containers up and the head ready in %s", time.Since(started).Round(10*time.Millisecond))
	if out, err := inNamespace(netns, "python3", check, "smoke", url+"/v1/chat/completions", model, head.name); err != nil {
		t.Fatalf("a request through both stages: %v\n%s\n%s", err, out, dumpLogs(logs))
	}

	hostIPC, err := os.Readlink("/proc/self/ns/ipc")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []containerStage{head, headless} {
		checkContainer(t, p, s, image, mounts, cache, hostIPC)
	}

	t.Run("preflight", func(t *testing.T) {
		for _, c := range []struct {
			what  string
			stage containerStage
			want  string
		}{
			{"an image of another release", containerStage{name: prefix + "-wrong-release", gpus: []int{0},
				command: append(preflight("0.22.0", 1), serve...)}, "vllm-omni 0.24.0 is installed"},
			{"fewer GPUs than the stage needs", containerStage{name: prefix + "-few-gpus", gpus: []int{0},
				command: append(preflight(r.Version, 2), serve...)}, "this host has 1 GPU(s)"},
		} {
			cmd := p.command(netns, c.stage.runArgv(image, mounts)...)
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

// startContainer starts `podman argv` in the foreground in netns, as
// systemd starts a unit's ExecStart, with HF_TOKEN in its environment as
// a unit's EnvironmentFile gives it. The container is removed when the
// test ends.
func startContainer(t *testing.T, p podman, netns string, argv []string) *containerLog {
	t.Helper()
	name := argv[slices.Index(argv, "--name")+1]
	cmd := p.command(netns, argv...)
	cmd.Env = append(cmd.Env, "HF_TOKEN="+testToken)
	log := &containerLog{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatalf("podman %s: %v", strings.Join(argv, " "), err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = p.command("", "rm", "--force", "--time", "5", name).Run()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	return log
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

// checkContainer checks one running container against what its unit
// asked for: the runtime's record of its argv, its command, network,
// devices and mounts; what its processes see (GPUs, IPC namespace); and
// what vllm was given, recorded by the stand-in in the cache.
func checkContainer(t *testing.T, p podman, s containerStage, image string, mounts []bindMount, cache, hostIPC string) {
	t.Helper()
	var got []inspected
	if err := json.Unmarshal([]byte(p.must(t, "inspect", "--type", "container", s.name)), &got); err != nil || len(got) != 1 {
		t.Fatalf("%s: podman inspect: %v (%d containers)", s.name, err, len(got))
	}
	c := got[0]
	if want := append([]string{p.path}, s.runArgv(image, mounts)...); !slices.Equal(c.Config.CreateCommand, want) {
		t.Errorf("%s: created by\n%q\nwant\n%q", s.name, c.Config.CreateCommand, want)
	}
	if cmd := append([]string{c.Path}, c.Args...); !c.HostConfig.Init || !slices.Equal(cmd[len(cmd)-len(s.command):], s.command) {
		t.Errorf("%s: runs %q (init %v), want %q under the image's init", s.name, cmd, c.HostConfig.Init, s.command)
	}
	if c.HostConfig.NetworkMode != "host" {
		t.Errorf("%s: network %q, want host", s.name, c.HostConfig.NetworkMode)
	}
	var devices, want []string
	for _, d := range c.HostConfig.Devices {
		devices = append(devices, d.PathInContainer)
	}
	for _, g := range s.gpus {
		want = append(want, "/dev/nvidia"+strconv.Itoa(g))
	}
	if slices.Sort(devices); !slices.Equal(devices, want) {
		t.Errorf("%s: devices %q, want %q", s.name, devices, want)
	}
	for _, m := range mounts {
		i := slices.IndexFunc(c.Mounts, func(g inspectedMount) bool { return g.Destination == m.path })
		if i < 0 || c.Mounts[i].Source != m.path || c.Mounts[i].RW == m.readOnly {
			t.Errorf("%s: mounts %+v, want %s from the host, read-only %v", s.name, c.Mounts, m.path, m.readOnly)
		}
	}
	for k, v := range s.env {
		if !slices.Contains(c.Config.Env, k+"="+v) {
			t.Errorf("%s: environment %q lacks %s=%s", s.name, c.Config.Env, k, v)
		}
	}

	// What the processes in it see.
	smi := strings.Split(strings.TrimSpace(p.must(t, "exec", s.name, "nvidia-smi", "-L")), "\n")
	if len(smi) != len(s.gpus) || !strings.HasPrefix(smi[0], "GPU 0: ") {
		t.Errorf("%s: nvidia-smi -L lists\n%s\nwant its %d GPU(s), from GPU 0", s.name, strings.Join(smi, "\n"), len(s.gpus))
	}
	if ipc := strings.TrimSpace(p.must(t, "exec", s.name, "readlink", "/proc/self/ns/ipc")); ipc != hostIPC {
		t.Errorf("%s: IPC namespace %s, want the machine's, %s", s.name, ipc, hostIPC)
	}

	// What vllm was given, as the stand-in recorded it: the command after
	// the preflight's `--`, the unit's environment without the words the
	// preflight removes, the secret passed through, no device mask.
	stage := s.env["OMNI_TEST_STAGE"]
	b, err := os.ReadFile(filepath.Join(cache, "vllm-standin", "stage-"+stage+".json"))
	if err != nil {
		t.Fatalf("%s: the stand-in's record: %v", s.name, err)
	}
	var rec struct {
		Argv []string          `json:"argv"`
		Env  map[string]string `json:"env"`
		UID  int               `json:"uid"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	if want := s.command[slices.Index(s.command, "--")+1:]; !slices.Equal(rec.Argv, want) {
		t.Errorf("%s: vllm ran with %q, want %q", s.name, rec.Argv, want)
	}
	for k, v := range s.env {
		if rec.Env[k] != v {
			t.Errorf("%s: vllm's %s is %q, want %q", s.name, k, rec.Env[k], v)
		}
	}
	if rec.Env["HF_TOKEN"] != testToken {
		t.Errorf("%s: vllm's HF_TOKEN is %q, want the caller's", s.name, rec.Env["HF_TOKEN"])
	}
	if v, ok := rec.Env["CUDA_VISIBLE_DEVICES"]; ok {
		t.Errorf("%s: vllm inherits CUDA_VISIBLE_DEVICES=%s; in a container it must be unset", s.name, v)
	}
	if rec.UID != 0 {
		t.Errorf("%s: vllm runs as uid %d, want root as in the official image", s.name, rec.UID)
	}
}
