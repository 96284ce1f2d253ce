package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/container"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// containerGoldenCases are plans that run each process in a container of
// the release's image, pinned like goldenCases.
func containerGoldenCases() []goldenCase {
	return []goldenCase{
		// The default plan in the official image with docker, the default
		// runtime: NVIDIA's runtime asks for each stage's GPU.
		{"container_docker", func(*testing.T) Spec { return Spec{Model: seedModel, Container: &ContainerSpec{}} }},
		// Two hosts with podman and CDI, a mirror of the image, a mount and
		// an option of the user's.
		{"container_podman", func(*testing.T) Spec {
			return Spec{Model: seedModel, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2", Devices: []int{3}},
				Container: &ContainerSpec{Runtime: "podman", Image: "registry.example:5000/vllm/vllm-omni:v0.24.0",
					Mounts:  []container.Mount{{Source: "/srv/models", Target: "/models", ReadOnly: true}},
					Options: []string{"--security-opt", "label=disable"}}}
		}},
		// A stages-only release: the registration the launcher imports is
		// mounted read-only beside the check script.
		{"container_registration_0.27.0rc1", func(*testing.T) Spec {
			return Spec{Model: thinkingModel, VLLMOmniVersion: "0.27.0rc1", Container: &ContainerSpec{Runtime: "podman"}}
		}},
	}
}

// In a container, the launcher can import the registration only if the
// container sees it: every process's ExecStart mounts it read-only at the
// path its --registration names.
func TestContainerMountsTheRegistration(t *testing.T) {
	res := mustPlan(t, Spec{Model: thinkingModel, VLLMOmniVersion: "0.27.0rc1", Container: &ContainerSpec{}})
	if res.Registration == nil || res.Registration.Path == "" {
		t.Fatal("no registration planned")
	}
	mount := "--volume " + res.Registration.Path + ":" + res.Registration.Path + ":ro"
	n := 0
	for _, l := range res.Launches {
		for _, proc := range l.Processes {
			n++
			if proc.DropIn == nil || !strings.Contains(proc.DropIn.Content, mount) {
				t.Errorf("%s does not mount the registration (%s):\n%v", proc.UnitName, mount, proc.DropIn)
			}
		}
	}
	if n < 2 {
		t.Fatalf("%d processes, want the PD pair's two", n)
	}
}

func TestContainerGolden(t *testing.T) {
	for _, tc := range containerGoldenCases() {
		t.Run(tc.name, func(t *testing.T) { checkGolden(t, tc) })
	}
}

// A container plan's deploy config is the host plan's with each stage's
// devices numbered as its container numbers them: its own GPUs from 0, in
// ascending host order. Put back, the host's indices give the host plan's
// config byte for byte, which Check passes.
func TestContainerConfigIsTheHostsLocalized(t *testing.T) {
	for _, tc := range append(containerGoldenCases(), goldenCase{"whole pipeline", func(*testing.T) Spec {
		return Spec{Model: seedModel, VLLMOmniVersion: "0.22.0", Prefill: RoleSpec{Devices: []int{3}}, Container: &ContainerSpec{}}
	}}) {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec(t)
			inContainer := mustPlan(t, spec)
			spec.Container = nil
			onHost := mustPlan(t, spec)
			doc, err := stageconfig.Parse([]byte(inContainer.ConfigYAML))
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range doc.Stages() {
				id, _ := st.ID()
				local, _, err := st.Devices()
				if err != nil {
					t.Fatal(err)
				}
				host, gpus := stageDevices(t, onHost, id)
				if want, _ := container.LocalDevices(gpus, host); !slices.Equal(local, want) {
					t.Errorf("stage %d: devices %v in the container's config, want %v (host %v of %v)", id, local, want, host, gpus)
				}
				st.SetDevices(host)
			}
			back, err := doc.Render()
			if err != nil {
				t.Fatal(err)
			}
			if string(back) != onHost.ConfigYAML {
				t.Errorf("with the host's devices the config is not the host plan's:\n%s", lineDiff(onHost.ConfigYAML, string(back)))
			}
			if inContainer.ConfigSHA256 == onHost.ConfigSHA256 && inContainer.ConfigYAML != onHost.ConfigYAML {
				t.Error("two configs, one SHA-256")
			}
		})
	}
}

// stageDevices are a stage's host devices in res, and the GPUs of the
// process that runs it.
func stageDevices(t *testing.T, res *Result, id int) (stage, process []int) {
	t.Helper()
	for _, s := range res.Stages {
		if s.StageID != id {
			continue
		}
		for _, l := range res.Launches {
			for _, p := range l.Processes {
				if slices.Contains(l.StageIDs, id) && (p.StageID == nil || *p.StageID == id) {
					return s.Devices, p.Devices
				}
			}
		}
	}
	t.Fatalf("no stage %d", id)
	return nil, nil
}

// Each process's container is one container.Check passes, asking for
// exactly the process's GPUs and running its preflight, which counts the
// GPUs the container numbers from 0, then vllm; its unit's ExecStart= is
// the container's run line.
func TestContainerProcesses(t *testing.T) {
	for _, tc := range containerGoldenCases() {
		res := mustPlan(t, tc.spec(t))
		for _, l := range res.Launches {
			for _, p := range l.Processes {
				run := p.run
				if problems := container.Check(*run); len(problems) > 0 {
					t.Errorf("%s %s: %v", tc.name, p.UnitName, problems)
				}
				if !slices.Equal(run.GPUs, p.Devices) || !slices.Equal(run.Command, p.exec) || run.Name != container.NameFor(p.UnitName) {
					t.Errorf("%s %s: GPUs %v, name %s, command %q; want %v, %s, %q", tc.name, p.UnitName, run.GPUs, run.Name, run.Command, p.Devices, container.NameFor(p.UnitName), p.exec)
				}
				gpus := run.Command[slices.Index(run.Command, "--gpus")+1]
				if gpus != strconv.Itoa(len(p.Devices)) || run.Command[0] != ImagePythonPath || run.Command[slices.Index(run.Command, "--")+1] != ImageVLLMPath {
					t.Errorf("%s %s: runs %q, want the image's Python, --gpus %d and the image's vllm", tc.name, p.UnitName, run.Command, len(p.Devices))
				}
				line, err := container.ExecStart(*run)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(p.DropIn.Content, "\nExecStart="+line+"\n") {
					t.Errorf("%s %s: the drop-in does not run its container:\n%s", tc.name, p.UnitName, p.DropIn.Content)
				}
				for _, secret := range secretNames {
					if !slices.Contains(run.PassEnv, secret) || strings.Contains(p.DropIn.Content, secret+"=") {
						t.Errorf("%s %s: %s is not passed by name alone", tc.name, p.UnitName, secret)
					}
				}
			}
		}
		if strings.Contains(res.SystemdUnit.Content, "User=") || strings.Contains(res.SystemdUnit.Content, "ExecStart=") {
			t.Errorf("%s: the container template runs as a User= or holds an ExecStart=:\n%s", tc.name, res.SystemdUnit.Content)
		}
	}
}

// What a container launch defaults to: docker, at /usr/bin/docker, with
// NVIDIA's runtime, or podman with CDI; the release's image, pulled when
// missing; the image's vllm and Python.
func TestContainerDefaults(t *testing.T) {
	for _, c := range []struct {
		given ContainerSpec
		want  ContainerSpec
	}{
		{ContainerSpec{}, ContainerSpec{Image: "docker.io/vllm/vllm-omni:v0.24.0", Runtime: "docker", RuntimePath: "/usr/bin/docker", GPUs: "nvidia_runtime", Pull: "missing"}},
		{ContainerSpec{Runtime: "podman"}, ContainerSpec{Image: "docker.io/vllm/vllm-omni:v0.24.0", Runtime: "podman", RuntimePath: "/usr/bin/podman", GPUs: "cdi", Pull: "missing"}},
		{ContainerSpec{Runtime: "docker", GPUs: "cdi", RuntimePath: "/usr/local/bin/docker", Pull: "never", Image: "img:v1"},
			ContainerSpec{Image: "img:v1", Runtime: "docker", RuntimePath: "/usr/local/bin/docker", GPUs: "cdi", Pull: "never"}},
	} {
		if got := c.given.withDefaults("0.24.0"); !equalContainerSpecs(got, c.want) {
			t.Errorf("%+v: %+v, want %+v", c.given, got, c.want)
		}
	}
	svc := Spec{Container: &ContainerSpec{}}.service().withDefaults()
	if svc.VLLMPath != ImageVLLMPath || svc.PythonPath != ImagePythonPath {
		t.Errorf("in the image vllm is %s and Python %s, want %s and %s", svc.VLLMPath, svc.PythonPath, ImageVLLMPath, ImagePythonPath)
	}
	if host := (Spec{}).service().withDefaults(); host.PythonPath != "python3" {
		t.Errorf("on a host Python defaults to %s", host.PythonPath)
	}
}

func equalContainerSpecs(a, b ContainerSpec) bool {
	return a.Image == b.Image && a.Runtime == b.Runtime && a.RuntimePath == b.RuntimePath && a.GPUs == b.GPUs && a.Pull == b.Pull &&
		slices.Equal(a.Mounts, b.Mounts) && slices.Equal(a.Options, b.Options)
}

// Every problem of the container block comes in one plan, each at its
// attribute, with the other inputs' problems; warnings leave the plan.
func TestContainerDiagnostics(t *testing.T) {
	bad := Spec{Model: seedModel, Prefill: RoleSpec{TensorParallelSize: ptr(2)}, ConfigPath: "/etc/vllm-omni/a:b.yaml",
		Container: &ContainerSpec{Runtime: "lxc", Image: "Vllm/Omni", Pull: "sometimes", GPUs: "all",
			Mounts: []container.Mount{{Source: "relative", Target: "/data"}, {Source: "/srv/cache", Target: DefaultCacheDir},
				{Source: "/a", Target: "/data"}},
			Options: []string{"--network", "bridge", "--env", "HF_HOME=/tmp", "--env", "CUDA_VISIBLE_DEVICES=0", "stray"}}}
	_, ds := Plan(bad)
	for _, want := range []struct{ code, path string }{
		{"container_invalid", "container.runtime"},
		{"container_invalid", "container.image"},
		{"container_invalid", "container.pull"},
		{"container_invalid", "container.gpus"},
		{"container_invalid", "container.mounts[0].source"},
		{"container_invalid", "container.mounts[1].target"},
		{"container_invalid", "container.mounts[2].target"},
		{"container_invalid", "container.options[0]"},
		{"container_invalid", "container.options[2]"},
		{"container_invalid", "container.options[4]"},
		{"container_invalid", "container.options[6]"},
		{"container_invalid", "config_path"},
		{"tp_mismatch", "decode.tensor_parallel_size"},
	} {
		if !hasCode(ds, want.code, want.path) {
			t.Errorf("no %s at %s in:\n%s", want.code, want.path, describeDiags(ds))
		}
	}

	warned := Spec{Model: seedModel, Service: ServiceSpec{User: "omni"}, Container: &ContainerSpec{Image: "vllm/vllm-omni:v0.22.0"}}
	res, ds := Plan(warned)
	if res == nil || !hasCode(ds, "container_image_release", "container.image") || !hasCode(ds, "container_setting_unused", "systemd.user") {
		t.Errorf("want a plan with the image's release and systemd.user warned of:\n%s", describeDiags(ds))
	}
	for _, image := range []string{"vllm/vllm-omni", "vllm/vllm-omni:latest", "localhost/omni"} {
		if _, ds := Plan(Spec{Model: seedModel, Container: &ContainerSpec{Image: image}}); !hasCode(ds, "container_image_unpinned", "container.image") {
			t.Errorf("%s: no container_image_unpinned:\n%s", image, describeDiags(ds))
		}
	}
	for _, image := range []string{"vllm/vllm-omni@sha256:" + strings.Repeat("ab", 32), "mirror.example/omni:prod", "docker.io/vllm/vllm-omni:v0.24.0"} {
		if _, ds := Plan(Spec{Model: seedModel, Container: &ContainerSpec{Image: image}}); len(ds) > 0 {
			t.Errorf("%s: %s", image, describeDiags(ds))
		}
	}
}

// A stage's own paths must be where its container sees them: in a mount,
// writable where written; a local model is mounted by the plan itself.
func TestContainerPaths(t *testing.T) {
	spec := Spec{Model: "/srv/models/Qwen3-Omni-30B-A3B-Instruct", Preset: "qwen3_omni_moe",
		Prefill:   RoleSpec{EngineArgs: map[string]any{"tokenizer": "/opt/tok", "download_dir": "/data/dl"}},
		Container: &ContainerSpec{Mounts: []container.Mount{{Source: "/data", Target: "/data", ReadOnly: true}}}}
	_, ds := Plan(spec)
	for _, p := range []string{"prefill.engine_args.tokenizer", "prefill.engine_args.download_dir"} {
		if !hasCode(ds, "container_path_unmounted", p) {
			t.Errorf("no container_path_unmounted at %s:\n%s", p, describeDiags(ds))
		}
	}
	spec.Prefill.EngineArgs = nil
	res := mustPlan(t, spec)
	run := res.Launches[0].Processes[0].run
	if m := run.Mounts[len(run.Mounts)-1]; m != (container.Mount{Source: spec.Model, Target: spec.Model, ReadOnly: true}) {
		t.Errorf("the local model is not mounted read-only: %+v", run.Mounts)
	}
}

// Every container unit is one systemd-analyze verify accepts, with the
// runtime's client at a path this machine has.
func TestContainerUnitsVerify(t *testing.T) {
	analyze := testtool.Need(t, "systemd-analyze")
	for _, tc := range containerGoldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec(t)
			client, err := exec.LookPath(spec.Container.withDefaults("").Runtime)
			if err != nil {
				t.Skipf("no %s client: %v", spec.Container.Runtime, err)
			}
			c := *spec.Container
			c.RuntimePath = client
			spec.Container = &c
			res := mustPlan(t, spec)
			// Each host's drop-ins, which its head wants, and the daemon
			// docker's units require, as a machine has them.
			for _, l := range res.Launches {
				dir := t.TempDir()
				stub := "[Unit]\nDescription=stands in for dockerd\n[Service]\nExecStart=/bin/true\n"
				if err := os.WriteFile(filepath.Join(dir, "docker.service"), []byte(stub), 0o644); err != nil {
					t.Fatal(err)
				}
				for _, proc := range l.Processes {
					writeDropIn(t, dir, proc)
				}
				for _, proc := range l.Processes {
					verifyUnit(t, analyze, dir, res, proc)
				}
			}
		})
	}
}

// writeDropIn writes proc's drop-in where systemd reads it beside its
// unit in dir.
func writeDropIn(t *testing.T, dir string, proc Process) {
	t.Helper()
	path := filepath.Join(dir, proc.UnitName+".d", filepath.Base(proc.DropIn.Path))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(proc.DropIn.Content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Docker's client parses every command of a docker plan's units, the GPU
// request in NVIDIA's form among them, before it needs a daemon: pointed
// at none, it fails on the connection, not on a word. What a daemon and
// NVIDIA's runtime would do with them cannot run here. Skipped where no
// docker client is installed.
func TestContainerDockerParsesThePlan(t *testing.T) {
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("no docker client")
	}
	res := mustPlan(t, Spec{Model: seedModel, Container: &ContainerSpec{}})
	for _, l := range res.Launches {
		for _, p := range l.Processes {
			for _, argv := range [][]string{container.RunArgv(*p.run), container.StopArgv(*p.run), container.RemoveArgv(*p.run)} {
				cmd := exec.Command(docker, argv[1:]...)
				cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+filepath.Join(t.TempDir(), "no-daemon.sock"))
				out, err := cmd.CombinedOutput()
				if err == nil || !strings.Contains(string(out), "Cannot connect to the Docker daemon") {
					t.Errorf("%s: docker %s: %v, want no daemon to connect to:\n%s", p.UnitName, strings.Join(argv[1:], " "), err, out)
				}
			}
		}
	}
}

// The model cache exists before a container mounts it, since podman
// refuses a missing source (status 125, restarted for ever): systemd makes
// the default one (CacheDirectory=), the unit any other (mkdir -p).
func TestContainerUnitsMakeTheCache(t *testing.T) {
	for dir, want := range map[string]string{
		DefaultCacheDir:         "CacheDirectory=vllm-omni\n",
		"/srv/models/vllm-omni": "ExecStartPre=/bin/mkdir -p /srv/models/vllm-omni\n",
	} {
		res := mustPlan(t, Spec{Model: seedModel, Service: ServiceSpec{CacheDir: dir}, Container: &ContainerSpec{Runtime: "podman"}})
		if !strings.Contains(res.SystemdUnit.Content, want) {
			t.Errorf("cache_dir %q: the template lacks %q:\n%s", dir, want, res.SystemdUnit.Content)
		}
	}
}

// A container unit does not restart after the preflight's status or the
// runtime's for a command the image cannot run (a restart would meet them
// again), and does restart after the runtime's own error, such as a pull
// that failed.
func TestContainerUnitsRestartPolicy(t *testing.T) {
	res := mustPlan(t, Spec{Model: seedModel, Container: &ContainerSpec{Runtime: "podman"}})
	var prevented []int
	for _, line := range strings.Split(res.SystemdUnit.Content, "\n") {
		if v, ok := strings.CutPrefix(line, "RestartPreventExitStatus="); ok {
			for _, w := range strings.Fields(v) {
				n, err := strconv.Atoi(w)
				if err != nil {
					t.Fatalf("RestartPreventExitStatus=%s", v)
				}
				prevented = append(prevented, n)
			}
		}
	}
	for _, s := range []int{PreflightExit, container.ExitCannotInvoke, container.ExitNotFound} {
		if !slices.Contains(prevented, s) {
			t.Errorf("status %d restarts the unit; prevented: %v", s, prevented)
		}
	}
	if slices.Contains(prevented, container.ExitRuntimeError) {
		t.Errorf("the runtime's own error %d does not restart the unit; prevented: %v", container.ExitRuntimeError, prevented)
	}
}
