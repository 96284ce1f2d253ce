package pipeline

import (
	"path"
	"reflect"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/presets"
	"github.com/omnipd/terraform-provider-omni/internal/systemd"
)

// baseWithEngine is the Qwen3-Omni preset with one more engine setting on
// the stage whose model_stage is given.
func baseWithEngine(t testing.TB, modelStage, line string) string {
	t.Helper()
	src, err := presets.Source("qwen3_omni_moe")
	if err != nil {
		t.Fatal(err)
	}
	anchor := "      model_stage: " + modelStage + "\n"
	if !strings.Contains(string(src), anchor) {
		t.Fatalf("no %q in the preset", anchor)
	}
	return strings.Replace(string(src), anchor, anchor+"      "+line+"\n", 1)
}

// Every path the plan hands the units' processes is judged against the
// units' sandbox: what ProtectHome=yes hides, what PrivateTmp=yes replaces
// with an empty directory, and, for what they write, what
// ProtectSystem=strict leaves read-only and RemoveIPC=yes empties. Each
// refusal names the attribute (or the base config and its stage).
func TestSandboxPaths(t *testing.T) {
	svc := func(s ServiceSpec) Spec { return Spec{Model: seedModel, Service: s} }
	refused := []struct {
		name string
		spec Spec
		path string
		says []string
	}{
		{"config_path under /tmp", Spec{Model: seedModel, ConfigPath: "/tmp/deploy.yaml"}, "config_path", []string{"/tmp", "PrivateTmp=yes", "cannot read"}},
		{"config_path under /var/tmp", Spec{Model: seedModel, ConfigPath: "/var/tmp/omni/deploy.yaml"}, "config_path", []string{"/var/tmp", "PrivateTmp=yes"}},
		{"config_path under /home", Spec{Model: seedModel, ConfigPath: "/home/me/deploy.yaml"}, "config_path", []string{"/home", "ProtectHome=yes"}},
		{"config_path /tmp itself", Spec{Model: seedModel, ConfigPath: "/tmp"}, "config_path", []string{"PrivateTmp=yes"}},
		{"config_path not normalized", Spec{Model: seedModel, ConfigPath: "/var//tmp/./deploy.yaml"}, "config_path", []string{"/var/tmp"}},
		{"cache_dir under /tmp", svc(ServiceSpec{CacheDir: "/tmp/hf"}), "systemd.cache_dir", []string{"/tmp", "PrivateTmp=yes", "cannot write"}},
		{"cache_dir under /var/tmp", svc(ServiceSpec{CacheDir: "/var/tmp/hf"}), "systemd.cache_dir", []string{"/var/tmp"}},
		{"cache_dir under /run/user", svc(ServiceSpec{CacheDir: "/run/user/1000/hf"}), "systemd.cache_dir", []string{"/run/user", "ProtectHome=yes"}},
		{"cache_dir under /root", svc(ServiceSpec{CacheDir: "/root/.cache"}), "systemd.cache_dir", []string{"/root"}},
		{"cache_dir in /dev/shm", svc(ServiceSpec{CacheDir: "/dev/shm/hf"}), "systemd.cache_dir", []string{"/dev/shm", "RemoveIPC=yes"}},
		{"vllm_path under /tmp", svc(ServiceSpec{VLLMPath: "/tmp/venv/bin/vllm"}), "systemd.vllm_path", []string{"/tmp"}},
		{"vllm_path under /home", svc(ServiceSpec{VLLMPath: "/home/me/venv/bin/vllm"}), "systemd.vllm_path", []string{"/home", "ProtectHome=yes"}},
		{"python_path under /var/tmp", svc(ServiceSpec{PythonPath: "/var/tmp/venv/bin/python3"}), "systemd.python_path", []string{"/var/tmp"}},
		{"python_path under /run/user", svc(ServiceSpec{PythonPath: "/run/user/0/py/bin/python3"}), "systemd.python_path", []string{"/run/user"}},
		{"local model under /home", Spec{Model: "/home/me/Qwen3-Omni-30B-A3B-Instruct", Preset: "qwen3_omni_moe"}, "model", []string{"/home", "ProtectHome=yes"}},
		{"local model under /tmp", Spec{Model: "/tmp/models/Qwen3-Omni-30B-A3B-Instruct", Preset: "qwen3_omni_moe"}, "model", []string{"/tmp"}},
		{"a base config stage's model under /root", Spec{Model: seedModel, BaseConfig: baseWithEngine(t, "code2wav", "model: /root/code2wav")}, "base_config",
			[]string{"stage 2 (code2wav)'s engine setting model", "/root"}},
		{"a base config stage's tokenizer under /tmp", Spec{Model: seedModel, BaseConfig: baseWithEngine(t, "talker", "tokenizer: /tmp/tok")}, "base_config",
			[]string{"stage 1 (talker)'s engine setting tokenizer", "/tmp"}},
		{"the split stage's hf_config_path under /home", Spec{Model: seedModel, BaseConfig: baseWithEngine(t, "thinker", "hf_config_path: /home/me/cfg")}, "base_config",
			[]string{"stage 0 (thinker)'s engine setting hf_config_path"}},
		{"prefill engine_args model under /home", Spec{Model: seedModel, Prefill: RoleSpec{EngineArgs: map[string]any{"model": "/home/me/m"}}}, "prefill.engine_args.model", []string{"/home"}},
		{"a stage override's tokenizer under /var/tmp", Spec{Model: seedModel, StageOverrides: map[string]StageOverride{"talker": {EngineArgs: map[string]any{"tokenizer": "/var/tmp/t"}}}},
			"stage_overrides.talker.engine_args.tokenizer", []string{"/var/tmp"}},
		{"download_dir outside the cache", Spec{Model: seedModel, BaseConfig: baseWithEngine(t, "talker", "download_dir: /srv/weights")}, "base_config",
			[]string{"download_dir", "ProtectSystem=strict", "no directory the units open for writing", "inside systemd.cache_dir"}},
		{"download_dir read-only", Spec{Model: seedModel, Decode: RoleSpec{EngineArgs: map[string]any{"download_dir": "/usr/share/w"}}}, "decode.engine_args.download_dir", []string{"ProtectSystem=strict"}},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, ds := Plan(tc.spec)
			got := codesOf(ds, "systemd_path_protected")
			if len(got) != 1 {
				t.Fatalf("want one systemd_path_protected, got:\n%s", describeDiags(ds))
			}
			if got[0].Path.String() != tc.path {
				t.Errorf("blamed %s, want %s", got[0].Path, tc.path)
			}
			for _, s := range tc.says {
				if !strings.Contains(got[0].Detail, s) {
					t.Errorf("detail does not say %q: %s", s, got[0].Detail)
				}
			}
		})
	}
	planned := []struct {
		name string
		spec Spec
	}{
		{"paths the units see", Spec{Model: "/srv/models/Qwen3-Omni-30B-A3B-Instruct", Preset: "qwen3_omni_moe", ConfigPath: "/etc/omni/deploy.yaml",
			Service: ServiceSpec{CacheDir: "/srv/hf", VLLMPath: "/opt/venv/bin/vllm", PythonPath: "/opt/venv/bin/python3"}}},
		{"names that only start like a hidden directory", Spec{Model: "/homework/Qwen3-Omni-30B-A3B-Instruct", Preset: "qwen3_omni_moe", ConfigPath: "/tmpfiles/d.yaml",
			Service: ServiceSpec{CacheDir: "/var/tmp2/hf", VLLMPath: "/rooted/bin/vllm"}}},
		// The service manager reads the environment file before it sets the
		// sandbox up (systemd.exec(5), EnvironmentFile=).
		{"environment_file under /root", svc(ServiceSpec{EnvironmentFile: "/root/omni.env"})},
		{"a config read from /dev/shm", Spec{Model: seedModel, ConfigPath: "/dev/shm/deploy.yaml"}},
		{"a cache below /var/cache", svc(ServiceSpec{CacheDir: "/var/cache/omni/hf"})},
		{"download_dir in the cache", Spec{Model: seedModel, Service: ServiceSpec{CacheDir: "/srv/hf"}, BaseConfig: baseWithEngine(t, "talker", "download_dir: /srv/hf/weights")}},
		{"a hub id as a stage's model", Spec{Model: seedModel, BaseConfig: baseWithEngine(t, "code2wav", "model: Qwen/Qwen3-Omni-30B-A3B-Instruct")}},
	}
	for _, tc := range planned {
		t.Run(tc.name, func(t *testing.T) {
			mustPlan(t, tc.spec)
		})
	}
}

// unitService reads the [Service] directives of a rendered unit, as
// systemd reads the file: comments skipped, each line KEY=VALUE.
func unitService(t *testing.T, unit string) []systemd.Directive {
	t.Helper()
	var out []systemd.Directive
	section := ""
	for _, line := range strings.Split(unit, "\n") {
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "["):
			section = strings.Trim(line, "[]")
		case section == "Service":
			k, v, ok := strings.Cut(line, "=")
			if !ok {
				t.Fatalf("not a directive: %q", line)
			}
			out = append(out, systemd.Directive{Key: k, Value: v})
		}
	}
	return out
}

// The sandbox the paths are judged against is the one every rendered unit
// declares: read back from each golden unit's text, it is the same.
func TestSandboxIsTheUnits(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.name, func(t *testing.T) {
			spec := tc.spec(t)
			want, err := unitSandbox(spec.Service)
			if err != nil {
				t.Fatal(err)
			}
			res := mustPlan(t, spec)
			for _, l := range res.Launches {
				for _, proc := range l.Processes {
					got, err := systemd.SandboxOf(unitService(t, loadedUnit(res, proc)))
					if err != nil {
						t.Fatalf("%s: %v", proc.UnitName, err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s declares %+v, but paths are judged against %+v", proc.UnitName, got, want)
					}
				}
			}
		})
	}
}

// sandboxOracle is what systemd.exec(5) says the units' settings do to a
// path, written out independently of the reader: ProtectHome=yes hides
// /home, /root and /run/user; PrivateTmp=yes gives /tmp and /var/tmp of
// the unit's own; ProtectKernelTunables, ProtectKernelModules and
// ProtectKernelLogs hide a few kernel files; and what a unit writes in
// /dev/shm or /dev/mqueue RemoveIPC=yes removes when it stops. The cache is
// opened for writing (CacheDirectory= or ReadWritePaths=), so only those
// stop a write there.
func sandboxOracle(p string, write bool) bool {
	roots := []string{"/home", "/root", "/run/user", "/tmp", "/var/tmp", "/proc/kallsyms", "/proc/kcore",
		"/usr/lib/modules", "/lib/modules", "/proc/kmsg", "/dev/kmsg"}
	if write {
		roots = append(roots, "/dev/shm", "/dev/mqueue")
	}
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// sandboxFuzzAttrs are the attributes FuzzSandboxPaths sets a path in.
var sandboxFuzzAttrs = []struct {
	attr  string
	write bool
	set   func(*Spec, string)
}{
	{"config_path", false, func(s *Spec, p string) { s.ConfigPath = p }},
	{"model", false, func(s *Spec, p string) { s.Model, s.Preset = p, "qwen3_omni_moe" }},
	{"systemd.cache_dir", true, func(s *Spec, p string) { s.Service.CacheDir = p }},
	{"systemd.vllm_path", false, func(s *Spec, p string) { s.Service.VLLMPath = p }},
	{"systemd.python_path", false, func(s *Spec, p string) { s.Service.PythonPath = p }},
	{"decode.engine_args.tokenizer", false, func(s *Spec, p string) { s.Decode.EngineArgs = map[string]any{"tokenizer": p} }},
}

// A path in any attribute that reaches the units is refused exactly when
// systemd.exec(5) says the units' sandbox keeps their processes from it,
// and the refusal names that attribute.
func FuzzSandboxPaths(f *testing.F) {
	for _, p := range []string{"/home", "/home/me/x", "/homework", "/tmp", "/tmp/a", "/tmpx", "/var/tmp/a", "/var/tmpx",
		"/run/user/1000/x", "/run/users", "/root/.cache", "/rootfs/a", "/dev/shm/hf", "/dev/shmx", "/proc/kcore",
		"/usr/lib/modules/6.1", "/srv/a", "/opt/v/bin/vllm", "/var//tmp/x", "/./tmp/a", "/tmp/../home/a", "/var/cache/x"} {
		for i := range sandboxFuzzAttrs {
			f.Add(p, uint8(i))
		}
	}
	f.Fuzz(func(t *testing.T, p string, which uint8) {
		a := sandboxFuzzAttrs[int(which)%len(sandboxFuzzAttrs)]
		spec := Spec{Model: seedModel}
		a.set(&spec, p)
		_, ds := Plan(spec)
		var blamed []Diagnostic
		for _, d := range codesOf(ds, "systemd_path_protected") {
			if d.Path.String() != a.attr {
				t.Fatalf("%q in %s blamed %s", p, a.attr, d.Path)
			}
			blamed = append(blamed, d)
		}
		judged := strings.HasPrefix(p, "/")
		if strings.HasPrefix(a.attr, "systemd.") {
			judged = systemd.PlainPath(p) == nil
		}
		want := judged && sandboxOracle(path.Clean(p), a.write)
		if want != (len(blamed) > 0) {
			t.Fatalf("%q in %s: refused %v, but systemd.exec(5) says hidden %v:\n%s", p, a.attr, len(blamed) > 0, want, describeDiags(ds))
		}
		if len(blamed) > 1 {
			t.Fatalf("%q in %s refused %d times", p, a.attr, len(blamed))
		}
	})
}

// A setting added to the units' hardening is one the judgement of paths
// reads, and one it cannot read stops the plan rather than passing paths it
// cannot judge.
func TestSandboxFollowsTheUnits(t *testing.T) {
	saved := hardening
	t.Cleanup(func() { hardening = saved })
	spec := Spec{Model: seedModel, ConfigPath: "/srv/secret/deploy.yaml"}
	mustPlan(t, spec)
	hardening = append(append([]systemd.Directive{}, saved...), systemd.Directive{Key: "InaccessiblePaths", Value: "/srv/secret"})
	res, ds := Plan(spec)
	if got := codesOf(ds, "systemd_path_protected"); len(got) != 1 || !strings.Contains(got[0].Detail, "InaccessiblePaths=/srv/secret") {
		t.Errorf("with InaccessiblePaths=/srv/secret: %s", describeDiags(ds))
	}
	if res != nil {
		t.Error("planned")
	}
	hardening = append(append([]systemd.Directive{}, saved...), systemd.Directive{Key: "TemporaryFileSystem", Value: "/srv"})
	if _, ds := Plan(spec); len(codesOf(ds, "render_failed")) != 1 {
		t.Errorf("with a setting the reader does not know: %s", describeDiags(ds))
	}
}
