package boot

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// restartWait is longer than the units' RestartSec=10: a unit that would
// restart has done so by then.
const restartWait = 14 * time.Second

// TestBootLifecycle boots the gpu-vm example and does to its machine what
// an operator and the machine's own life do: stop, start and restart the
// head, crash a stage and the head, reboot, start on a machine unlike the
// plan, and run the plan's checks against a machine that has drifted.
// Scenarios run in order on one machine; each leaves it up as it found it.
func TestBootLifecycle(t *testing.T) {
	needBoot(t)
	image := bootImage(t)
	b := bootDeployment(t, image, applyExample(t, "gpu-vm"))
	m := b.machines[0]
	head, stages := m.processes[0].unit, m.units()[1:]
	if m.processes[0].role != "head" {
		t.Fatalf("gpu-vm's first unit %s is not the head", head)
	}
	all := m.units()
	script := b.d.checkScript(t, m.planned)
	b.runChecks(t)

	t.Run("stop and start the head", func(t *testing.T) {
		m.must(t, "systemctl", "stop", head)
		m.waitState(t, all, "inactive")
		m.must(t, "systemctl", "start", head)
		m.waitActive(t, all)
		m.waitChecks(t, script)
	})
	t.Run("restart the head", func(t *testing.T) {
		before := m.pids(all)
		m.must(t, "systemctl", "restart", head)
		m.waitActive(t, all)
		m.waitNewPIDs(t, all, before)
		m.waitChecks(t, script)
	})
	t.Run("a crashed stage restarts alone", func(t *testing.T) {
		crashed := stages[1]
		before := m.pids(all)
		m.must(t, "systemctl", "kill", "--kill-whom=main", "--signal=KILL", crashed)
		m.waitNewPIDs(t, []string{crashed}, before)
		m.waitActive(t, all)
		for _, u := range all {
			if u != crashed && m.state(u).pid != before[u] {
				t.Errorf("%s restarted (PID %s, was %s) when only %s crashed", u, m.state(u).pid, before[u], crashed)
			}
		}
		m.waitChecks(t, script)
	})
	t.Run("a crashed head takes its stages down and up", func(t *testing.T) {
		before := m.pids(all)
		m.must(t, "systemctl", "kill", "--kill-whom=main", "--signal=KILL", head)
		m.waitNewPIDs(t, all, before)
		m.waitActive(t, all)
		m.waitChecks(t, script)
	})
	t.Run("reboot", func(t *testing.T) {
		m.reboot(t)
		m.waitUp(t)
		m.waitChecks(t, script)
	})

	// A machine unlike the plan: each affected unit fails once, with one
	// line that says why, and nothing restarts in a loop. A stage whose
	// head failed first is stopped with it (BindsTo=) before its own
	// preflight runs: down, with no line of its own.
	gpus := filepath.Join(m.root, strings.TrimPrefix(gpuCountFile, "/"))
	unlike := []struct {
		name     string
		change   func(t *testing.T) func()
		mustFail []string // units that fail, once
		down     []string // units that are failed or stopped, never restarted
		saying   string   // what each failed unit's one line says
		up       []string // units the change does not touch
	}{
		{name: "too few GPUs", change: func(t *testing.T) func() { return replaceFile(t, gpus, "1\n") },
			mustFail: stages, down: stages, saying: "this host has 1 GPU(s)", up: []string{head}},
		{name: "another vllm-omni release", change: func(t *testing.T) func() { return m.otherRelease(t, "0.22.0") },
			mustFail: []string{head}, down: all, saying: "the plan is for vllm-omni 0.24.0"},
		{name: "nixl missing", change: func(t *testing.T) func() { return m.hideModule(t, "nixl") },
			mustFail: []string{head}, down: all, saying: "needs the Python package nixl._api"},
	}
	for _, c := range unlike {
		t.Run("unlike the plan: "+c.name, func(t *testing.T) {
			m.must(t, append([]string{"systemctl", "stop"}, all...)...)
			restore := c.change(t)
			since := m.now(t)
			// As cloud-init starts them at boot.
			m.must(t, append([]string{"systemctl", "start", "--no-block"}, all...)...)
			time.Sleep(restartWait)
			for _, u := range c.down {
				s := m.state(u)
				lines := m.linesSince(u, since, "vllm-omni preflight: error:")
				switch {
				case s.restarts != "0":
					t.Errorf("%s restarted %s time(s), want none", u, s.restarts)
				case s.active == "failed" && (len(lines) != 1 || !strings.Contains(lines[0], c.saying)):
					t.Errorf("%s failed and logged %q, want one preflight error saying %q", u, lines, c.saying)
				case s.active != "failed" && s.active != "inactive":
					t.Errorf("%s is %s/%s, want failed or stopped", u, s.active, s.sub)
				case s.active == "inactive" && slices.Contains(c.mustFail, u):
					t.Errorf("%s is inactive/%s, want failed", u, s.sub)
				}
			}
			for _, u := range c.up {
				if s := m.state(u); s.active != "active" {
					t.Errorf("%s is %s/%s, want active: the change does not touch it", u, s.active, s.sub)
				}
			}
			restore()
			m.must(t, "systemctl", "reset-failed")
			m.must(t, "systemctl", "start", head)
			m.waitActive(t, all)
			m.waitChecks(t, script)
		})
	}

	// The plan's checks fail on a machine that has drifted, each saying
	// what it saw.
	t.Run("checks fail: a stage stopped", func(t *testing.T) {
		stopped := stages[len(stages)-1]
		m.must(t, "systemctl", "stop", stopped)
		out, err := m.runIn([]byte(script), "bash", "-s")
		if err == nil {
			t.Errorf("the checks pass with %s stopped:\n%s", stopped, out)
		} else if !strings.Contains(out, stopped) {
			t.Errorf("the checks fail without naming %s:\n%s", stopped, out)
		}
		m.must(t, "systemctl", "start", stopped)
		m.waitActive(t, all)
		m.waitChecks(t, script)
	})
	t.Run("checks fail: another config", func(t *testing.T) {
		config := filepath.Join(m.root, strings.TrimPrefix(m.processes[0].pipeline.ConfigPath, "/"))
		old, err := os.ReadFile(config)
		if err != nil {
			t.Fatal(err)
		}
		restore := replaceFile(t, config, string(old)+"# changed by hand\n")
		out, err := m.runIn([]byte(script), "bash", "-s")
		if err == nil {
			t.Errorf("the checks pass with another deploy config:\n%s", out)
		} else if !strings.Contains(out, m.processes[0].pipeline.ConfigPath) {
			t.Errorf("the checks fail without naming %s:\n%s", m.processes[0].pipeline.ConfigPath, out)
		}
		restore()
		m.waitChecks(t, script)
	})
}

// The last scenario: a changed plan gives a new id, which the example's
// relay turns into a new machine, and that machine comes up with the new
// plan.
func TestBootLifecycle_ChangedPlan(t *testing.T) {
	needBoot(t)
	image := bootImage(t)
	d := applyExample(t, "gpu-vm")
	old := d.machines[0]
	d.tf("apply", "-input=false", "-no-color", "-auto-approve", "-var=api_port=8092")
	d.machines, d.pipelines, d.rules = nil, nil, nil
	d.read(t)
	m := d.machines[0]
	if m.id == old.id {
		t.Errorf("a new api_port kept %s (id %s): the relay did not replace it", m.address, m.id)
	}
	if m.userData == old.userData {
		t.Errorf("a new api_port left %s's user_data as it was", m.address)
	}
	b := bootDeployment(t, image, d)
	b.checkPlan(t)
	b.runChecks(t)
	b.checkFirewall(t)
	if d.pipelines[0].APIPort != 8092 {
		t.Errorf("the new plan's API port is %d, want 8092", d.pipelines[0].APIPort)
	}
}

// waitChecks waits until the plan's check script passes on the machine.
func (m *bootedMachine) waitChecks(t *testing.T, script string) {
	t.Helper()
	m.waitFor(t, "the plan's checks to pass", bootTimeout, func() error {
		out, err := m.runIn([]byte(script), "bash", "-s")
		if err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
		return nil
	})
}

// waitState waits until every unit is in the active state want.
func (m *bootedMachine) waitState(t *testing.T, units []string, want string) {
	t.Helper()
	m.waitFor(t, "units "+strings.Join(units, " ")+" "+want, bootTimeout, func() error {
		for _, u := range units {
			if s := m.state(u); s.active != want {
				return fmt.Errorf("%s is %s/%s", u, s.active, s.sub)
			}
		}
		return nil
	})
}

// pids are the units' main PIDs.
func (m *bootedMachine) pids(units []string) map[string]string {
	out := map[string]string{}
	for _, u := range units {
		out[u] = m.state(u).pid
	}
	return out
}

// waitNewPIDs waits until each unit runs a main process other than the one
// it ran before.
func (m *bootedMachine) waitNewPIDs(t *testing.T, units []string, before map[string]string) {
	t.Helper()
	m.waitFor(t, "new main processes of "+strings.Join(units, " "), bootTimeout, func() error {
		for _, u := range units {
			if s := m.state(u); s.active != "active" || s.pid == "0" || s.pid == before[u] {
				return fmt.Errorf("%s is %s/%s with PID %s (was %s)", u, s.active, s.sub, s.pid, before[u])
			}
		}
		return nil
	})
}

// now is the machine's clock, for journalctl --since.
func (m *bootedMachine) now(t *testing.T) string {
	return "@" + strings.TrimSpace(m.must(t, "date", "+%s.%N"))
}

// linesSince are the unit's journal lines since a time that hold text.
func (m *bootedMachine) linesSince(unit, since, text string) []string {
	out, _ := m.run("journalctl", "--no-pager", "-o", "cat", "--since", since, "-u", unit)
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, text) {
			lines = append(lines, l)
		}
	}
	return lines
}

// replaceFile writes content at path (on the host's view of the machine)
// and returns what puts the old content back.
func replaceFile(t *testing.T, path, content string) func() {
	t.Helper()
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.WriteFile(path, old, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// otherRelease makes the machine's vllm-omni record say another version,
// as an image built for another release has.
func (m *bootedMachine) otherRelease(t *testing.T, version string) func() {
	t.Helper()
	// /opt/<venv>/lib/python3.x/site-packages or /usr/local/lib/python3.x/dist-packages
	records, _ := filepath.Glob(filepath.Join(m.root, "*", "*", "lib", "python3*", "*-packages", "vllm_omni-*.dist-info", "METADATA"))
	if len(records) != 1 {
		t.Fatalf("%s: %d vllm-omni records (%q), want 1", m.name, len(records), records)
	}
	old, err := os.ReadFile(records[0])
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(old), "\n") {
		if strings.HasPrefix(l, "Version: ") {
			l = "Version: " + version
		}
		lines = append(lines, l)
	}
	return replaceFile(t, records[0], strings.Join(lines, "\n"))
}

// hideModule moves a top-level package out of the machine's site-packages,
// as an image that lacks it.
func (m *bootedMachine) hideModule(t *testing.T, name string) func() {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(m.root, "*", "*", "lib", "python3*", "*-packages", name))
	if len(dirs) != 1 {
		t.Fatalf("%s: %d %s packages (%q), want 1", m.name, len(dirs), name, dirs)
	}
	hidden := dirs[0] + ".hidden"
	if err := os.Rename(dirs[0], hidden); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := os.Rename(hidden, dirs[0]); err != nil {
			t.Fatal(err)
		}
	}
}
