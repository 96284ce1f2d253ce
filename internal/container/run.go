package container

import (
	"slices"
	"strconv"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/systemd"
)

// A word is one word of a run argv: arg is what the runtime receives; unit,
// when set, is how a unit writes it for systemd to expand into arg (a
// specifier), where any other word is quoted to reach the runtime as it is.
type word struct {
	arg, unit string
}

// words are plain words, each reaching the runtime as written.
func words(args ...string) []word {
	w := make([]word, len(args))
	for i, a := range args {
		w[i] = word{arg: a}
	}
	return w
}

// systemRuntimeDir is what %t stands for in a system unit: the runtime
// directory of the system manager (systemd.unit(5), "Specifiers": %t,
// "/run/ for the system manager").
const systemRuntimeDir = "/run"

// cidFile is podman's container ID file for a unit, as `podman generate
// systemd --new` names it (%t/%n.ctr-id): a stop or a remove by the file
// reaches the container the unit started, and no other.
func cidFile(unit string) word {
	return word{arg: systemRuntimeDir + "/" + unit + ".ctr-id", unit: "%t/%n.ctr-id"}
}

// withPrefix is w with prefix in front of both its forms.
func withPrefix(prefix string, w word) word {
	w.arg = prefix + w.arg
	if w.unit != "" {
		w.unit = prefix + w.unit
	}
	return w
}

// cdiKind is the kind of NVIDIA's CDI devices: GPU N is nvidia.com/gpu=N,
// N the host's index (cdi-support.html, "Running a Workload with CDI").
const cdiKind = "nvidia.com/gpu"

// voidDevices is NVIDIA_VISIBLE_DEVICES for a container that must see no
// GPU: "void", the NVIDIA runtime then behaving as runc
// (docker-specialized.html, "GPU Enumeration"). The CUDA images the
// release's image is built on set the variable to "all", which would hand
// a container with no device request every GPU wherever the nvidia runtime
// is Docker's default or its legacy hook is installed.
const voidDevices = "NVIDIA_VISIBLE_DEVICES=void"

// runWords is the run argv after the executable up to the image, in this
// order, each group
// in the order its field holds or as listed:
//
//  1. run, then the container's lifecycle: --rm; for podman the flags
//     `podman generate systemd --new` (4.3) writes for a unit of
//     Type=notify: --replace (a container of the name left by a killed
//     run is replaced), --cidfile=%t/%n.ctr-id, --cgroups=no-conmon
//     (conmon stays in the unit's cgroup, so systemd tracks it and the
//     journal files its output under the unit), --sdnotify=conmon (conmon
//     sends MAINPID and READY=1 once the container runs); then
//     --name NAME, --pull=POLICY, --init;
//  2. --network host, --ipc host;
//  3. the GPUs, ascending: --device nvidia.com/gpu=N each (CDI), or
//     --runtime nvidia --gpus "device=N,M" (NVIDIARuntime); with none,
//     --env NVIDIA_VISIBLE_DEVICES=void;
//  4. with RDMA or Memlock: --device /dev/infiniband (RDMA), --cap-add
//     IPC_LOCK, --ulimit memlock=-1:-1 (RDMA);
//  5. --ulimit nofile=N:N when NoFile is set;
//  6. the mounts: --volume SOURCE:TARGET[:ro];
//  7. the environment: --env NAME=VALUE, then --env NAME for each name
//     passed on;
//  8. the user's options, as given;
//  9. the image.
//
// The command follows it. The --pull, --cidfile, --cgroups and --sdnotify values are attached
// with "=", as podman's generator writes them: each flag then takes its
// value whatever else it accepts.
func runWords(s Spec) []word {
	w := words("run", "--rm")
	if s.Runtime == Podman {
		w = append(w, words("--replace")...)
		w = append(w, withPrefix("--cidfile=", cidFile(s.Unit)))
		w = append(w, words("--cgroups=no-conmon", "--sdnotify=conmon")...)
	}
	args := []string{"--name", s.Name, "--pull=" + string(s.Pull), "--init", "--network", "host", "--ipc", "host"}
	args = append(args, gpuArgs(s.GPUs, s.GPUMode)...)
	switch {
	case s.RDMA:
		args = append(args, "--device", "/dev/infiniband", "--cap-add", "IPC_LOCK", "--ulimit", "memlock=-1:-1")
	case s.Memlock:
		args = append(args, "--cap-add", "IPC_LOCK")
	}
	if s.NoFile > 0 {
		n := strconv.Itoa(s.NoFile)
		args = append(args, "--ulimit", "nofile="+n+":"+n)
	}
	for _, m := range s.Mounts {
		args = append(args, "--volume", volume(m))
	}
	for _, e := range s.Env {
		args = append(args, "--env", e.Name+"="+e.Value)
	}
	for _, name := range s.PassEnv {
		args = append(args, "--env", name)
	}
	return append(w, words(append(append(args, s.Options...), s.Image)...)...)
}

// gpuArgs asks for exactly gpus, in ascending order, as mode does.
func gpuArgs(gpus []int, mode GPUMode) []string {
	if len(gpus) == 0 {
		return []string{"--env", voidDevices}
	}
	sorted := slices.Sorted(slices.Values(gpus))
	if mode == NVIDIARuntime {
		ids := make([]string, len(sorted))
		for i, g := range sorted {
			ids[i] = strconv.Itoa(g)
		}
		// --gpus takes a CSV record: the list goes in double quotes so
		// that its comma does not split the record ("device=2,3" as one
		// field). The quotes are part of the argument; a shell would
		// need '"device=2,3"', a unit writes "\"device=2,3\"".
		return []string{"--runtime", "nvidia", "--gpus", `"device=` + strings.Join(ids, ",") + `"`}
	}
	var args []string
	for _, g := range sorted {
		args = append(args, "--device", cdiKind+"="+strconv.Itoa(g))
	}
	return args
}

// volume is a mount as --volume's value, SOURCE:TARGET[:ro] (podman-run(1)
// and docker run's -v): Check refuses a path with a colon, which would
// split it.
func volume(m Mount) string {
	v := m.Source + ":" + m.Target
	if m.ReadOnly {
		v += ":ro"
	}
	return v
}

// RunArgv is the argv that starts s's container, as the runtime receives
// it: the runtime's path, `run`, the options in the order runWords lists,
// the image and the command. Podman's ID file is the one systemd names for
// s.Unit (/run/<unit>.ctr-id).
func RunArgv(s Spec) []string {
	ws := runWords(s)
	argv := make([]string, 0, 1+len(ws)+len(s.Command))
	argv = append(argv, s.RuntimePath)
	for _, w := range ws {
		argv = append(argv, w.arg)
	}
	return append(argv, s.Command...)
}

// ExecStart is RunArgv as a unit's ExecStart= value: each word quoted as
// systemd.Command quotes it, so that systemd hands the runtime exactly
// RunArgv, but for podman's ID file, written with the specifiers %t and %n
// as podman's generator writes it.
func ExecStart(s Spec) (string, error) {
	return commandLine(s.RuntimePath, append(runWords(s), words(s.Command...)...))
}

// commandLine renders an executable and its words as a systemd command
// line.
func commandLine(executable string, ws []word) (string, error) {
	if err := systemd.PlainPath(executable); err != nil {
		return "", err
	}
	line := []string{executable}
	for _, w := range ws {
		if w.unit != "" {
			line = append(line, w.unit)
			continue
		}
		q, err := systemd.Arg(w.arg)
		if err != nil {
			return "", err
		}
		line = append(line, q)
	}
	return strings.Join(line, " "), nil
}
