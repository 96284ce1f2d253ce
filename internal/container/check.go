package container

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/omnipd/terraform-provider-omni/internal/attrpath"
	"github.com/omnipd/terraform-provider-omni/internal/envvar"
	"github.com/omnipd/terraform-provider-omni/internal/systemd"
)

// Step is one step of a Problem's path: a field name, or a list index when
// Name is empty.
type Step = attrpath.Step

// Path locates the value a Problem concerns, by the names of a container
// block's attributes (image, runtime, runtime_path, pull, gpus, mounts,
// options) and, for the values the plan computes, of Spec's fields in the
// same style (name, unit, host_gpus, env, pass_env, nofile, stop_timeout,
// command).
type Path = attrpath.Path

// attr is a path of one attribute, index and the key within the element
// following when given: attr("mounts", 1, "target").
func attr(name string, index ...any) Path {
	p := Path{{Name: name}}
	for _, x := range index {
		switch x := x.(type) {
		case int:
			p = append(p, Step{Index: x})
		case string:
			p = append(p, Step{Name: x})
		}
	}
	return p
}

// Problem is what is wrong with one value of a Spec.
type Problem struct {
	Path    Path
	Message string
}

func (p Problem) String() string { return p.Path.String() + ": " + p.Message }

// problems collects Problems in the order they are found.
type problems []Problem

func (ps *problems) add(p Path, format string, args ...any) {
	*ps = append(*ps, Problem{Path: p, Message: fmt.Sprintf(format, args...)})
}

// Check says what is wrong with s, every problem with the path of its
// value, in the order of Spec's fields; nil when RunArgv and UnitDirectives
// render a unit that runs. Values that reach a unit are checked as systemd
// reads them (systemd.Arg, systemd.PlainPath), a user's options as the
// runtimes parse them.
func Check(s Spec) []Problem {
	var ps problems
	checkRuntime(&ps, s)
	if _, err := ParseImage(s.Image); err != nil {
		ps.add(attr("image"), "%v", err)
	}
	if s.Pull != PullMissing && s.Pull != PullAlways && s.Pull != PullNever {
		ps.add(attr("pull"), "%q is not missing, always or never", s.Pull)
	}
	checkNames(&ps, s)
	checkGPUs(&ps, s)
	checkMounts(&ps, s.Mounts)
	checkEnv(&ps, s)
	if s.NoFile < 0 {
		ps.add(attr("nofile"), "%d is negative", s.NoFile)
	}
	checkOptions(&ps, s)
	if s.StopTimeout < 0 {
		ps.add(attr("stop_timeout"), "%d is negative", s.StopTimeout)
	}
	if len(s.Command) == 0 {
		ps.add(attr("command"), "the image has no entrypoint: the container needs a command")
	}
	for i, w := range s.Command {
		if _, err := systemd.Arg(w); err != nil {
			ps.add(attr("command", i), "%v", err)
		}
	}
	return ps
}

func checkRuntime(ps *problems, s Spec) {
	if s.Runtime != Docker && s.Runtime != Podman {
		ps.add(attr("runtime"), "%q is not docker or podman", s.Runtime)
	}
	if err := systemd.PlainPath(s.RuntimePath); err != nil {
		ps.add(attr("runtime_path"), "%v", err)
	}
}

var (
	// containerName is both runtimes' rule for a name.
	containerName = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]*$`)
	// serviceName is a service unit's name as systemd takes it
	// (systemd.unit(5): ASCII letters, digits, ":", "-", "_", ".", "\",
	// and "@" before an instance).
	serviceName = regexp.MustCompile(`^[a-zA-Z0-9:_.\\-]+(?:@[a-zA-Z0-9:_.\\-]*)?\.service$`)
)

func checkNames(ps *problems, s Spec) {
	if !containerName.MatchString(s.Name) {
		ps.add(attr("name"), "%q is not a container name: a letter or a digit, then letters, digits, _, . and -", s.Name)
	}
	if !serviceName.MatchString(s.Unit) {
		ps.add(attr("unit"), "%q is not a service unit's name (NAME.service or NAME@INSTANCE.service)", s.Unit)
	}
}

func checkGPUs(ps *problems, s Spec) {
	switch {
	case s.GPUMode != CDI && s.GPUMode != NVIDIARuntime:
		ps.add(attr("gpus"), "%q is not cdi or nvidia_runtime", s.GPUMode)
	case s.GPUMode == NVIDIARuntime && s.Runtime == Podman:
		ps.add(attr("gpus"), "podman asks for NVIDIA's GPUs through CDI; nvidia_runtime is Docker's --runtime nvidia --gpus")
	}
	seen := map[int]bool{}
	for i, g := range s.GPUs {
		if g < 0 {
			ps.add(attr("host_gpus", i), "GPU index %d is negative", g)
		}
		if seen[g] {
			ps.add(attr("host_gpus", i), "GPU %d is given twice", g)
		}
		seen[g] = true
	}
}

func checkMounts(ps *problems, mounts []Mount) {
	targets := map[string]int{}
	for i, m := range mounts {
		for _, p := range []struct{ key, path string }{{"source", m.Source}, {"target", m.Target}} {
			if why := mountPathProblem(p.path); why != "" {
				ps.add(attr("mounts", i, p.key), "%s", why)
			}
		}
		switch j, dup := targets[m.Target]; {
		case dup:
			ps.add(attr("mounts", i, "target"), "%s is mounts[%d]'s target too", m.Target, j)
		case m.Target == "/":
			ps.add(attr("mounts", i, "target"), "a mount at / would hide the image")
		case m.Target == shmPath:
			ps.add(attr("mounts", i, "target"), "the stages share the machine's %s (--ipc host); a mount there would hide it", shmPath)
		}
		targets[m.Target] = i
	}
}

// mountPathProblem says why p cannot be a mount's source or target: it
// must be absolute and normalized, and hold no colon, which --volume
// reads as a separator.
func mountPathProblem(p string) string {
	switch {
	case !strings.HasPrefix(p, "/"):
		return fmt.Sprintf("%q is not an absolute path", p)
	case path.Clean(p) != p:
		return fmt.Sprintf("%q is not a normalized path (no trailing /, no // or ..); write %q", p, path.Clean(p))
	case strings.Contains(p, ":"):
		return fmt.Sprintf("%q holds a colon, which --volume SOURCE:TARGET[:ro] would split it at", p)
	}
	if _, err := systemd.Arg(p); err != nil {
		return err.Error()
	}
	return ""
}

// gpuVariables are the variables the GPU request rules, and why the
// plan's environment may not set them.
var gpuVariables = map[string]string{
	"NVIDIA_VISIBLE_DEVICES": "the device request sets it (void for a container with no GPU)",
	"CUDA_VISIBLE_DEVICES":   "the container's GPUs are numbered from 0 and vllm-omni sets the mask from the deploy config's devices; a mask of host indices would name GPUs the container does not have",
}

func checkEnv(ps *problems, s Spec) {
	seen := map[string]bool{}
	name := func(p Path, n string) {
		switch {
		case seen[n]:
			ps.add(p, "%s is set twice", n)
		case gpuVariables[n] != "":
			ps.add(p, "%s: %s", n, gpuVariables[n])
		}
		seen[n] = true
	}
	for i, e := range s.Env {
		if err := envvar.Check(e.Name, e.Value); err != nil {
			ps.add(attr("env", i), "%v", err)
			continue
		}
		name(attr("env", i), e.Name)
	}
	for i, n := range s.PassEnv {
		if err := envvar.Name(n); err != nil {
			ps.add(attr("pass_env", i), "%v", err)
			continue
		}
		name(attr("pass_env", i), n)
	}
}

func checkOptions(ps *problems, s Spec) {
	p := planned{env: map[string]bool{}, targets: map[string]bool{}, spec: s}
	for _, e := range s.Env {
		p.env[e.Name] = true
	}
	for _, n := range s.PassEnv {
		p.env[n] = true
	}
	for _, m := range s.Mounts {
		p.targets[m.Target] = true
	}
	for i, w := range s.Options {
		if _, err := systemd.Arg(w); err != nil {
			ps.add(attr("options", i), "%v", err)
		}
	}
	opts, stray, unfinished := parseOptions(s.Options)
	for _, i := range stray {
		ps.add(attr("options", i), "%q is no option's value: the options are flags, and the image and the command are the plan's", s.Options[i])
	}
	for _, i := range unfinished {
		ps.add(attr("options", i), "%s takes a value, and none follows", s.Options[i])
	}
	for _, o := range opts {
		if why := p.conflict(o); why != "" {
			ps.add(attr("options", o.index), "--%s: %s", o.name, why)
		}
	}
}
