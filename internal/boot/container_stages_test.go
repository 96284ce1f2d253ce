package boot

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// TestContainerPlanStagesOnly runs the containers of a plan for a release
// that loads only the stages dialect, as TestContainerPlan runs its plan:
// each container has the pipeline registration the plan writes mounted
// read-only at its path, its preflight execs the launcher in the image's
// Python, which imports the registration into the stand-in image's
// vllm-omni registry before its CLI runs vllm, and the stand-in resolves
// the config's pipeline: from that registry, the PD pair with it (it
// fails the start on a name the registry lacks). The head answers once
// the headless stage has registered. Without the mount the head's
// container refuses once, though the host holds the module.
func TestContainerPlanStagesOnly(t *testing.T) {
	p, _, image, dir := containerHost(t, stagesOnlyRelease)
	netns := newLAN(t, "stages").host("10.20.0.13")
	spec := containerPlanSpec(p, image, dir, thinkingModel, stagesOnlyRelease)
	run := runContainerPlan(t, p, netns, spec)
	reg := run.res.Registration
	if reg == nil || reg.Content == "" {
		t.Fatalf("the plan for vllm-omni %s writes no pipeline registration", stagesOnlyRelease)
	}
	for _, w := range run.wants {
		checkLaunched(t, p, w, spec.Service.CacheDir, reg.Path)
	}
	// The thinker split in two: prefill is stage 0, decode stage 1, as the
	// registration alone says in a stages config.
	const pair = "PD disaggregation detected: prefill=stage-0, decode=stage-1"
	if head := run.logs[run.wants[0].name].String(); !strings.Contains(head, pair) {
		t.Errorf("the head did not find the registered PD pair (%q):\n%s", pair, head)
	}

	t.Run("without the registration's mount", func(t *testing.T) {
		other := spec
		other.Service.UnitPrefix, other.ConfigPath = spec.Service.UnitPrefix+"x", filepath.Join(dir, "etc", "unmounted.yaml")
		res, ds := pipeline.Plan(other)
		if res == nil || ds.HasErrors() {
			t.Fatalf("the plan: %v", ds)
		}
		// The same module at the same path, which the run above wrote on
		// the host: only the container lacks it.
		if res.Registration == nil || *res.Registration != *reg {
			t.Fatalf("the plan's registration %+v, want the one the host holds, %+v", res.Registration, reg)
		}
		writeFiles(t, map[string]string{other.ConfigPath: res.ConfigYAML})
		u := headUnit(t, res)
		u.start = withoutMount(t, u.start, reg.Path)
		headFailsOnce(t, p, netns, res, u, "the pipeline registration "+reg.Path)
	})
}

// checkLaunched checks that the vllm of w's container runs in the
// launcher: the process the stand-in recorded is the image's Python
// running the check script's launcher (-c) with the registration's path,
// the planned release and then vllm's argv, as the preflight execs it.
func checkLaunched(t *testing.T, p podman, w containerWant, cache, registration string) {
	t.Helper()
	rec := readRecord(t, w, cache)
	cmdline := p.must(t, "exec", w.name, "cat", "/proc/"+strconv.Itoa(rec.PID)+"/cmdline")
	argv := strings.Split(strings.TrimSuffix(cmdline, "\x00"), "\x00")
	want := append([]string{registration, stagesOnlyRelease, "--"}, w.command[slices.Index(w.command, "--")+1:]...)
	if len(argv) < 3 || argv[0] != pipeline.ImagePythonPath || argv[1] != "-c" || !slices.Equal(argv[3:], want) {
		t.Errorf("%s: vllm runs as %q, want %s -c LAUNCHER %q", w.name, argv, pipeline.ImagePythonPath, want)
	}
}

// withoutMount is a podman run argv without its --volume of path: the
// unit as the plan writes it, less the mount.
func withoutMount(t *testing.T, argv []string, path string) []string {
	t.Helper()
	for i := 0; i+1 < len(argv); i++ {
		if argv[i] == "--volume" && strings.HasPrefix(argv[i+1], path+":") {
			return slices.Concat(argv[:i], argv[i+2:])
		}
	}
	t.Fatalf("%q mounts no %s", argv, path)
	return nil
}
