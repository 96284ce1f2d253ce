package pipeline

import (
	"strings"
	"testing"
)

// The judgement calls of issue 34 the plan makes on systemd settings: the
// overflow user and a cache_dir among the system's own directories are
// refused, naming the attribute and why; before, both planned.
func TestJudgementCallsRefused(t *testing.T) {
	m := seedModel
	runPlanDiagnostics(t, []planDiagCase{
		{"systemd.user nobody", func(*testing.T) Spec { return Spec{Model: m, Service: ServiceSpec{User: "nobody"}} }, "systemd_user_invalid", "systemd.user"},
		{"systemd.user nfsnobody", func(*testing.T) Spec { return Spec{Model: m, Service: ServiceSpec{User: "nfsnobody"}} }, "systemd_user_invalid", "systemd.user"},
		{"cache_dir /", func(*testing.T) Spec { return Spec{Model: m, Service: ServiceSpec{CacheDir: "/"}} }, "cache_dir_system", "systemd.cache_dir"},
		{"cache_dir /usr", func(*testing.T) Spec { return Spec{Model: m, Service: ServiceSpec{CacheDir: "/usr"}} }, "cache_dir_system", "systemd.cache_dir"},
		{"cache_dir /etc", func(*testing.T) Spec { return Spec{Model: m, Service: ServiceSpec{CacheDir: "/etc"}} }, "cache_dir_system", "systemd.cache_dir"},
		{"cache_dir /var/lib", func(*testing.T) Spec { return Spec{Model: m, Service: ServiceSpec{CacheDir: "/var/lib"}} }, "cache_dir_system", "systemd.cache_dir"},
		{"cache_dir /var/cache", func(*testing.T) Spec { return Spec{Model: m, Service: ServiceSpec{CacheDir: "/var/cache"}} }, "cache_dir_system", "systemd.cache_dir"},
	})
	_, ds := Plan(Spec{Model: m, Service: ServiceSpec{User: "nobody"}})
	for _, d := range ds {
		if d.Code.String() == "systemd_user_invalid" && !strings.Contains(d.Detail, "RemoveIPC=yes") {
			t.Errorf("%s does not say why", d)
		}
	}
	// A system directory is one problem, said once: not again as a
	// collision with the units or the check script it holds.
	for _, dir := range []string{"/", "/etc", "/usr"} {
		if _, ds := Plan(Spec{Model: m, Service: ServiceSpec{CacheDir: dir}}); len(ds) != 1 {
			t.Errorf("cache_dir %s: %d diagnostics, want cache_dir_system alone: %s", dir, len(ds), describeDiags(ds))
		}
	}
	// A directory of its own, wherever it is mounted, plans.
	for _, dir := range []string{"/var/cache/vllm-omni", "/data/hf", "/data", "/mnt/models", "/srv/vllm-omni/cache"} {
		if res, ds := Plan(Spec{Model: m, Service: ServiceSpec{CacheDir: dir}}); res == nil {
			t.Errorf("cache_dir %s refused: %s", dir, describeDiags(ds))
		}
	}
	if res, ds := Plan(Spec{Model: m, Service: ServiceSpec{User: "nobody2"}}); res == nil {
		t.Errorf("user nobody2 refused: %s", describeDiags(ds))
	}
}
