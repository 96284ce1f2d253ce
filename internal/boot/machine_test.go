package boot

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// machine is one booted test machine: an overlay of the boot image with
// its own writable layer, systemd-nspawn running systemd as PID 1 in it,
// and its network namespace.
type machine struct {
	name   string
	root   string // the overlay's merged directory, the machine's /
	netns  string // /run/netns path the machine's network lives in
	log    string // what the container printed: systemd's console
	nspawn *exec.Cmd
	exited chan error
	pid    int // the container's PID 1, as this machine sees it
}

// exitRebooted is systemd-nspawn's exit status when the container's
// systemd reboots (systemd-nspawn(1)): the machine is started again.
const exitRebooted = 133

// newMachine lays the overlay of image for a machine called name, in
// network namespace netns, and writes files into it (paths inside the
// machine), the stand-ins and the cloud-init seed among them. It does not
// boot it: start does.
func newMachine(t *testing.T, image, name, netns string, files map[string]file) *machine {
	t.Helper()
	dir := t.TempDir()
	m := &machine{name: name, netns: netns, root: filepath.Join(dir, "root"), log: filepath.Join(dir, "console.log")}
	upper, work := filepath.Join(dir, "upper"), filepath.Join(dir, "work")
	for _, d := range []string{m.root, upper, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	opts := "lowerdir=" + image + ",upperdir=" + upper + ",workdir=" + work
	if err := syscall.Mount("overlay", m.root, "overlay", 0, opts); err != nil {
		t.Fatalf("mount the overlay of %s: %v", name, err)
	}
	t.Cleanup(func() {
		m.stop()
		if err := syscall.Unmount(m.root, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", m.root, err)
		}
	})
	for path, f := range files {
		m.write(t, path, f)
	}
	return m
}

// file is one file written into a machine before it boots.
type file struct {
	content string
	mode    os.FileMode
	link    string // a symbolic link to this target instead of content
}

func (m *machine) write(t *testing.T, path string, f file) {
	t.Helper()
	p := filepath.Join(m.root, path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(p)
	if f.link != "" {
		if err := os.Symlink(f.link, p); err != nil {
			t.Fatal(err)
		}
		return
	}
	mode := f.mode
	if mode == 0 {
		mode = 0o644
	}
	if err := os.WriteFile(p, []byte(f.content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, mode); err != nil {
		t.Fatal(err)
	}
}

// start boots the machine and returns once its systemd runs.
func (m *machine) start(t *testing.T) {
	t.Helper()
	out, err := os.OpenFile(m.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	m.nspawn = exec.Command("systemd-nspawn", "--quiet", "--boot", "--register=no", "--keep-unit",
		"--directory="+m.root, "--machine="+m.name, "--network-namespace-path="+m.netns,
		"--console=passive", "--timezone=off", "--resolv-conf=off", "--link-journal=no")
	m.nspawn.Stdout, m.nspawn.Stderr = out, out
	// Its own process group: a test's interrupt reaches the test, which
	// stops the machine itself.
	m.nspawn.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := m.nspawn.Start(); err != nil {
		t.Fatalf("systemd-nspawn %s: %v", m.name, err)
	}
	_ = out.Close()
	m.exited = make(chan error, 1)
	go func(c *exec.Cmd, done chan error) { done <- c.Wait() }(m.nspawn, m.exited)
	m.pid = 0
	deadline := time.Now().Add(60 * time.Second)
	for m.pid == 0 {
		select {
		case err := <-m.exited:
			m.exited <- err
			t.Fatalf("%s: systemd-nspawn exited at boot (%v):\n%s", m.name, err, m.console())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no container PID 1 after 60 s:\n%s", m.name, m.console())
		}
		m.pid = containerInit(m.nspawn.Process.Pid)
		time.Sleep(100 * time.Millisecond)
	}
	// systemd answers on its private socket once it has set up.
	m.waitFor(t, "systemd to answer", 60*time.Second, func() error {
		_, err := m.run("systemctl", "show", "-p", "Version")
		return err
	})
}

// containerInit finds the container's PID 1 among nspawn's descendants:
// the process whose innermost PID is 1.
func containerInit(nspawn int) int {
	queue := []int{nspawn}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err == nil {
			for _, line := range strings.Split(string(status), "\n") {
				if f := strings.Fields(line); len(f) > 2 && f[0] == "NSpid:" && f[len(f)-1] == "1" {
					return pid
				}
			}
		}
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
		for _, c := range tasks {
			b, _ := os.ReadFile(c)
			for _, f := range strings.Fields(string(b)) {
				if n, err := strconv.Atoi(f); err == nil {
					queue = append(queue, n)
				}
			}
		}
	}
	return 0
}

// run runs a command inside the machine, in every namespace of its PID 1,
// as root, and returns what it printed (stdout and stderr together).
func (m *machine) run(args ...string) (string, error) {
	return m.runIn(nil, args...)
}

// runIn is run with standard input.
func (m *machine) runIn(stdin []byte, args ...string) (string, error) {
	cmd := exec.Command("nsenter", append([]string{"--target", strconv.Itoa(m.pid), "--all", "--"}, args...)...)
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", "SYSTEMD_COLORS=0", "SYSTEMD_PAGER="}
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// must runs a command that has to succeed.
func (m *machine) must(t *testing.T, args ...string) string {
	t.Helper()
	out, err := m.run(args...)
	if err != nil {
		t.Fatalf("%s: %s: %v\n%s", m.name, strings.Join(args, " "), err, out)
	}
	return out
}

// waitFor polls check until it returns nil, or fails the test with its
// last error after timeout.
func (m *machine) waitFor(t *testing.T, what string, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: waited %s for %s: %v", m.name, timeout, what, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// reboot reboots the machine as an operator would (systemctl reboot), and
// starts it again when nspawn reports the reboot, as a host's firmware
// would.
func (m *machine) reboot(t *testing.T) {
	t.Helper()
	_, _ = m.run("systemctl", "reboot")
	select {
	case err := <-m.exited:
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitRebooted {
			t.Fatalf("%s: systemd-nspawn ended with %v at reboot, want exit status %d:\n%s", m.name, err, exitRebooted, m.console())
		}
	case <-time.After(120 * time.Second):
		t.Fatalf("%s: no reboot within 120 s:\n%s", m.name, m.console())
	}
	m.nspawn = nil
	m.start(t)
}

// stop powers the machine off, and kills it when it does not go in time.
func (m *machine) stop() {
	if m.nspawn == nil || m.nspawn.Process == nil {
		return
	}
	select {
	case err := <-m.exited:
		m.exited <- err
		return
	default:
	}
	// SIGTERM asks nspawn to shut the container down in order.
	_ = m.nspawn.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-m.exited:
		m.exited <- err
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-m.nspawn.Process.Pid, syscall.SIGKILL)
		m.exited <- <-m.exited
	}
}

// console is the tail of what the machine printed, for failure messages.
func (m *machine) console() string {
	b, _ := os.ReadFile(m.log)
	s := string(b)
	if len(s) > 4000 {
		s = "..." + s[len(s)-4000:]
	}
	return s
}
