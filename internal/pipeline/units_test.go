package pipeline

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// unitPython is a Python where the units' sandbox lets them run it, for
// the ExecStart that systemd-analyze verify checks exists: the test's own
// temporary directory is under /tmp, which PrivateTmp=yes hides from them.
func unitPython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	testtool.Need(t, "python3-in-/usr/bin")
	return ""
}

// verifyUnit writes what systemd loads for a process into dir, the plan's
// unit file and the process's drop-in beside it, and has systemd-analyze
// verify the process's unit: no error and not a word of warning. It
// returns the unit's path.
func verifyUnit(t *testing.T, analyze, dir string, res *Result, proc Process) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, filepath.Base(res.SystemdUnit.Path)), []byte(res.SystemdUnit.Content), 0o644); err != nil {
		t.Fatal(err)
	}
	if proc.DropIn != nil {
		dropIn := filepath.Join(dir, proc.UnitName+".d", filepath.Base(proc.DropIn.Path))
		if err := os.MkdirAll(filepath.Dir(dropIn), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dropIn, []byte(proc.DropIn.Content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, proc.UnitName)
	if out, err := exec.Command(analyze, "verify", path).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s\n%s", proc.UnitName, err, out, loadedUnit(res, proc))
	}
	return path
}

// Every unit file the plan writes is short, at most 3000 bytes, and holds no
// inline program (the check script is a file the units name): a unit's
// bytes are in every pipeline's state, which Terraform reads on every plan.
func TestUnitsAreShort(t *testing.T) {
	for _, tc := range append(goldenCases(), containerGoldenCases()...) {
		res := mustPlan(t, tc.spec(t))
		files := []UnitFile{res.SystemdUnit}
		for _, l := range res.Launches {
			for _, proc := range l.Processes {
				if proc.DropIn != nil {
					files = append(files, *proc.DropIn)
				}
			}
		}
		for _, f := range files {
			if len(f.Content) > 3000 {
				t.Errorf("%s: %s is %d bytes, over 3 KB", tc.name, f.Path, len(f.Content))
			}
			if strings.Contains(f.Content, "exec(") || strings.Contains(f.Content, "sys.") {
				t.Errorf("%s: %s holds an inline program", tc.name, f.Path)
			}
		}
	}
}

var exposure = regexp.MustCompile(`Overall exposure level for \S+: (\d+\.\d+)`)

// Every unit of every golden plan is one systemd-analyze verify accepts,
// with an exposure (systemd-analyze security --offline) of at most 7.0.
func TestUnitsVerify(t *testing.T) {
	analyze := testtool.Need(t, "systemd-analyze")
	python := unitPython(t)
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec(t)
			spec.Service.PythonPath = python            // the preflight's Python, which ExecStart runs
			spec.Service.CacheDir = "/srv/models/cache" // ReadWritePaths instead of CacheDirectory
			if tc.name == "seed_qwen3_omni" {
				spec.Service.CacheDir = ""
			}
			res := mustPlan(t, spec)
			dir := t.TempDir()
			for _, l := range res.Launches {
				for _, proc := range l.Processes {
					path := verifyUnit(t, analyze, dir, res, proc)
					out, _ := exec.Command(analyze, "security", "--offline=true", path).CombinedOutput()
					m := exposure.FindSubmatch(out)
					if m == nil {
						t.Fatalf("no exposure level in:\n%s", out)
					}
					if level, _ := strconv.ParseFloat(string(m[1]), 64); level > 7.0 {
						t.Errorf("%s: exposure %.1f, above 7.0", proc.UnitName, level)
					}
				}
			}
		})
	}
}

// No unit holds the boot. multi-user.target wants every unit, and a target
// orders itself after what it wants (systemd.target(5): Wants= gets an
// After=), so it is reached only once each unit has started; a Type=exec
// unit has started when its main process has been executed
// (systemd.service(5)), after every ExecStartPre= has exited. So nothing
// slow may be an ExecStartPre=: the only one is nvidia-modprobe. The wait
// for the head is the main process's (the preflight's --head options), and
// TimeoutStartSec, which covers start-up only, is one value in every plan,
// whatever head_wait_seconds is.
func TestUnitsDoNotHoldTheBoot(t *testing.T) {
	type spec struct {
		name string
		spec Spec
	}
	var specs []spec
	for _, tc := range goldenCases() {
		specs = append(specs, spec{tc.name, tc.spec(t)})
	}
	for _, wait := range []int{10, 3600, 86400} {
		specs = append(specs, spec{"head_wait_seconds " + strconv.Itoa(wait), Spec{Model: seedModel, Service: ServiceSpec{HeadWaitSeconds: ptr(wait)}}},
			spec{"head_wait_seconds " + strconv.Itoa(wait) + " across hosts", Spec{Model: seedModel, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"},
				Service: ServiceSpec{HeadWaitSeconds: ptr(wait)}}})
	}
	const modprobe = `ExecStartPre=+-/bin/sh -c "! command -v nvidia-modprobe >/dev/null || nvidia-modprobe -u -c=0"`
	for _, tc := range specs {
		res := mustPlan(t, tc.spec)
		wait := DefaultHeadWaitSeconds
		if w := tc.spec.Service.HeadWaitSeconds; w != nil {
			wait = *w
		}
		for _, l := range res.Launches {
			for _, proc := range l.Processes {
				lines := strings.Split(loadedUnit(res, proc), "\n")
				var pre []string
				for _, line := range lines {
					if strings.HasPrefix(line, "ExecStartPre=") {
						pre = append(pre, line)
					}
				}
				where := tc.name + ": " + proc.UnitName
				if len(pre) != 1 || pre[0] != modprobe {
					t.Errorf("%s: ExecStartPre= %q, want only nvidia-modprobe's", where, pre)
				}
				for _, want := range []string{"Type=exec", "TimeoutStartSec=" + strconv.Itoa(unitStartTimeout), "WantedBy=multi-user.target"} {
					if !slicesContains(lines, want) {
						t.Errorf("%s has no %s", where, want)
					}
				}
				exec := execArgv(proc, tc.spec.Service.withDefaults())
				headWait := strings.Join([]string{"--head-wait", strconv.Itoa(wait)}, " ")
				// Every stage's main process has the wait, from the template;
				// the preflight waits only before a headless vllm
				// (TestPreflightWaitsForTheHead).
				if got := strings.Contains(strings.Join(exec, " "), " "+headWait+" "); got != (proc.StageID != nil) {
					t.Errorf("%s (%s): its main process has the head's wait: %v", where, proc.Role, got)
				}
			}
		}
	}
}

func slicesContains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// Hostile values that reach a unit either give a unit systemd-analyze
// verify takes without a word, or are refused at plan time; a value never
// joins a line, splits a list or is expanded.
func TestUnitsHostileValues(t *testing.T) {
	analyze := testtool.Need(t, "systemd-analyze")
	python := unitPython(t)
	planned := []Spec{
		{Model: `/models/my "qwen3-omni" 100% $HOME \`, Preset: "qwen3_omni_moe", ConfigPath: `/etc/omni/a b's "c" $x %n;d\.yaml`},
		{Model: seedModel, ConfigPath: `/etc/omni/trailing\`},
		{Model: seedModel, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}, ConfigPath: "/etc/omni/%h.yaml"},
	}
	for i, spec := range planned {
		spec.Service.PythonPath = python
		res, ds := Plan(spec)
		if res == nil {
			t.Errorf("case %d did not plan: %s", i, describeDiags(ds))
			continue
		}
		dir := t.TempDir()
		for _, l := range res.Launches {
			for _, proc := range l.Processes {
				verifyUnit(t, analyze, dir, res, proc)
				// Each directive is one line: no value ends in a backslash.
				for _, line := range strings.Split(loadedUnit(res, proc), "\n") {
					if strings.HasSuffix(line, `\`) {
						t.Errorf("case %d: a line ends in a backslash and joins the next: %s", i, line)
					}
				}
			}
		}
	}
	for _, bad := range []ServiceSpec{
		{CacheDir: "/srv/my models"}, {CacheDir: `/srv/hf\`}, {CacheDir: "/var/cache/a/../b"}, {EnvironmentFile: "/etc/$x.env"},
		{VLLMPath: "/opt/'v'/bin/vllm"}, {PythonPath: "/opt/v/bin/"}, {VLLMPath: "/home/me/venv/bin/vllm"}, {CacheDir: "/root/.cache"},
	} {
		_, ds := Plan(Spec{Model: seedModel, Service: bad})
		if !ds.HasErrors() || len(codesOf(ds, "systemd_path_invalid"))+len(codesOf(ds, "systemd_path_protected")) == 0 {
			t.Errorf("%+v was not refused: %v", bad, ds.Codes())
		}
	}
}

// capabilityLines are a unit's CapabilityBoundingSet= and
// AmbientCapabilities= values.
func capabilityLines(unit string) (bounding, ambient []string) {
	for _, line := range strings.Split(unit, "\n") {
		if v, ok := strings.CutPrefix(line, "CapabilityBoundingSet="); ok {
			bounding = append(bounding, v)
		}
		if v, ok := strings.CutPrefix(line, "AmbientCapabilities="); ok {
			ambient = append(ambient, v)
		}
	}
	return bounding, ambient
}

// wantsBind reports whether a process listens on a port below 1024.
func wantsBind(proc Process) bool {
	for _, p := range proc.Ports {
		if p.Port < 1024 {
			return true
		}
	}
	return false
}

// effectiveCapabilities is a capability setting as systemd reads its
// lines in order: an empty one resets the set, the others add to it.
func effectiveCapabilities(lines []string) []string {
	var set []string
	for _, v := range lines {
		if v == "" {
			set = []string{}
			continue
		}
		set = append(set, strings.Fields(v)...)
	}
	return set
}

// checkBindCapability fails unless the unit holds exactly
// CAP_NET_BIND_SERVICE, in its bounding and ambient sets, when a port its
// process listens on is below 1024, and no capability otherwise.
func checkBindCapability(t *testing.T, what string, res *Result, proc Process) {
	t.Helper()
	lb, la := capabilityLines(loadedUnit(res, proc))
	bounding, ambient := effectiveCapabilities(lb), effectiveCapabilities(la)
	want := []string{}
	if wantsBind(proc) {
		want = []string{"CAP_NET_BIND_SERVICE"}
	}
	if !reflect.DeepEqual(bounding, want) || !reflect.DeepEqual(ambient, want) || len(lb) == 0 {
		t.Errorf("%s: %s listens on %v: CapabilityBoundingSet=%q AmbientCapabilities=%q, want %q", what, proc.UnitName, proc.Ports, lb, la, want)
	}
}

// A unit whose process listens on a port below 1024 runs as an
// unprivileged user, so it gets CAP_NET_BIND_SERVICE and nothing else; no
// other unit gets a capability. systemd-analyze rates the others as before,
// and the privileged ones at most 0.3 worse (the ambient capability).
func TestUnitsPrivilegedPorts(t *testing.T) {
	specs := []Spec{
		{Model: seedModel, APIPort: ptr(80)},
		{Model: seedModel, APIPort: ptr(1023)},
		{Model: seedModel, APIPort: ptr(1024)},
		{Model: seedModel, APIPort: ptr(443), VLLMOmniVersion: "0.22.0"}, // one process for every stage
		{Model: seedModel, PortRange: &PortRange{First: 900, Last: 999}},
		{Model: seedModel, Prefill: RoleSpec{BootstrapPort: ptr(700)}},
		{Model: seedModel, APIPort: ptr(443), PortRange: &PortRange{First: 1022, Last: 1100}, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}},
		{Model: seedModel, Connector: ConnectorSpec{Name: "MultiConnector", ExtraConfig: map[string]any{"connectors": []any{
			map[string]any{"kv_connector": "NixlConnector"}, map[string]any{"kv_connector": "MooncakeConnector"}}}},
			PortRange: &PortRange{First: 1000, Last: 1100}, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}},
	}
	analyze, _ := exec.LookPath("systemd-analyze")
	python := "" // the default, where no systemd-analyze verifies the units
	if analyze != "" {
		python = unitPython(t)
	}
	level := func(path string) float64 {
		out, _ := exec.Command(analyze, "security", "--offline=true", path).CombinedOutput()
		m := exposure.FindSubmatch(out)
		if m == nil {
			t.Fatalf("no exposure level in:\n%s", out)
		}
		v, _ := strconv.ParseFloat(string(m[1]), 64)
		return v
	}
	var unprivileged float64
	if analyze != "" {
		spec := Spec{Model: seedModel, Service: ServiceSpec{PythonPath: python}}
		res := mustPlan(t, spec)
		unprivileged = level(verifyUnit(t, analyze, t.TempDir(), res, res.Launches[0].Processes[0]))
	}
	privileged := 0
	for i, spec := range specs {
		spec.Service.PythonPath = python
		res := mustPlan(t, spec)
		dir := t.TempDir()
		for _, l := range res.Launches {
			for _, proc := range l.Processes {
				checkBindCapability(t, strconv.Itoa(i), res, proc)
				if wantsBind(proc) {
					privileged++
				}
				if analyze == "" {
					continue
				}
				got := level(verifyUnit(t, analyze, dir, res, proc))
				switch {
				case wantsBind(proc) && got > unprivileged+0.3:
					t.Errorf("case %d: %s exposure %.1f, more than 0.3 above %.1f", i, proc.UnitName, got, unprivileged)
				case !wantsBind(proc) && got > unprivileged:
					t.Errorf("case %d: %s exposure %.1f, above %.1f", i, proc.UnitName, got, unprivileged)
				}
			}
		}
	}
	if privileged < 7 {
		t.Errorf("only %d privileged units: the cases do not test the capability", privileged)
	}
}

// Over random API ports and port ranges, on one host and two: the
// capability follows the ports, unit by unit.
func TestUnitsPrivilegedPortsProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 5))
	n := 0
	for range 300 {
		first := 1 + r.IntN(2000)
		spec := Spec{Model: seedModel, APIPort: ptr(1 + r.IntN(2000)), PortRange: &PortRange{First: first, Last: first + 20 + r.IntN(100)}}
		if r.IntN(2) == 0 {
			spec.Prefill.Host, spec.Decode.Host = "10.0.0.1", "10.0.0.2"
		}
		res, _ := Plan(spec)
		if res == nil {
			continue // the API port inside the range, say
		}
		n++
		for _, l := range res.Launches {
			for _, proc := range l.Processes {
				checkBindCapability(t, fmt.Sprintf("%+v", spec), res, proc)
			}
		}
	}
	if n < 200 {
		t.Errorf("only %d of 300 random plans planned", n)
	}
}
