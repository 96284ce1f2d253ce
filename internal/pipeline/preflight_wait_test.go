package pipeline

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// A headless unit's main process waits for the head's omni master after
// its checks and before it execs vllm: it goes on at once when the port
// answers, and when it does not within head_wait_seconds it exits 1 (not
// the preflight's 78, so systemd starts it again) naming the head's unit
// and host. The head itself does not wait.
func TestPreflightWaitsForTheHead(t *testing.T) {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		testtool.Need(t, "python3-in-/usr/bin")
	}
	dir := t.TempDir()
	record := filepath.Join(dir, "args")
	vllm := filepath.Join(dir, "vllm")
	stub := "#!" + python + "\nimport sys\nopen(" + strconvQuote(record) + ", \"w\").write(\"ran\\n\")\n"
	if err := os.WriteFile(vllm, []byte(stub), 0o755); err != nil {
		t.Fatal(err)
	}
	// Planned with paths the units can see; the test's own are put in
	// their place in each argv.
	spec := Spec{Model: seedModel, ConfigPath: "/etc/omni-test/deploy.yaml", Service: ServiceSpec{VLLMPath: "/opt/omni-test/bin/vllm", PythonPath: python}}
	res := mustPlan(t, spec)
	config := filepath.Join(dir, "deploy.yaml")
	if err := os.WriteFile(config, []byte(res.ConfigYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	local := map[string]string{spec.ConfigPath: config, spec.Service.VLLMPath: vllm}
	procs := res.Launches[0].Processes
	head, headless := procs[0], procs[1]
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	site := fakeSite(t, map[string]string{"vllm-omni": "0.24.0", "vllm": "0.24.0"}, nil)
	bin := fakeGPUs(t, 4)
	// run starts a unit's main process with its wait pointed at addr and
	// bounded to four seconds. Every stage's has the wait, from the
	// template; only a headless one waits.
	run := func(t *testing.T, proc Process) (string, int, time.Duration) {
		t.Helper()
		argv := withLocalPaths(execArgv(proc, spec.Service.withDefaults()), local)
		pointWaitAt(t, argv, addr, head.UnitName)
		os.Remove(record)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = preflightEnv(t, site, bin)
		start := time.Now()
		out, err := cmd.CombinedOutput()
		took := time.Since(start)
		status := testtool.ExitStatus(t, err)
		return string(out), status, took
	}
	out, status, took := run(t, headless)
	if _, err := os.Stat(record); status != 0 || err != nil || took > 4*time.Second {
		t.Errorf("with the head up: status %d, vllm ran %v, took %v:\n%s", status, err == nil, took, out)
	}
	ln.Close()
	<-done
	out, status, took = run(t, headless)
	if _, err := os.Stat(record); err == nil {
		t.Error("vllm ran with no head")
	}
	// The head does not wait for itself: with nothing at addr it starts
	// vllm at once.
	if out, status, took := run(t, head); status != 0 || took > 4*time.Second || strings.Contains(out, "waiting") {
		t.Errorf("the head with no master up: status %d, took %v:\n%s", status, took, out)
	} else if _, err := os.Stat(record); err != nil {
		t.Error("the head did not start vllm")
	}
	host, _, _ := net.SplitHostPort(addr)
	if want := "the head's omni master at " + addr + " did not answer within 4 s; start " + head.UnitName + " on " + host + " first"; status != 1 || !strings.Contains(out, want) {
		t.Errorf("with no head: status %d, want 1 saying %q:\n%s", status, want, out)
	}
	// It waited the whole bound, not a count of tries, and not much longer.
	if took < 4*time.Second || took > 12*time.Second {
		t.Errorf("the failed wait took %v for a bound of 4 s", took)
	}
}

// pointWaitAt checks the wait for the head in a main process's argv (the
// master on loopback, the default bound, the head's unit) and points it at
// addr, bounded to four seconds.
func pointWaitAt(t *testing.T, argv []string, addr, headUnit string) {
	t.Helper()
	seen := map[string]bool{}
	for i := 0; i+1 < len(argv) && argv[i] != "--"; i++ {
		switch argv[i] {
		case "--head":
			if !strings.HasPrefix(argv[i+1], "127.0.0.1:") {
				t.Errorf("--head %s, want the master on loopback", argv[i+1])
			}
			argv[i+1], seen["head"] = addr, true
		case "--head-wait":
			if argv[i+1] != strconv.Itoa(DefaultHeadWaitSeconds) {
				t.Errorf("--head-wait %s, want %d", argv[i+1], DefaultHeadWaitSeconds)
			}
			argv[i+1], seen["wait"] = "4", true
		case "--head-unit":
			if argv[i+1] != headUnit {
				t.Errorf("--head-unit %s, want %s", argv[i+1], headUnit)
			}
			seen["unit"] = true
		}
	}
	if len(seen) != 3 {
		t.Fatalf("the headless main process has not all of --head, --head-wait, --head-unit: %q", argv[3:])
	}
}
