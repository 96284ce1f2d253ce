package pipeline

import (
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/container"
	"github.com/omnipd/terraform-provider-omni/internal/diagcode"
)

// blockAttributes are the container block's attributes, as container.Check
// names the values a user gives.
var blockAttributes = map[string]bool{"image": true, "runtime": true, "runtime_path": true, "pull": true, "gpus": true, "mounts": true, "options": true}

// containerAttr is the attribute of the container block at a path of
// container.Check's.
func containerAttr(p container.Path) Path {
	return append(AttrPath("container"), p...)
}

// checkContainer checks the container block before anything is planned,
// so that its problems come with every other input's: the values as the
// runtimes read them (container.Check, on a container of the plan's
// mounts and variables with the block's settings), a mount of the user's
// where the plan mounts one of its own, an image the machines would pull
// as it is that day, and a systemd setting that has no effect.
func checkContainer(s Spec, ds *Diagnostics) {
	if s.Container == nil {
		return
	}
	if s.Service.User != "" {
		ds.warnf(diagcode.ContainerSettingUnused, AttrPath("systemd", "user"), "systemd.user has no effect in a container launch",
			"the units run the container runtime's client as root, which its socket or its storage needs, and the container runs as the image's user (root in vllm-omni's image); remove systemd.user.")
	}
	c := s.Container.withDefaults("0.0.0")
	planned := plannedMounts(s)
	// The user's mounts the runtime would also get one of the plan's at:
	// reported here, with what the plan mounts there, and left out of
	// the check below. index maps the mounts checked to the block's.
	var mounts []container.Mount
	var index []int
	for i, m := range s.Container.Mounts {
		if j := plannedMountAt(planned, m.Target); j >= 0 {
			ds.errorf(diagcode.ContainerInvalid, AttrPath("container", "mounts").Index(i).Attr("target"), "a mount where the plan mounts "+planned[j].what,
				"%q is where every container gets %s (%s), at the path the argv names; mount elsewhere, or change %s.", m.Target, planned[j].what, planned[j].attr, planned[j].attr)
			continue
		}
		mounts, index = append(mounts, m), append(index, i)
	}
	for _, m := range planned {
		mounts = append(mounts, m.Mount)
	}
	probe := container.Spec{
		Runtime: container.Runtime(c.Runtime), RuntimePath: c.RuntimePath, Image: c.Image, Pull: container.PullPolicy(c.Pull),
		Name: "probe", Unit: "probe.service", GPUMode: container.GPUMode(c.GPUs), Mounts: mounts,
		Env: plannedEnv(s.service().withDefaults().CacheDir, nil), PassEnv: secretNames,
		Options: s.Container.Options, StopTimeout: containerStopTimeout, Command: []string{ImagePythonPath},
	}
	addContainerProblems(container.Check(probe), index, planned, ds)
}

// plannedMountAt is the index of the planned mount at target, or -1.
func plannedMountAt(planned []plannedMount, target string) int {
	for i, m := range planned {
		if m.Target == target {
			return i
		}
	}
	return -1
}

// addContainerProblems reports container.Check's problems of a container
// whose mounts are the user's, by index (the block's index of each), then
// the plan's: each at the attribute that sets its value, once.
func addContainerProblems(problems []container.Problem, index []int, planned []plannedMount, ds *Diagnostics) {
	seen := map[string]bool{}
	for _, p := range problems {
		attr := problemAttr(p.Path, index, planned)
		key := attr.String() + "\x00" + p.Message
		if seen[key] {
			continue
		}
		seen[key] = true
		ds.errorf(diagcode.ContainerInvalid, attr, attr.String()+" is refused for the container", "%s.", p.Message)
	}
}

// problemAttr is the attribute that sets the value at p: the block's own,
// the attribute of a path the plan mounts, or the block as a whole for a
// value the plan computes.
func problemAttr(p container.Path, index []int, planned []plannedMount) Path {
	if len(p) == 0 || !blockAttributes[p[0].Name] {
		return AttrPath("container")
	}
	if p[0].Name != "mounts" || len(p) < 2 {
		return containerAttr(p)
	}
	i := p[1].Index
	if i >= len(index) {
		return planned[i-len(index)].attr
	}
	out := append(container.Path{p[0], {Index: index[i]}}, p[2:]...)
	return containerAttr(out)
}

// checkImageRelease warns of an image that may not hold the release the
// plan is for: its tag names another release, whose preflight would fail
// every unit once, or it has no tag but latest and no digest, so that the
// machines run what the registry holds when each pulls.
func checkImageRelease(c *ContainerSpec, release string, ds *Diagnostics) {
	if c == nil || c.Image == "" {
		return
	}
	if img, err := container.ParseImage(c.Image); err == nil && img.Digest == "" && (img.Tag == "" || img.Tag == "latest") {
		ds.warnf(diagcode.ContainerImageUnpinned, AttrPath("container", "image"), "the image is not pinned to a release",
			"%q names no tag but latest and no digest, so each machine runs what the registry holds when it pulls, which need not be vllm-omni %s, the release the plan is for; name the release's tag, as %q does, or pin a digest (@sha256:...).",
			c.Image, release, container.DefaultImage(release))
	}
	if tagged, ok := container.ImageRelease(c.Image); ok && tagged != release {
		ds.warnf(diagcode.ContainerImageRelease, AttrPath("container", "image"), "the image is of another vllm-omni release",
			"%q is tagged for vllm-omni %s, but the plan is for %s: each unit's preflight fails once (status %d) unless the image holds %s. Use the image of the planned release (leave image unset for %q), or set vllm_omni_version = %q.",
			c.Image, tagged, release, PreflightExit, release, container.DefaultImage(release), tagged)
	}
}

// plannedEnv is what every container's environment holds before its
// stage's: HOME and HF_HOME at the cache, as the host units set them, and
// CUDA's device order that the GPU numbering inside relies on
// (container.LocalIndex); then env, by name, each name once with the last
// value given.
func plannedEnv(cache string, env map[string]string) []container.EnvVar {
	out := []container.EnvVar{{Name: "HOME", Value: cache}, {Name: "HF_HOME", Value: cache}, {Name: "CUDA_DEVICE_ORDER", Value: "PCI_BUS_ID"}}
	for _, k := range sortedStrings(env) {
		i := 0
		for i < len(out) && out[i].Name != k {
			i++
		}
		if i == len(out) {
			out = append(out, container.EnvVar{Name: k})
		}
		out[i].Value = env[k]
	}
	return out
}

// hasPathPrefix reports whether p is dir or lies below it.
func hasPathPrefix(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// checkContainerRuns holds every container the launch runs to
// container.Check, with the stage's own variables and the connector's
// limits that checkContainer could not know: a user's option that sets
// one of them is reported at the option.
func checkContainerRuns(s Spec, res *Result, ds *Diagnostics) {
	if s.Container == nil {
		return
	}
	index := make([]int, len(s.Container.Mounts))
	for i := range index {
		index[i] = i
	}
	var problems []container.Problem
	for _, l := range res.Launches {
		for _, proc := range l.Processes {
			problems = append(problems, container.Check(*proc.run)...)
		}
	}
	addContainerProblems(problems, index, plannedMounts(s), ds)
}
