package boot

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testtool.RemoveProviderMirror()
	os.Exit(code)
}

// bootTimeout bounds each wait of the test: cloud-init done, units active,
// the API ready. A machine that needs longer is broken.
const bootTimeout = 180 * time.Second

// booted is a deployment's machines, up.
type booted struct {
	d        *deployment
	machines []*bootedMachine
	client   string // the LAN namespace the test reaches machines from
}

type bootedMachine struct {
	*machine
	planned   plannedMachine
	address   string
	processes []process
}

// TestBoot boots every example under examples/deployments and checks each
// machine against its plan: cloud-init done with no error, every unit it
// enables active, each process given exactly the argv and environment its
// unit says, headless stages registered with the head's master, and every
// check the plan hands the operator passing.
func TestBoot(t *testing.T) {
	needBoot(t)
	image := bootImage(t)
	entries, err := os.ReadDir(filepath.Join("..", "..", "examples", "deployments"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		t.Run(e.Name(), func(t *testing.T) {
			start := time.Now()
			d := applyExample(t, e.Name())
			if why := d.unbootable(); why != "" {
				t.Skip(why)
			}
			b := bootDeployment(t, image, d)
			b.checkPlan(t)
			b.runChecks(t)
			b.checkFirewall(t)
			b.checkSharedMemory(t)
			t.Logf("%s: booted and checked %d machine(s) in %s", e.Name(), len(b.machines), time.Since(start).Round(time.Second))
		})
	}
	// A release that loads only the stages dialect runs prefill-decode
	// through the pipeline registration the plan writes: each unit's
	// preflight execs the launcher, which imports it before the stand-in's
	// CLI resolves the config's pipeline: (the stand-in fails the start on
	// a name the registry lacks). The thinker alone has no edge through
	// /dev/shm, so that check is left out.
	t.Run("gpu-vm-stages-only", func(t *testing.T) {
		start := time.Now()
		b := bootDeployment(t, image, applyExample(t, "gpu-vm", "model="+thinkingModel, "vllm_omni_version="+stagesOnlyRelease))
		b.checkPlan(t)
		b.runChecks(t)
		b.checkFirewall(t)
		t.Logf("gpu-vm on vllm-omni %s: booted and checked %d machine(s) in %s", stagesOnlyRelease, len(b.machines), time.Since(start).Round(time.Second))
	})
}

// The stages-only case: the release read at its own commit that loads only
// the stages dialect, and a model whose pipeline is the thinker alone.
const (
	stagesOnlyRelease = "0.27.0rc1"
	thinkingModel     = "Qwen/Qwen3-Omni-30B-A3B-Thinking"
)

// bootDeployment boots every machine of d on a LAN of its own, each from
// its own user_data, and waits until each is up: cloud-init done and every
// unit active.
func bootDeployment(t *testing.T, image string, d *deployment) *booted {
	t.Helper()
	b := &booted{d: d}
	l := newLAN(t, d.name)
	python := imagePython(t, image)
	for i, pm := range d.machines {
		address := pm.ip
		if address == "" {
			address = fmt.Sprintf("10.30.0.%d", 11+i)
		}
		bm := &bootedMachine{planned: pm, address: address, processes: d.processes(t, pm)}
		py, vllm := machineInstall(t, bm)
		files := standin{release: machineRelease(t, bm), gpus: machineGPUs(bm), python: python, unitPy: py, vllm: vllm}.files(t)
		for p, f := range seed(d.name, i, pm.userData) {
			files[p] = f
		}
		name := fmt.Sprintf("omni-%s-%d", l.id, i)
		bm.machine = newMachine(t, image, name, l.host(address), files)
		b.machines = append(b.machines, bm)
	}
	b.client = l.host(clientAddress(b.machines[0].address))
	for _, m := range b.machines {
		m.start(t)
	}
	for _, m := range b.machines {
		m.waitUp(t)
	}
	return b
}

// clientAddress is an address on the machines' /16 that none of them has.
func clientAddress(machine string) string {
	parts := strings.Split(machine, ".")
	return parts[0] + "." + parts[1] + ".255.254"
}

// seed is the NoCloud seed a cloud hands the machine: its user_data and an
// instance id, and the image's one setting, that no network is configured
// by cloud-init (the test sets each machine's address itself).
func seed(deployment string, i int, userData string) map[string]file {
	return map[string]file{
		"/var/lib/cloud/seed/nocloud/user-data":   {content: userData},
		"/var/lib/cloud/seed/nocloud/meta-data":   {content: fmt.Sprintf("instance-id: %s-%d\nlocal-hostname: %s-%d\n", deployment, i, deployment, i)},
		"/etc/cloud/cloud.cfg.d/90-boot-test.cfg": {content: "datasource_list: [NoCloud, None]\nnetwork: {config: disabled}\n"},
	}
}

// machineRelease is the release the machine's pipelines are planned for:
// the image a real machine would be built with.
func machineRelease(t *testing.T, m *bootedMachine) releases.Release {
	t.Helper()
	var version string
	for _, p := range m.processes {
		if version != "" && p.pipeline.Release != version {
			t.Fatalf("%s runs pipelines for vllm-omni %s and %s; one image holds one release", m.planned.address, version, p.pipeline.Release)
		}
		version = p.pipeline.Release
	}
	r, problem := releases.Lookup(version)
	if problem != nil {
		t.Fatalf("vllm-omni %s: %s", version, problem.Detail)
	}
	return r
}

// machineInstall is where the machine's units look for Python and vllm:
// one place, as one image has one install.
func machineInstall(t *testing.T, m *bootedMachine) (python, vllm string) {
	t.Helper()
	for _, p := range m.processes {
		if python != "" && (p.python != python || p.argv[0] != vllm) {
			t.Fatalf("%s runs vllm from %s and %s; the stand-in has one install", m.planned.address, vllm, p.argv[0])
		}
		python, vllm = p.python, p.argv[0]
	}
	return python, vllm
}

// machineGPUs is how many GPUs the machine has: what its resource asks for
// where it says, else what its busiest pipeline needs on it.
func machineGPUs(m *bootedMachine) int {
	if m.planned.gpus > 0 {
		return m.planned.gpus
	}
	n := 0
	for _, p := range m.processes {
		for _, l := range p.pipeline.Launches {
			for _, pr := range l.Processes {
				if pr.UnitName == p.unit {
					n = max(n, l.GPUCount)
				}
			}
		}
	}
	return n
}

// waitUp waits until cloud-init is done and reports no error, and every
// unit the machine enables is active.
func (m *bootedMachine) waitUp(t *testing.T) {
	t.Helper()
	start := time.Now()
	out, err := m.run("timeout", fmt.Sprint(int(bootTimeout.Seconds())), "cloud-init", "status", "--wait", "--long")
	if err != nil || !strings.Contains(out, "status: done") {
		t.Fatalf("%s: cloud-init status: %v\n%s\n%s", m.name, err, out, m.console())
	}
	var result struct {
		V1 struct {
			Errors []string `json:"errors"`
		} `json:"v1"`
	}
	raw := m.must(t, "cat", "/run/cloud-init/result.json")
	if err := json.Unmarshal([]byte(raw), &result); err != nil {
		t.Fatalf("%s: /run/cloud-init/result.json: %v\n%s", m.name, err, raw)
	}
	if len(result.V1.Errors) > 0 {
		t.Errorf("%s: cloud-init reports errors: %q", m.name, result.V1.Errors)
	}
	m.waitActive(t, m.units())
	t.Logf("%s (%s): cloud-init done and %d unit(s) active %s after boot", m.name, m.address, len(m.processes), time.Since(start).Round(time.Second))
}

func (m *bootedMachine) units() []string {
	var out []string
	for _, p := range m.processes {
		out = append(out, p.unit)
	}
	return out
}

// waitActive waits until every unit is active, with its main process past
// the preflight: its record written.
func (m *bootedMachine) waitActive(t *testing.T, units []string) {
	t.Helper()
	m.waitFor(t, "units "+strings.Join(units, " ")+" active", bootTimeout, func() error {
		for _, u := range units {
			s := m.state(u)
			if s.active == "failed" {
				t.Fatalf("%s: %s failed:\n%s", m.name, u, m.journal(u))
			}
			if s.active != "active" {
				return fmt.Errorf("%s is %s/%s\n%s", u, s.active, s.sub, m.journal(u))
			}
			// Type=exec is active once the preflight runs; vllm runs in
			// the same process once the preflight has passed.
			if r, err := m.readRecord(u); err != nil || fmt.Sprint(r.PID) != s.pid {
				return fmt.Errorf("%s (PID %s) is not past its preflight yet\n%s", u, s.pid, m.journal(u))
			}
		}
		return nil
	})
}

// unitState is what systemctl show says of a unit.
type unitState struct {
	active, sub, result string
	restarts            string
	pid                 string
}

func (m *bootedMachine) state(unit string) unitState {
	// systemctl show prints the properties in its own order.
	out, _ := m.run("systemctl", "show", "-p", "ActiveState,SubState,Result,NRestarts,MainPID", unit)
	v := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, val, ok := strings.Cut(line, "="); ok {
			v[k] = val
		}
	}
	return unitState{active: v["ActiveState"], sub: v["SubState"], result: v["Result"], restarts: v["NRestarts"], pid: v["MainPID"]}
}

// journal is the unit's log of this boot, message text only.
func (m *bootedMachine) journal(unit string) string {
	out, _ := m.run("journalctl", "-b", "--no-pager", "-o", "cat", "-u", unit)
	return out
}

// record is what the stand-in vllm wrote of its start.
type record struct {
	Argv []string          `json:"argv"`
	Env  map[string]string `json:"env"`
	PID  int               `json:"pid"`
}

func (m *bootedMachine) record(t *testing.T, p process) record {
	t.Helper()
	r, err := m.readRecord(p.unit)
	if err != nil {
		t.Fatalf("%s: %s left no record: %v\n%s", m.name, p, err, m.journal(p.unit))
	}
	return r
}

// readRecord reads the record the unit's stand-in wrote in the cache
// directory its unit gives it.
func (m *bootedMachine) readRecord(unit string) (record, error) {
	var r record
	raw, err := os.ReadFile(filepath.Join(m.root, "var", "cache", "vllm-omni", "vllm-standin", unit+".json"))
	if err == nil {
		err = json.Unmarshal(raw, &r)
	}
	return r, err
}

// systemdEnv are the variables systemd sets for every service
// (systemd.exec(5), "Environment Variables in Spawned Processes") and the
// locale it passes on: a process may have these beside the plan's.
var systemdEnv = []string{"LANG", "USER", "LOGNAME", "SHELL", "INVOCATION_ID", "JOURNAL_STREAM",
	"SYSTEMD_EXEC_PID", "CACHE_DIRECTORY", "MANAGERPID"}

// checkPlan checks each process against the plan: its argv is its unit's
// (and the head's is serve_args), its environment is its unit's and
// systemd's with no unit word left, and each headless stage on another
// machine registered with the head from its own address.
func (b *booted) checkPlan(t *testing.T) {
	t.Helper()
	heads := map[*plannedPipeline]*bootedMachine{}
	for _, m := range b.machines {
		for _, p := range m.processes {
			if p.role == "head" {
				heads[p.pipeline] = m
			}
		}
	}
	for _, m := range b.machines {
		for _, p := range m.processes {
			r := m.record(t, p)
			want := append([]string{p.argv[0]}, p.argv[1:]...)
			if !slices.Equal(r.Argv, want) {
				t.Errorf("%s: %s got argv\n  %q\nits unit says\n  %q", m.name, p, r.Argv, want)
			}
			if p.role == "head" && !slices.Equal(r.Argv[1:], p.pipeline.ServeArgs[1:]) {
				t.Errorf("%s: the head %s got argv %q, serve_args says %q", m.name, p, r.Argv[1:], p.pipeline.ServeArgs[1:])
			}
			for k, v := range p.env {
				if got, ok := r.Env[k]; !ok || got != v {
					t.Errorf("%s: %s got %s=%q (set: %v), its unit sets %q", m.name, p, k, got, ok, v)
				}
			}
			var extra []string
			for k := range r.Env {
				if _, planned := p.env[k]; !planned && !slices.Contains(systemdEnv, k) {
					extra = append(extra, k+"="+r.Env[k])
				}
			}
			sort.Strings(extra)
			if len(extra) > 0 {
				t.Errorf("%s: %s got variables neither its unit nor systemd sets: %q", m.name, p, extra)
			}
			head := heads[p.pipeline]
			if p.role != "head" && head != nil && head != m {
				want := fmt.Sprintf("stage-%d registered from %s:", p.stageID, m.address)
				if !strings.Contains(head.journal(head.headUnit(p.pipeline)), want) {
					t.Errorf("%s: the head's journal on %s has no %q", m.name, head.name, want)
				}
			}
		}
	}
}

func (m *bootedMachine) headUnit(pl *plannedPipeline) string {
	for _, p := range m.processes {
		if p.pipeline == pl && p.role == "head" {
			return p.unit
		}
	}
	return ""
}

// runChecks runs each machine's check script as the operator would
// (`... | sudo bash`), heads' machines first: the head's smoke request is
// what decode's KV handoff lines need. Each must pass.
func (b *booted) runChecks(t *testing.T) {
	t.Helper()
	for _, m := range b.ordered() {
		script := b.d.checkScript(t, m.planned)
		m.waitFor(t, "the checks of "+m.planned.address+" to pass", bootTimeout, func() error {
			out, err := m.runIn([]byte(script), "bash", "-s")
			if err != nil {
				return fmt.Errorf("%v\n%s", err, out)
			}
			return nil
		})
	}
}

// ordered is the machines with the heads' first.
func (b *booted) ordered() []*bootedMachine {
	out := slices.Clone(b.machines)
	sort.SliceStable(out, func(i, j int) bool { return out[i].hasHead() && !out[j].hasHead() })
	return out
}

func (m *bootedMachine) hasHead() bool {
	for _, p := range m.processes {
		if p.role == "head" {
			return true
		}
	}
	return false
}

// checkSharedMemory holds the units' sandbox to what vllm-omni's stages
// share on a host: after the checks' smoke request, some stage took its
// input from /dev/shm, where the stage before it on its host left it, and
// none failed to.
func (b *booted) checkSharedMemory(t *testing.T) {
	t.Helper()
	took := 0
	for _, m := range b.machines {
		for _, p := range m.processes {
			log := m.journal(p.unit)
			took += strings.Count(log, "bytes of input")
			if strings.Contains(log, "not readable in /dev/shm") {
				t.Errorf("%s: %s could not read its input from /dev/shm:\n%s", m.name, p, log)
			}
		}
	}
	if took == 0 {
		t.Errorf("no stage took its input from /dev/shm after the smoke request")
	}
}
