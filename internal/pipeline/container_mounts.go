package pipeline

import (
	"path"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/container"
	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
	"github.com/omnipd/terraform-provider-omni/internal/systemd"
)

// plannedMount is a mount the plan makes in every container: a path the
// argv names, at the same path inside, so that every argv and the deploy
// config's paths are one value on the machine and in the container.
type plannedMount struct {
	container.Mount
	attr Path   // the attribute that sets the path
	what string // how messages name it
}

// plannedMounts are the mounts every container of s gets: the deploy
// config and the check script read-only, the cache (HF_HOME) read-write,
// and a local model read-only, unless a mount of the user's already
// holds it. Each path once: two attributes at one path are
// checkMachinePaths' error.
func plannedMounts(s Spec) []plannedMount {
	svc := s.service().withDefaults()
	ms := []plannedMount{
		{container.Mount{Source: s.configPath(), Target: s.configPath(), ReadOnly: true}, AttrPath("config_path"), "the deploy config"},
		{container.Mount{Source: svc.CheckScriptPath, Target: svc.CheckScriptPath, ReadOnly: true}, AttrPath("check_script_path"), "the check script"},
		{container.Mount{Source: svc.CacheDir, Target: svc.CacheDir}, AttrPath("systemd", "cache_dir"), "the model cache"},
	}
	if strings.HasPrefix(s.Model, "/") && mountHolding(s.Container.Mounts, s.Model) == nil {
		ms = append(ms, plannedMount{container.Mount{Source: s.Model, Target: s.Model, ReadOnly: true}, AttrPath("model"), "the local model"})
	}
	var out []plannedMount
	for _, m := range ms {
		if !containsMountAt(out, m.Target) {
			out = append(out, m)
		}
	}
	return out
}

func containsMountAt(ms []plannedMount, target string) bool {
	for _, m := range ms {
		if m.Target == target {
			return true
		}
	}
	return false
}

// containerMounts are every mount of s's containers: the user's first, in
// their order, then the plan's.
func containerMounts(s Spec) []container.Mount {
	out := append([]container.Mount(nil), s.Container.Mounts...)
	for _, m := range plannedMounts(s) {
		out = append(out, m.Mount)
	}
	return out
}

// mountHolding is the mount that holds p in the container, the deepest
// when mounts nest (the runtimes mount a parent before its children), or
// nil.
func mountHolding(mounts []container.Mount, p string) *container.Mount {
	p = path.Clean(p)
	var best *container.Mount
	for i, m := range mounts {
		t := path.Clean(m.Target)
		if !hasPathPrefix(p, t) {
			continue
		}
		if best == nil || len(t) > len(path.Clean(best.Target)) {
			best = &mounts[i]
		}
	}
	return best
}

// judgeMounted reports each absolute path a container's processes open
// that no mount gives them, or that they write under a read-only mount:
// a container sees the machine only through its mounts.
func judgeMounted(mounts []container.Mount, paths []reachedPath, ds *Diagnostics) {
	for _, r := range paths {
		if !strings.HasPrefix(r.value, "/") {
			continue
		}
		where := ""
		if r.stage != "" {
			where = r.stage + "'s " + r.setting + r.what + ": "
		}
		verb := accessVerb(r.need)
		summary := r.what + " is where the container cannot " + verb
		switch m := mountHolding(mounts, r.value); {
		case m == nil:
			ds.errorf(diagcode.ContainerPathUnmounted, r.attr, summary,
				"%s%q is in no directory mounted into the container, which sees only the image and its mounts; add a container.mounts entry that holds it, or put it inside systemd.cache_dir, which every container mounts read-write.", where, r.value)
		case r.need == systemd.Write && m.ReadOnly:
			ds.errorf(diagcode.ContainerPathUnmounted, r.attr, summary,
				"%s%q is under %s, which is mounted into the container read-only; mount it read-write, or put it inside systemd.cache_dir.", where, r.value, m.Target)
		}
	}
}
