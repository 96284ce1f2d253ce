package pipeline

import (
	"path"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/systemd"
)

// Every path a plan writes on a machine, or tells the machine to hold, is
// one file (or, for cache_dir, one directory) of its own: two of them are
// never the same path, a file never holds another, and none but the units
// lies in systemd's unit directory. One case per kind of collision, each
// naming the attribute to change and what it collides with.
func TestMachinePathCollisions(t *testing.T) {
	svc := func(s ServiceSpec) Spec { return Spec{Model: seedModel, Service: s} }
	withConfig := func(p string, s ServiceSpec) Spec { return Spec{Model: seedModel, ConfigPath: p, Service: s} }
	refused := []struct {
		name string
		spec Spec
		code string
		path string
		says []string
	}{
		// A path that names a directory, or is not written plainly.
		{"config_path ends in /", withConfig("/etc/vllm-omni/", ServiceSpec{}), "path_not_a_file", "config_path",
			[]string{"ends in /", "names a directory", "the file's own name", `"/etc/vllm-omni/deploy-config.yaml"`}},
		{"config_path is /", withConfig("/", ServiceSpec{}), "path_not_a_file", "config_path", []string{`"/"`, "root directory"}},
		{"config_path with ..", withConfig("/etc/vllm-omni/../deploy.yaml", ServiceSpec{}), "path_not_a_file", "config_path",
			[]string{"not normalized", `"/etc/deploy.yaml"`}},
		{"config_path with .", withConfig("/etc/vllm-omni/./deploy.yaml", ServiceSpec{}), "path_not_a_file", "config_path", []string{"not normalized"}},
		{"config_path with //", withConfig("/etc//deploy.yaml", ServiceSpec{}), "path_not_a_file", "config_path", []string{"not normalized"}},
		{"config_path ends in /..", withConfig("/etc/vllm-omni/..", ServiceSpec{}), "path_not_a_file", "config_path", []string{"not normalized"}},
		{"environment_file is /", svc(ServiceSpec{EnvironmentFile: "/"}), "path_not_a_file", "systemd.environment_file", []string{"root directory"}},
		{"check_script_path is /", svc(ServiceSpec{CheckScriptPath: "/"}), "path_not_a_file", "check_script_path", []string{"root directory"}},
		{"check_script_path not normalized", svc(ServiceSpec{CheckScriptPath: "/usr/local/lib/vllm-omni/"}), "path_not_a_file", "check_script_path", []string{"ends in /"}},

		// Two paths the same.
		{"config_path is check_script_path", withConfig(DefaultCheckScriptPath, ServiceSpec{}), "path_collision", "config_path",
			[]string{"check_script_path", DefaultCheckScriptPath, "check script"}},
		{"config_path is the default environment_file", withConfig(DefaultEnvironmentFile, ServiceSpec{}), "path_collision", "config_path",
			[]string{"systemd.environment_file", DefaultEnvironmentFile}},
		{"config_path is the environment_file given", withConfig("/etc/omni/a", ServiceSpec{EnvironmentFile: "/etc/omni/a"}), "path_collision", "config_path",
			[]string{"systemd.environment_file"}},
		{"config_path is the template unit", withConfig("/etc/systemd/system/vllm-omni-stage@.service", ServiceSpec{}), "path_collision", "config_path",
			[]string{"systemd_unit.path", "template unit"}},
		{"config_path is a drop-in", withConfig("/etc/systemd/system/vllm-omni-stage@1.service.d/plan.conf", ServiceSpec{}), "path_collision", "config_path",
			[]string{"stage 1's drop-in", "systemd_dropin.path"}},
		{"config_path is the template of a unit_prefix given", withConfig("/etc/systemd/system/pd-a-stage@.service", ServiceSpec{UnitPrefix: "pd-a"}), "path_collision", "config_path",
			[]string{"template unit"}},
		{"config_path is the whole-pipeline unit", withConfig("/etc/systemd/system/vllm-omni.service", ServiceSpec{}), "path_collision", "config_path",
			[]string{"whole-pipeline unit"}},
		{"config_path is cache_dir", withConfig(DefaultCacheDir, ServiceSpec{}), "path_collision", "config_path", []string{"systemd.cache_dir", "a directory, which cannot also be a file"}},
		{"config_path is vllm_path", withConfig("/opt/venv/bin/vllm", ServiceSpec{VLLMPath: "/opt/venv/bin/vllm"}), "path_collision", "config_path",
			[]string{"systemd.vllm_path", "overwrite"}},
		{"config_path is python_path", withConfig("/usr/bin/python3", ServiceSpec{PythonPath: "/usr/bin/python3"}), "path_collision", "config_path", []string{"systemd.python_path"}},
		{"environment_file is check_script_path", svc(ServiceSpec{EnvironmentFile: DefaultCheckScriptPath}), "path_collision", "systemd.environment_file", []string{"check_script_path"}},
		{"environment_file is cache_dir", svc(ServiceSpec{EnvironmentFile: "/srv/hf", CacheDir: "/srv/hf"}), "path_collision", "systemd.environment_file", []string{"systemd.cache_dir"}},
		{"environment_file is the template unit", svc(ServiceSpec{EnvironmentFile: "/etc/systemd/system/vllm-omni-stage@.service"}), "path_collision", "systemd.environment_file",
			[]string{"template unit"}},

		// A file that another path lies under.
		{"config_path holds environment_file", withConfig("/etc/vllm-omni", ServiceSpec{}), "path_collision", "config_path",
			[]string{"systemd.environment_file", "lies under it"}},
		{"config_path holds cache_dir", withConfig("/srv/omni", ServiceSpec{CacheDir: "/srv/omni/hf"}), "path_collision", "config_path", []string{"systemd.cache_dir"}},
		{"config_path holds the units", withConfig("/etc/systemd", ServiceSpec{}), "path_collision", "config_path", []string{"/etc/systemd/system"}},
		{"config_path under check_script_path", withConfig(DefaultCheckScriptPath+"/deploy.yaml", ServiceSpec{}), "path_collision", "config_path",
			[]string{"check_script_path", "is a file"}},
		{"config_path under environment_file", withConfig("/etc/omni/secrets.env/deploy.yaml", ServiceSpec{EnvironmentFile: "/etc/omni/secrets.env"}), "path_collision", "config_path",
			[]string{"systemd.environment_file"}},
		{"cache_dir under config_path", withConfig("/srv/omni/deploy.yaml", ServiceSpec{CacheDir: "/srv/omni/deploy.yaml/hf"}), "path_collision", "config_path",
			[]string{"systemd.cache_dir"}},
		{"environment_file holds the check script", svc(ServiceSpec{EnvironmentFile: "/usr/local/lib/vllm-omni"}), "path_collision", "systemd.environment_file",
			[]string{"check_script_path"}},

		// A file in the units' directory, or a directory that holds them.
		{"config_path in the unit directory", withConfig("/etc/systemd/system/deploy.yaml", ServiceSpec{}), "path_collision", "config_path",
			[]string{"/etc/systemd/system", "systemd reads"}},
		{"config_path in a drop-in directory", withConfig("/etc/systemd/system/vllm-omni-stage@0.service.d/deploy.conf", ServiceSpec{}), "path_collision", "config_path",
			[]string{"/etc/systemd/system"}},
		{"environment_file in the unit directory", svc(ServiceSpec{EnvironmentFile: "/etc/systemd/system/vllm-omni.env"}), "path_collision", "systemd.environment_file",
			[]string{"/etc/systemd/system"}},
		{"cache_dir holds the units", svc(ServiceSpec{CacheDir: "/etc/systemd"}), "path_collision", "systemd.cache_dir", []string{"units", "write"}},
		{"cache_dir is the unit directory", svc(ServiceSpec{CacheDir: "/etc/systemd/system"}), "path_collision", "systemd.cache_dir", []string{"/etc/systemd/system", "rewrite"}},
		{"cache_dir is the deploy config", svc(ServiceSpec{CacheDir: DefaultConfigPath}), "path_collision", "systemd.cache_dir", []string{"config_path", "a file, which cannot also be a directory"}},
		{"cache_dir holds the check script", svc(ServiceSpec{CacheDir: "/usr/local/lib/vllm-omni"}), "path_collision", "systemd.cache_dir",
			[]string{"check_script_path", "rewrite"}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			res, ds := Plan(tc.spec)
			if res != nil {
				t.Fatalf("Plan succeeded; want %s at %s:\n%s", tc.code, tc.path, describeDiags(ds))
			}
			var found *Diagnostic
			for _, d := range codesOf(ds, tc.code) {
				if d.Path.String() == tc.path {
					found = &d
				}
			}
			if found == nil {
				t.Fatalf("no %s at %s; got:\n%s", tc.code, tc.path, describeDiags(ds))
			}
			if found.Severity != SeverityError {
				t.Errorf("severity %v, want error", found.Severity)
			}
			text := found.Summary + ": " + found.Detail
			for _, s := range tc.says {
				if !strings.Contains(text, s) {
					t.Errorf("message %q does not say %q", text, s)
				}
			}
			if !fixHint.MatchString(found.Detail) {
				t.Errorf("detail %q does not say how to fix it", found.Detail)
			}
			// Judged once: no other attribute is blamed for the same
			// collision, and the blamed one once.
			if n := len(codesOf(ds, "path_collision")) + len(codesOf(ds, "path_not_a_file")); n != 1 {
				t.Errorf("%d path diagnostics, want 1:\n%s", n, describeDiags(ds))
			}
		})
	}

	// Paths that only look alike, or that share what they may share.
	accepted := []struct {
		name string
		spec Spec
	}{
		{"the defaults", Spec{Model: seedModel}},
		{"config_path under cache_dir", withConfig(DefaultCacheDir+"/deploy.yaml", ServiceSpec{})},
		{"environment_file under cache_dir", svc(ServiceSpec{EnvironmentFile: DefaultCacheDir + "/secrets.env"})},
		{"config_path beside the check script", withConfig("/usr/local/lib/vllm-omni/deploy.yaml", ServiceSpec{})},
		{"config_path that starts like the environment_file", withConfig(DefaultEnvironmentFile+".yaml", ServiceSpec{})},
		{"config_path that starts like the unit directory", withConfig("/etc/systemd/system-deploy.yaml", ServiceSpec{})},
		{"config_path beside the unit directory", withConfig("/etc/systemd/deploy.yaml", ServiceSpec{})},
		{"config_path with a space", withConfig("/srv/deploy config.yaml", ServiceSpec{})},
		{"config_path in a directory named like a unit", withConfig("/srv/vllm-omni-stage@.service/deploy.yaml", ServiceSpec{})},
		{"cache_dir beside everything", svc(ServiceSpec{CacheDir: "/srv/hf"})},
		{"vllm_path and python_path in one directory", svc(ServiceSpec{VLLMPath: "/opt/venv/bin/vllm", PythonPath: "/opt/venv/bin/python3"})},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := Plan(tc.spec)
			if got := append(codesOf(ds, "path_collision"), codesOf(ds, "path_not_a_file")...); len(got) > 0 {
				t.Fatalf("refused:\n%s", describeDiags(ds))
			}
		})
	}
}

// One plan reports every collision at once, each at its own attribute.
func TestMachinePathCollisions_AllInOnePass(t *testing.T) {
	_, ds := Plan(Spec{Model: seedModel, ConfigPath: DefaultCheckScriptPath, Service: ServiceSpec{
		EnvironmentFile: "/", CacheDir: "/usr/local/lib/vllm-omni",
	}})
	var got []string
	for _, d := range append(codesOf(ds, "path_collision"), codesOf(ds, "path_not_a_file")...) {
		got = append(got, d.Path.String()+" "+d.Code.String())
	}
	want := []string{"config_path path_collision", "systemd.cache_dir path_collision", "systemd.environment_file path_not_a_file"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s\nall:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), describeDiags(ds))
	}
}

// machinePathAttrs are the attributes FuzzMachinePathPairs puts a path in.
var machinePathAttrs = []struct {
	attr string
	set  func(*Spec, string)
}{
	{"config_path", func(s *Spec, v string) { s.ConfigPath = v }},
	{"systemd.environment_file", func(s *Spec, v string) { s.Service.EnvironmentFile = v }},
	{"systemd.cache_dir", func(s *Spec, v string) { s.Service.CacheDir = v }},
	{"systemd.vllm_path", func(s *Spec, v string) { s.Service.VLLMPath = v }},
	{"systemd.python_path", func(s *Spec, v string) { s.Service.PythonPath = v }},
	{"check_script_path", func(s *Spec, v string) { s.Service.CheckScriptPath = v }},
}

// FuzzMachinePathPairs puts two paths in two of the attributes that name
// paths on the machine. Whatever they are, the plan does not panic, blames
// only attributes it was given, and, when it succeeds, writes files that
// are each their own: no two of the config, the check script, the
// environment file, the unit and its drop-ins, the cache, vllm and Python
// are the same path, no file holds another, and the units' directory and
// the cache hold nothing they must not. The other way round, two plain
// paths that are neither the same nor one under the other, outside the
// units' directory and the defaults' trees, are never refused as colliding.
func FuzzMachinePathPairs(f *testing.F) {
	seeds := []string{"/etc/vllm-omni/deploy-config.yaml", DefaultEnvironmentFile, DefaultCheckScriptPath, DefaultCacheDir, "/etc/vllm-omni",
		"/etc/vllm-omni/", "/", "/etc/systemd/system/vllm-omni-stage@.service", "/etc/systemd/system/vllm-omni-stage@0.service.d/plan.conf",
		"/etc/systemd", "/etc", "/srv/a", "/srv/a/b", "/srv/a/../a", "/srv//a", "/usr/local/bin/vllm", "/usr/bin/python3", "relative", ""}
	for i, a := range seeds {
		for j, b := range seeds {
			if (i+j)%3 == 0 {
				f.Add(a, b, uint8(i), uint8(j))
			}
		}
	}
	f.Fuzz(func(t *testing.T, a, b string, wa, wb uint8) {
		x, y := machinePathAttrs[int(wa)%len(machinePathAttrs)], machinePathAttrs[int(wb)%len(machinePathAttrs)]
		if x.attr == y.attr {
			return
		}
		spec := Spec{Model: seedModel}
		x.set(&spec, a)
		y.set(&spec, b)
		res, ds := Plan(spec)
		for _, d := range append(codesOf(ds, "path_collision"), codesOf(ds, "path_not_a_file")...) {
			if p := d.Path.String(); p != x.attr && p != y.attr {
				t.Fatalf("%s=%q %s=%q blamed %s:\n%s", x.attr, a, y.attr, b, p, describeDiags(ds))
			}
		}
		if res != nil {
			holdsMachinePaths(t, spec, res)
		}
		plain := func(v string) bool { return systemd.PlainPath(v) == nil && v != "/" }
		away := func(v string) bool {
			for _, p := range []string{DefaultConfigPath, DefaultEnvironmentFile, DefaultCheckScriptPath, DefaultCacheDir, DefaultVLLMPath, UnitDir} {
				if v == p || under(v, p) || under(p, v) {
					return false
				}
			}
			return true
		}
		if plain(a) && plain(b) && a != b && !under(a, b) && !under(b, a) && away(a) && away(b) {
			if got := append(codesOf(ds, "path_collision"), codesOf(ds, "path_not_a_file")...); len(got) > 0 {
				t.Fatalf("%s=%q %s=%q refused:\n%s", x.attr, a, y.attr, b, describeDiags(ds))
			}
		}
	})
}

// holdsMachinePaths holds a successful plan to its promise: every path it
// writes or names on the machine is its own.
func holdsMachinePaths(t *testing.T, spec Spec, res *Result) {
	t.Helper()
	svc := spec.Service.withDefaults()
	config := res.ConfigPath
	type file struct{ what, path string }
	files := []file{{"config_path", config}, {"check_script_path", res.CheckScriptPath},
		{"environment_file", svc.EnvironmentFile}, {"systemd_unit.path", res.SystemdUnit.Path}, {"vllm_path", svc.VLLMPath}}
	if strings.HasPrefix(svc.PythonPath, "/") {
		files = append(files, file{"python_path", svc.PythonPath})
	}
	for _, l := range res.Launches {
		for _, proc := range l.Processes {
			if proc.DropIn != nil {
				files = append(files, file{"drop-in", proc.DropIn.Path})
			}
		}
	}
	for _, f := range files {
		if f.path == "/" || path.Clean(f.path) != f.path {
			t.Fatalf("%s %q is not a file's path", f.what, f.path)
		}
		if f.path == svc.CacheDir || under(svc.CacheDir, f.path) {
			t.Fatalf("%s %q is or holds cache_dir %q", f.what, f.path, svc.CacheDir)
		}
		unit := f.what == "systemd_unit.path" || f.what == "drop-in"
		if under(f.path, UnitDir) != unit {
			t.Fatalf("%s %q: in %s %v", f.what, f.path, UnitDir, !unit)
		}
		if (unit || f.what == "check_script_path") && under(f.path, svc.CacheDir) {
			t.Fatalf("%s %q lies in cache_dir %q, which the processes write", f.what, f.path, svc.CacheDir)
		}
		for _, g := range files {
			if f == g || (f.what == "vllm_path" || f.what == "python_path") && (g.what == "vllm_path" || g.what == "python_path") {
				continue
			}
			if f.path == g.path || under(g.path, f.path) {
				t.Fatalf("%s %q and %s %q collide", f.what, f.path, g.what, g.path)
			}
		}
	}
}
