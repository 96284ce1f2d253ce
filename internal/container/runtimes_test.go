package container

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Docker's client parses every flag of the argv the package renders, and
// the --gpus request, before it talks to a daemon: pointed at no daemon,
// it fails on the connection, not on a word. The argv of a running podman
// is the container test's (internal/boot, TestContainerStages). Skipped
// where no docker client is installed.
func TestDockerParsesTheArgv(t *testing.T) {
	docker, err := exec.LookPath("docker")
	if err != nil {
		t.Skip("no docker client")
	}
	noRDMA := func(s Spec) Spec { s.RDMA = false; return s }
	memlock := func(s Spec) Spec { s.RDMA, s.Memlock = false, true; return s }
	for _, s := range []Spec{stage(Docker, NVIDIARuntime, true), noRDMA(stage(Docker, NVIDIARuntime, false)), stage(Docker, CDI, true),
		memlock(stage(Docker, NVIDIARuntime, false)),
		func() Spec { s := stage(Docker, NVIDIARuntime, true); s.GPUs = nil; return s }(), stage(Docker, NVIDIARuntime, false)} {
		// A device node is checked against the daemon's OS, which it
		// asks for first: past the flags, the client stops there.
		want := "Cannot connect to the Docker daemon"
		if s.RDMA {
			want = "unknown server OS"
		}
		for _, argv := range [][]string{RunArgv(s), StopArgv(s), RemoveArgv(s)} {
			cmd := exec.Command(docker, argv[1:]...)
			cmd.Env = append(os.Environ(), "DOCKER_HOST=unix://"+filepath.Join(t.TempDir(), "no-daemon.sock"))
			out, err := cmd.CombinedOutput()
			if argv[1] != "run" {
				want = "Cannot connect to the Docker daemon"
			}
			if err == nil || !strings.Contains(string(out), want) {
				t.Errorf("docker %s: %v, want %q:\n%s", strings.Join(argv[1:], " "), err, want, out)
			}
		}
	}
}

// Podman takes the stop and remove argv, by an ID file of a container
// that is gone: both end well and touch nothing. Skipped where podman is
// not installed or this user cannot run it.
func TestPodmanTakesStopAndRemove(t *testing.T) {
	podman, err := exec.LookPath("podman")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("no podman, or not root")
	}
	s := stage(Podman, CDI, true)
	cid := filepath.Join(t.TempDir(), "gone.ctr-id")
	if err := os.WriteFile(cid, []byte(strings.Repeat("0f", 32)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, argv := range [][]string{StopArgv(s), RemoveArgv(s)} {
		last := len(argv) - 1
		if !strings.HasPrefix(argv[last], "--cidfile=/run/") {
			t.Fatalf("%q does not end with the unit's ID file", argv)
		}
		argv[last] = "--cidfile=" + cid
		if out, err := exec.Command(podman, argv[1:]...).CombinedOutput(); err != nil {
			t.Errorf("podman %s: %v\n%s", strings.Join(argv[1:], " "), err, out)
		}
	}
}
