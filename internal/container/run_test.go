package container

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/systemd"
	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// stage is a process of a two-stage pipeline on one machine, as a plan
// would describe its container: the head (stage 0, host GPUs 2 and 3)
// or a headless stage (stage 1, host GPU 1).
func stage(runtime Runtime, mode GPUMode, head bool) Spec {
	id, gpus := "1", []int{1}
	if head {
		id, gpus = "0", []int{3, 2}
	}
	unit := "omni-stage@" + id + ".service"
	command := []string{"/usr/bin/python3", "/usr/local/libexec/pd-check.py", "preflight", "0.24.0", "release", "0.24",
		"/etc/vllm-omni/deploy.yaml", "5f2b", "--gpus", strconv.Itoa(len(gpus))}
	if !head {
		command = append(command, "--head", "10.20.0.11:25100", "--head-wait", "600", "--head-unit", "omni-stage@0.service")
	}
	command = append(command, "--", "/usr/local/bin/vllm", "serve", "Qwen/Qwen2.5-Omni-7B", "--omni",
		"--deploy-config", "/etc/vllm-omni/deploy.yaml", "--stage-id", id,
		"--omni-master-address", "10.20.0.11", "--omni-master-port", "25100")
	if head {
		command = append(command, "--port", "8091")
	} else {
		command = append(command, "--headless")
	}
	path := "/usr/bin/docker"
	if runtime == Podman {
		path = "/usr/bin/podman"
	}
	return Spec{
		Runtime: runtime, RuntimePath: path, Image: DefaultImage("0.24.0"), Pull: PullMissing,
		Name: NameFor(unit), Unit: unit, GPUs: gpus, GPUMode: mode,
		Mounts: []Mount{
			{Source: "/etc/vllm-omni/deploy.yaml", Target: "/etc/vllm-omni/deploy.yaml", ReadOnly: true},
			{Source: "/usr/local/libexec/pd-check.py", Target: "/usr/local/libexec/pd-check.py", ReadOnly: true},
			{Source: "/var/cache/vllm-omni", Target: "/var/cache/vllm-omni"},
		},
		Env: []EnvVar{{"HOME", "/var/cache/vllm-omni"}, {"HF_HOME", "/var/cache/vllm-omni"},
			{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"VLLM_HOST_IP", "10.20.0.11"}},
		PassEnv: []string{"HF_TOKEN"}, NoFile: 1048576, RDMA: !head,
		Options: []string{"--security-opt", "label=disable"}, StopTimeout: 110, Command: command,
	}
}

// rendered is everything the package renders for s, as a golden file
// holds it: the argv one word a line, the stop and remove argv, the
// unit's directives.
func rendered(t *testing.T, s Spec) string {
	t.Helper()
	d, err := UnitDirectives(s)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, part := range []struct {
		what string
		argv []string
	}{{"run", RunArgv(s)}, {"stop", StopArgv(s)}, {"remove", RemoveArgv(s)}} {
		b.WriteString("# " + part.what + " argv, one word a line\n")
		for _, w := range part.argv {
			b.WriteString(w + "\n")
		}
		b.WriteString("\n")
	}
	b.WriteString(systemd.Unit{Comment: "unit directives", Sections: []systemd.Section{
		{Name: "Unit", Directives: d.Unit}, {Name: "Service", Directives: d.Service}}}.Render())
	return b.String()
}

// The full argv and directives of a 2-GPU head and a 1-GPU headless stage
// (with RDMA), for podman with CDI and docker with NVIDIA's runtime.
func TestGolden(t *testing.T) {
	for _, c := range []struct {
		file    string
		runtime Runtime
		mode    GPUMode
		head    bool
	}{
		{"podman-head", Podman, CDI, true},
		{"podman-headless", Podman, CDI, false},
		{"docker-head", Docker, NVIDIARuntime, true},
		{"docker-headless", Docker, NVIDIARuntime, false},
	} {
		t.Run(c.file, func(t *testing.T) {
			s := stage(c.runtime, c.mode, c.head)
			if problems := Check(s); len(problems) > 0 {
				t.Fatalf("the spec has problems: %v", problems)
			}
			got := rendered(t, s)
			path := filepath.Join("testdata", c.file+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("%s differs (go test -update rewrites it):\n%s", path, got)
			}
		})
	}
}

// The options each runtime and GPU mode put between the lifecycle flags
// and the mounts, for 0, 1 and 2 GPUs.
func TestRunArgv(t *testing.T) {
	for _, c := range []struct {
		runtime Runtime
		mode    GPUMode
		gpus    []int
		lead    []string // the words after the runtime's path up to --init
		want    []string // the words from --network up to the first --volume
	}{
		{Podman, CDI, []int{3, 2},
			[]string{"run", "--rm", "--replace", "--cidfile=/run/u@0.service.ctr-id", "--cgroups=no-conmon", "--sdnotify=conmon", "--name", "n", "--pull=never", "--init"},
			[]string{"--network", "host", "--ipc", "host", "--device", "nvidia.com/gpu=2", "--device", "nvidia.com/gpu=3"}},
		{Podman, CDI, []int{0}, nil, []string{"--network", "host", "--ipc", "host", "--device", "nvidia.com/gpu=0"}},
		{Podman, CDI, nil, nil, []string{"--network", "host", "--ipc", "host", "--env", "NVIDIA_VISIBLE_DEVICES=void"}},
		{Docker, NVIDIARuntime, []int{3, 2},
			[]string{"run", "--rm", "--name", "n", "--pull=never", "--init"},
			[]string{"--network", "host", "--ipc", "host", "--runtime", "nvidia", "--gpus", `"device=2,3"`}},
		{Docker, NVIDIARuntime, []int{5}, nil, []string{"--network", "host", "--ipc", "host", "--runtime", "nvidia", "--gpus", `"device=5"`}},
		{Docker, NVIDIARuntime, nil, nil, []string{"--network", "host", "--ipc", "host", "--env", "NVIDIA_VISIBLE_DEVICES=void"}},
		{Docker, CDI, []int{1, 0}, nil, []string{"--network", "host", "--ipc", "host", "--device", "nvidia.com/gpu=0", "--device", "nvidia.com/gpu=1"}},
	} {
		s := Spec{Runtime: c.runtime, RuntimePath: "/bin/rt", Image: "img", Pull: PullNever, Name: "n", Unit: "u@0.service",
			GPUs: c.gpus, GPUMode: c.mode, Mounts: []Mount{{Source: "/a", Target: "/b"}}, Command: []string{"/bin/true"}}
		argv := RunArgv(s)
		if argv[0] != "/bin/rt" || argv[len(argv)-2] != "img" || argv[len(argv)-1] != "/bin/true" {
			t.Errorf("%s %s: %q does not run the image's command with the runtime's path", c.runtime, c.mode, argv)
		}
		init := slices.Index(argv, "--init")
		if c.lead != nil && !slices.Equal(argv[1:init+1], c.lead) {
			t.Errorf("%s %s: starts %q, want %q", c.runtime, c.mode, argv[1:init+1], c.lead)
		}
		if got := argv[init+1 : slices.Index(argv, "--volume")]; !slices.Equal(got, c.want) {
			t.Errorf("%s %s %v: %q, want %q", c.runtime, c.mode, c.gpus, got, c.want)
		}
	}
}

// The environment in order, then the names passed on, then the user's
// options, each group as given; limits with RDMA; a read-only mount.
func TestRunArgvOrder(t *testing.T) {
	s := Spec{Runtime: Docker, RuntimePath: "/usr/bin/docker", Image: "img", Pull: PullAlways, Name: "n", Unit: "n.service",
		GPUs: []int{0}, GPUMode: CDI, RDMA: true, NoFile: 4096,
		Mounts:  []Mount{{Source: "/h", Target: "/c", ReadOnly: true}},
		Env:     []EnvVar{{"Z", "1"}, {"A", "2"}},
		PassEnv: []string{"TOKEN", "B"}, Options: []string{"--shm", "x"}, Command: []string{"cmd", "arg"}}
	got := RunArgv(s)[slices.Index(RunArgv(s), "nvidia.com/gpu=0")+1:]
	want := []string{"--device", "/dev/infiniband", "--cap-add", "IPC_LOCK", "--ulimit", "memlock=-1:-1", "--ulimit", "nofile=4096:4096",
		"--volume", "/h:/c:ro", "--env", "Z=1", "--env", "A=2", "--env", "TOKEN", "--env", "B", "--shm", "x", "img", "cmd", "arg"}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}

// Memlock adds CAP_IPC_LOCK alone: no InfiniBand device, which a machine
// without one cannot hand a container, and no --ulimit, which asks the
// runtime for a limit it may not be able to raise.
func TestRunArgvMemlock(t *testing.T) {
	s := stage(Docker, NVIDIARuntime, true)
	s.Memlock = true
	argv := RunArgv(s)
	at := slices.Index(argv, "--cap-add")
	if at < 0 || argv[at+1] != "IPC_LOCK" || slices.Contains(argv, "/dev/infiniband") || slices.Contains(argv, "memlock=-1:-1") {
		t.Errorf("%q: want --cap-add IPC_LOCK and no /dev/infiniband or memlock limit", argv)
	}
	s.RDMA = true
	if n := strings.Count(strings.Join(RunArgv(s), " "), "IPC_LOCK"); n != 1 {
		t.Errorf("RDMA with Memlock adds IPC_LOCK %d times, want once", n)
	}
}

// Every word reaches the runtime as RunArgv says, however it is written:
// systemd's reading of ExecStart= is RunArgv, with values that hold
// blanks, quotes, backslashes, %, $ and non-ASCII.
func TestExecStartReadsBack(t *testing.T) {
	hard := []string{`a b`, `say "hi"`, `back\slash`, `100%`, `%n`, `$HOME`, `${X}`, `it's`, `a;b`, `é😀`, ``, `"device=2,3"`}
	for _, runtime := range []Runtime{Podman, Docker} {
		s := stage(runtime, CDI, true)
		if runtime == Docker {
			s = stage(runtime, NVIDIARuntime, true)
		}
		s.Env = append(s.Env, EnvVar{"NOTE", strings.Join(hard, " ")})
		s.Mounts = append(s.Mounts, Mount{Source: "/srv/a b/100%", Target: "/data/$x"})
		s.Command = append(s.Command, hard...)
		line, err := ExecStart(s)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := testtool.SystemdWords(t, line, s.Unit), RunArgv(s); !slices.Equal(got, want) {
			t.Errorf("%s: ExecStart=%s\nreads back as\n%q\nwant\n%q", runtime, line, got, want)
		}
		d, err := UnitDirectives(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range d.Service {
			switch dir.Key {
			case "ExecStop":
				if got := testtool.SystemdWords(t, dir.Value, s.Unit); !slices.Equal(got, StopArgv(s)) {
					t.Errorf("%s: ExecStop=%s reads back as %q, want %q", runtime, dir.Value, got, StopArgv(s))
				}
			case "ExecStopPost", "ExecStartPre":
				if v := strings.TrimPrefix(dir.Value, "-"); strings.HasPrefix(v, s.RuntimePath) {
					if got := testtool.SystemdWords(t, v, s.Unit); !slices.Equal(got, RemoveArgv(s)) {
						t.Errorf("%s: %s=%s reads back as %q, want %q", runtime, dir.Key, dir.Value, got, RemoveArgv(s))
					}
				}
			}
		}
	}
}

// A word systemd cannot carry is an error, not a unit that fails to load.
func TestExecStartRefuses(t *testing.T) {
	for _, s := range []Spec{
		func() Spec { s := stage(Docker, CDI, true); s.Command = append(s.Command, "a\nb"); return s }(),
		func() Spec { s := stage(Docker, CDI, true); s.RuntimePath = "docker"; return s }(),
		func() Spec { s := stage(Podman, CDI, true); s.Options = append(s.Options, "\ufdd0"); return s }(),
	} {
		if line, err := ExecStart(s); err == nil {
			t.Errorf("ExecStart=%s was rendered", line)
		}
		if _, err := UnitDirectives(s); err == nil {
			t.Errorf("the directives of %q were rendered", RunArgv(s))
		}
	}
}

func TestNameFor(t *testing.T) {
	for unit, want := range map[string]string{
		"omni-stage@0.service": "omni-stage-0", "omni.service": "omni", "a:b\\x2d@c.service": "a-b-x2d-c",
	} {
		if got := NameFor(unit); got != want || !containerName.MatchString(got) {
			t.Errorf("NameFor(%q) = %q, want %q", unit, got, want)
		}
	}
}
