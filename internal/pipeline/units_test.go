package pipeline

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// stubVLLM puts an executable where the units' ExecStart points, since
// systemd-analyze verify checks that it exists.
func stubVLLM(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bin", "vllm")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, filepath.Join(filepath.Dir(path), "python3")} {
		if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// verifyUnit writes a process's unit into dir and has systemd-analyze
// verify it: no error and not a word of warning. It returns the unit's path.
func verifyUnit(t *testing.T, analyze, dir string, proc Process) string {
	t.Helper()
	path := filepath.Join(dir, proc.UnitName)
	if err := os.WriteFile(path, []byte(proc.SystemdUnit), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(analyze, "verify", path).CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("systemd-analyze verify %s: %v\n%s\n%s", proc.UnitName, err, out, proc.SystemdUnit)
	}
	return path
}

var exposure = regexp.MustCompile(`Overall exposure level for \S+: (\d+\.\d+)`)

// Every unit of every golden plan is one systemd-analyze verify accepts,
// with an exposure (systemd-analyze security --offline) of at most 7.0.
func TestUnitsVerify(t *testing.T) {
	analyze := testtool.Need(t, "systemd-analyze")
	vllm := stubVLLM(t)
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec(t)
			spec.Service.VLLMPath = vllm                // python3 beside it is the preflight's Python
			spec.Service.CacheDir = "/srv/models/cache" // ReadWritePaths instead of CacheDirectory
			if tc.name == "seed_qwen3_omni" {
				spec.Service.CacheDir = ""
			}
			res := mustPlan(t, spec)
			dir := t.TempDir()
			for _, l := range res.Launches {
				for _, proc := range l.Processes {
					path := verifyUnit(t, analyze, dir, proc)
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
	const modprobe = `ExecStartPre=+-/bin/sh -c "command -v nvidia-modprobe >/dev/null && nvidia-modprobe -u -c=0"`
	for _, tc := range specs {
		res := mustPlan(t, tc.spec)
		wait := DefaultHeadWaitSeconds
		if w := tc.spec.Service.HeadWaitSeconds; w != nil {
			wait = *w
		}
		for _, l := range res.Launches {
			for _, proc := range l.Processes {
				lines := strings.Split(proc.SystemdUnit, "\n")
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
				if got := strings.Contains(strings.Join(exec, " "), " "+headWait+" "); got != (proc.Role == ProcessHeadless) {
					t.Errorf("%s (%s): its main process waits for the head: %v", where, proc.Role, got)
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
	vllm := stubVLLM(t)
	planned := []Spec{
		{Model: `/models/my "qwen3-omni" 100% $HOME \`, Preset: "qwen3_omni_moe", ConfigPath: `/etc/omni/a b's "c" $x %n;d\.yaml`},
		{Model: seedModel, ConfigPath: `/etc/omni/trailing\`},
		{Model: seedModel, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}, ConfigPath: "/etc/omni/%h.yaml"},
	}
	for i, spec := range planned {
		spec.Service.VLLMPath = vllm
		res, ds := Plan(spec)
		if res == nil {
			t.Errorf("case %d did not plan: %s", i, describeDiags(ds))
			continue
		}
		dir := t.TempDir()
		for _, l := range res.Launches {
			for _, proc := range l.Processes {
				verifyUnit(t, analyze, dir, proc)
				// Each directive is one line: no value ends in a backslash.
				for _, line := range strings.Split(proc.SystemdUnit, "\n") {
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
