package boot

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// podman is the container runtime the container test runs stages with,
// and what this machine needs to run any container at all.
type podman struct {
	path string
	// env is added to every podman command: CONTAINERS_CONF, where this
	// machine needs an engine configuration of its own (engineFor).
	env []string
}

// needPodman finds podman, or skips the test where it or what the test
// runs it with is missing. In CI, where .ci/run installs them, each
// missing piece is a failure instead.
func needPodman(t *testing.T) podman {
	t.Helper()
	var missing []string
	if os.Geteuid() != 0 {
		missing = append(missing, "root (rootful podman, CDI device nodes and network namespaces need it)")
	}
	// catatonit is the init podman runs for --init.
	for _, tool := range [][2]string{{"podman", "podman"}, {"catatonit", "catatonit"}, {"nsenter", "util-linux"}, {"ip", "iproute2"}, {"tar", "tar"}} {
		if _, err := exec.LookPath(tool[0]); err != nil {
			missing = append(missing, tool[0]+" (Debian: "+tool[1]+")")
		}
	}
	if len(missing) == 0 {
		path, _ := exec.LookPath("podman")
		return podman{path: path}
	}
	msg := "the container test needs " + strings.Join(missing, ", ")
	if os.Getenv("CI") != "" {
		t.Fatal(msg + "; .ci/run installs them")
	}
	t.Skip(msg)
	return podman{}
}

// command is podman with args, in the network namespace netns ("" for
// this machine's own): a container run there with --network host has
// that namespace's network, as a unit's container has its machine's.
func (p podman) command(netns string, args ...string) *exec.Cmd {
	cmd := exec.Command(p.path, args...)
	if netns != "" {
		cmd = exec.Command("nsenter", append([]string{"--net=" + netns, "--", p.path}, args...)...)
	}
	cmd.Env = append(os.Environ(), p.env...)
	return cmd
}

// must runs podman with args and returns what it printed on stdout.
func (p podman) must(t *testing.T, args ...string) string {
	t.Helper()
	cmd := p.command("", args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}

// sandboxEngine is the engine configuration for machines where podman's
// defaults cannot start a container: a root without CAP_SYS_RESOURCE
// cannot raise a limit past its hard limit, while rootful podman asks
// for 1048576 open files ("setrlimit RLIMIT_NOFILE: Operation not
// permitted"); and crun 1.8 refuses a host whose cgroup v2 hierarchy
// holds a controller beside v1 ("cgroups in hybrid mode not supported"),
// where runc runs. It is the machine's configuration, not the unit's: the
// argv a unit carries stays as it is.
const sandboxEngine = `[containers]
default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
`

// engineFor returns p set up to run containers of image on this machine:
// as it is, or with sandboxEngine (and runc, where installed) when
// podman's defaults fail. It fails the test, or skips it outside CI,
// when neither runs a container.
func (p podman) engineFor(t *testing.T, image string) podman {
	t.Helper()
	probe := func(p podman) (string, bool) {
		out, err := p.command("", "run", "--rm", "--network", "none", image, "/bin/true").CombinedOutput()
		return strings.TrimSpace(string(out)), err == nil
	}
	plain, ok := probe(p)
	if ok {
		return p
	}
	conf := sandboxEngine
	if _, err := exec.LookPath("runc"); err == nil {
		conf += "[engine]\nruntime = \"runc\"\n"
	}
	path := filepath.Join(t.TempDir(), "containers.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	sandbox := podman{path: p.path, env: []string{"CONTAINERS_CONF=" + path}}
	fallback, ok := probe(sandbox)
	if ok {
		t.Logf("podman's defaults run no container here (%s); running with %s:\n%s", plain, path, conf)
		return sandbox
	}
	msg := "podman runs no container on this machine: with its defaults: " + plain + "; with\n" + conf + fallback
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return podman{}
}
