package container

import (
	"strings"
	"testing"
)

// Each way a value can be wrong gives one problem, at that value's path,
// with a message that says why.
func TestCheck(t *testing.T) {
	type edit func(*Spec)
	opts := func(words ...string) edit { return func(s *Spec) { s.Options = words } }
	for _, c := range []struct {
		what string
		edit edit
		path string
		says string
	}{
		{"an unknown runtime", func(s *Spec) { s.Runtime = "lxc" }, "runtime", "not docker or podman"},
		{"a relative runtime path", func(s *Spec) { s.RuntimePath = "podman" }, "runtime_path", "not an absolute path"},
		{"a runtime path with a space", func(s *Spec) { s.RuntimePath = "/opt/my podman" }, "runtime_path", "holds a space"},
		{"an uppercase repository", func(s *Spec) { s.Image = "vllm/VLLM-omni:v0.24.0" }, "image", "repository path component"},
		{"an empty image", func(s *Spec) { s.Image = "" }, "image", "names no repository"},
		{"a bad tag", func(s *Spec) { s.Image = "vllm/vllm-omni:-v1" }, "image", "the tag"},
		{"a short digest", func(s *Spec) { s.Image = "vllm/vllm-omni@sha256:abc" }, "image", "64 lowercase hex"},
		{"an unknown pull policy", func(s *Spec) { s.Pull = "newer" }, "pull", "not missing, always or never"},
		{"a name with @", func(s *Spec) { s.Name = "omni-stage@0" }, "name", "not a container name"},
		{"a unit that is no service", func(s *Spec) { s.Unit = "omni.socket" }, "unit", "not a service unit's name"},
		{"no unit", func(s *Spec) { s.Unit = "" }, "unit", "not a service unit's name"},
		{"an unknown GPU mode", func(s *Spec) { s.GPUMode = "all" }, "gpus", "not cdi or nvidia_runtime"},
		{"NVIDIA's runtime with podman", func(s *Spec) { s.Runtime, s.RuntimePath, s.GPUMode = Podman, "/usr/bin/podman", NVIDIARuntime }, "gpus", "podman asks for NVIDIA's GPUs through CDI"},
		{"a negative GPU", func(s *Spec) { s.GPUs = []int{0, -1} }, "host_gpus[1]", "negative"},
		{"a GPU twice", func(s *Spec) { s.GPUs = []int{2, 3, 2} }, "host_gpus[2]", "given twice"},
		{"a relative mount source", func(s *Spec) { s.Mounts[0].Source = "cache" }, "mounts[0].source", "not an absolute path"},
		{"a mount target with ..", func(s *Spec) { s.Mounts[1].Target = "/etc/../x" }, "mounts[1].target", `write "/x"`},
		{"a mount target with a trailing /", func(s *Spec) { s.Mounts[2].Target = "/var/cache/" }, "mounts[2].target", "not a normalized path"},
		{"a mount source with a colon", func(s *Spec) { s.Mounts[0].Source = "/a:b" }, "mounts[0].source", "holds a colon"},
		{"a mount path with a newline", func(s *Spec) { s.Mounts[0].Source = "/a\nb" }, "mounts[0].source", "control character"},
		{"two mounts at one target", func(s *Spec) { s.Mounts[2].Target = s.Mounts[0].Target }, "mounts[2].target", "mounts[0]'s target too"},
		{"a mount at /", func(s *Spec) { s.Mounts[2].Target = "/" }, "mounts[2].target", "hide the image"},
		{"a mount at /dev/shm", func(s *Spec) { s.Mounts[2].Target = "/dev/shm" }, "mounts[2].target", "--ipc host"},
		{"a bad variable name", func(s *Spec) { s.Env[0].Name = "A-B" }, "env[0]", `holds '-'`},
		{"a value with a newline", func(s *Spec) { s.Env[1].Value = "a\nb" }, "env[1]", "a newline"},
		{"a variable twice", func(s *Spec) { s.Env[3].Name = "HOME" }, "env[3]", "HOME is set twice"},
		{"a GPU mask", func(s *Spec) { s.Env = append(s.Env, EnvVar{"CUDA_VISIBLE_DEVICES", "2,3"}) }, "env[4]", "numbered from 0"},
		{"NVIDIA's variable", func(s *Spec) { s.Env = append(s.Env, EnvVar{"NVIDIA_VISIBLE_DEVICES", "all"}) }, "env[4]", "the device request sets it"},
		{"a bad name passed on", func(s *Spec) { s.PassEnv = []string{"1X"} }, "pass_env[0]", "starts with a digit"},
		{"a name both set and passed on", func(s *Spec) { s.PassEnv = []string{"HF_HOME"} }, "pass_env[0]", "HF_HOME is set twice"},
		{"a negative nofile", func(s *Spec) { s.NoFile = -1 }, "nofile", "negative"},
		{"a negative stop timeout", func(s *Spec) { s.StopTimeout = -1 }, "stop_timeout", "negative"},
		{"no command", func(s *Spec) { s.Command = nil }, "command", "needs a command"},
		{"a command word with a newline", func(s *Spec) { s.Command[1] = "a\nb" }, "command[1]", "control character"},

		{"an option word with a noncharacter", opts("--label", "a\ufdd0"), "options[1]", "noncharacter"},
		{"a word that is no flag's", opts("--privileged=false", "bash"), "options[1]", "no option's value"},
		{"an option missing its value", opts("--shm"), "options[0]", "takes a value"},
		{"a short option missing its value", opts("-it", "-e"), "options[1]", "takes a value"},
		{"--", opts("--"), "options[0]", "no option's value"},
		{"--name", opts("--name", "x"), "options[0]", "names the container"},
		{"--name=", opts("--name=x"), "options[0]", "names the container"},
		{"--rm", opts("--rm"), "options[0]", "removes the container"},
		{"--replace", opts("--replace"), "options[0]", "podman's flags"},
		{"--cidfile", opts("--cidfile", "/x"), "options[0]", "podman's flags"},
		{"--cgroups", opts("--cgroups=split"), "options[0]", "podman's flags"},
		{"--sdnotify", opts("--sdnotify", "container"), "options[0]", "podman's flags"},
		{"--conmon-pidfile", opts("--conmon-pidfile", "/x"), "options[0]", "podman's flags"},
		{"--detach", opts("--detach"), "options[0]", "foreground"},
		{"-d in a cluster", opts("-dit"), "options[0]", "foreground"},
		{"--restart", opts("--restart", "always"), "options[0]", "restarts the unit"},
		{"--pull", opts("--pull=always"), "options[0]", "pull setting"},
		{"--init", opts("--init"), "options[0]", "runtime's init"},
		{"--entrypoint", opts("--entrypoint", "/bin/sh"), "options[0]", "no entrypoint"},
		{"--network", opts("--network", "bridge"), "options[0]", "machine's network"},
		{"--net", opts("--net=none"), "options[0]", "machine's network"},
		{"--ipc", opts("--ipc=private"), "options[0]", "/dev/shm"},
		{"--shm-size", opts("--shm-size", "16g"), "options[0]", "whatever size"},
		{"--gpus", opts("--gpus", "all"), "options[0]", "exactly the process's GPUs"},
		{"--privileged", opts("--privileged"), "options[0]", "every device"},
		{"-p", opts("-p", "8091:8091"), "options[0]", "--network host"},
		{"-p8091", opts("-p8091:8091"), "options[0]", "--network host"},
		{"--publish-all", opts("-P"), "options[0]", "--network host"},
		{"--hostname", opts("--hostname", "h"), "options[0]", "--network host"},
		{"--dns", opts("--dns", "1.1.1.1"), "options[0]", "--network host"},
		{"--mac-address", opts("--mac-address", "x"), "options[0]", "--network host"},
		{"--runtime with NVIDIA's runtime", opts("--runtime", "runc"), "options[0]", "--runtime nvidia"},
		{"a CDI GPU", opts("--device", "nvidia.com/gpu=all"), "options[0]", "exactly the process's GPUs"},
		{"a CDI GPU attached", opts("--device=nvidia.com/gpu=0"), "options[0]", "exactly the process's GPUs"},
		{"a GPU's node", opts("--device", "/dev/nvidia0:/dev/nvidia0"), "options[0]", "exactly the process's GPUs"},
		{"a planned variable", opts("--env", "HF_HOME=/x"), "options[0]", "the plan sets HF_HOME"},
		{"a secret passed on", opts("-e", "HF_TOKEN"), "options[0]", "the plan sets HF_TOKEN"},
		{"a planned variable, attached", opts("-eHOME=/x"), "options[0]", "the plan sets HOME"},
		{"a planned variable, -e=", opts("-e=HOME=/x"), "options[0]", "the plan sets HOME"},
		{"a GPU mask option", opts("--env=CUDA_VISIBLE_DEVICES=0"), "options[0]", "the plan sets CUDA_VISIBLE_DEVICES"},
		{"a planned mount target", opts("-v", "/x:/var/cache/vllm-omni"), "options[0]", "mounts /var/cache/vllm-omni"},
		{"a planned mount target, not normalized", opts("--volume=/x:/var/cache/vllm-omni/:ro"), "options[0]", "mounts /var/cache/vllm-omni"},
		{"a --mount at a planned target", opts("--mount", "type=bind,src=/x,dst=/etc/vllm-omni/deploy.yaml"), "options[0]", "mounts /etc/vllm-omni/deploy.yaml"},
		{"a tmpfs at /dev/shm", opts("--tmpfs", "/dev/shm:size=1g"), "options[0]", "mounts /dev/shm"},
		{"a volume at /dev/shm", opts("-v", "/x:/dev/shm"), "options[0]", "mounts /dev/shm"},
		{"the planned nofile", opts("--ulimit", "nofile=1:1"), "options[0]", "sets this limit"},
	} {
		t.Run(c.what, func(t *testing.T) {
			s := stage(Docker, NVIDIARuntime, true)
			c.edit(&s)
			got := Check(s)
			if len(got) != 1 || got[0].Path.String() != c.path || !strings.Contains(got[0].Message, c.says) {
				t.Errorf("got %v, want one problem at %s saying %q", got, c.path, c.says)
			}
		})
	}
}

// Options that leave what the plan sets alone pass, however written.
func TestCheckTakes(t *testing.T) {
	for _, words := range [][]string{
		{"--security-opt", "label=disable", "--cap-add=SYS_PTRACE", "--read-only"},
		{"-v", "/sys/class/infiniband:/sys/class/infiniband:ro", "--mount", "type=bind,source=/a,target=/b"},
		{"-e", "VLLM_LOGGING_LEVEL=DEBUG", "--env=OTHER", "-it", "-uroot"},
		{"--ulimit", "core=0", "--device", "/dev/fuse", "--label", "a=b", "--sig-proxy=false"},
		{"--tmpfs", "/tmp", "--workdir", "/app", "--user", "0:0", "--stop-signal", "SIGINT"},
	} {
		s := stage(Podman, CDI, true)
		s.Runtime, s.RuntimePath, s.Options = Podman, "/usr/bin/podman", words
		if got := Check(s); len(got) > 0 {
			t.Errorf("%q: %v", words, got)
		}
	}
	// In CDI mode --runtime is the user's; with no RDMA, memlock too.
	s := stage(Docker, CDI, true)
	s.Options = []string{"--runtime", "runc", "--ulimit", "memlock=-1:-1"}
	if got := Check(s); len(got) > 0 {
		t.Errorf("%q: %v", s.Options, got)
	}
	s = stage(Docker, CDI, false)
	s.Options = []string{"--ulimit", "memlock=-1:-1"}
	if got := Check(s); len(got) != 1 || !strings.Contains(got[0].Message, "sets this limit") {
		t.Errorf("with RDMA, %q: %v", s.Options, got)
	}
}

// Every problem of a Spec wrong everywhere is found, in field order.
func TestCheckFindsAll(t *testing.T) {
	s := Spec{Runtime: "x", RuntimePath: "x", Image: "X", Pull: "x", Name: "@", Unit: "x", GPUs: []int{-1},
		GPUMode: "x", Mounts: []Mount{{Source: "x", Target: "y"}}, Env: []EnvVar{{"1", ""}}, PassEnv: []string{""},
		NoFile: -1, Options: []string{"x"}, StopTimeout: -1}
	var paths []string
	for _, p := range Check(s) {
		paths = append(paths, p.Path.String())
	}
	want := "runtime runtime_path image pull name unit gpus host_gpus[0] mounts[0].source mounts[0].target env[0] pass_env[0] nofile options[0] stop_timeout command"
	if got := strings.Join(paths, " "); got != want {
		t.Errorf("paths\n%s\nwant\n%s", got, want)
	}
}
