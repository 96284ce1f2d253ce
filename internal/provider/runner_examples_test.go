package provider

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
)

// hostileConfigPath is the config_path the runner examples are planned
// with: a path the plan accepts that holds what a shell reads specially
// (a command substitution both ways, both quotes, spaces), so a word a
// script leaves unquoted shows in what the stand-ins receive, or runs
// `touch pwned`.
const hostileConfigPath = "/srv/$(touch pwned)/`touch pwned`/it's \"a\" deploy config.yaml"

// runnerPlan is the engine's plan of the runner examples as the tests
// plan them.
func runnerPlan(t *testing.T) *pipeline.Result {
	t.Helper()
	res, diags := pipeline.Plan(pipeline.Spec{Model: seedModel, ConfigPath: hostileConfigPath,
		Prefill: pipeline.RoleSpec{Host: "10.20.0.11"}, Decode: pipeline.RoleSpec{Host: "10.20.0.12"}})
	if diags.HasErrors() {
		t.Fatalf("the engine's plan fails: %v", diags)
	}
	return res
}

// A runner's command for one process, as the example's script should hand
// it to the runner's client: what the stand-in must receive, its own name
// first.
type runnerCommand func(res *pipeline.Result, l pipeline.Launch, p pipeline.Process) []string

// slurmStep is the examples/runners/slurm step of a process: srun sharing
// the job's GPUs, then env with the process's environment, then its argv.
func slurmStep(_ *pipeline.Result, l pipeline.Launch, p pipeline.Process) []string {
	words := []string{"srun", "--overlap", "--ntasks=1", "--gpus=" + strconv.Itoa(l.GPUCount), "env"}
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		words = append(words, k+"="+p.Env[k])
	}
	return append(words, p.Argv...)
}

// dockerRun is the examples/runners/docker container of a process.
func dockerRun(res *pipeline.Result, l pipeline.Launch, p pipeline.Process) []string {
	gpus := make([]string, l.GPUCount)
	for i := range gpus {
		gpus[i] = strconv.Itoa(i)
	}
	words := []string{"docker", "run", "--detach", "--name", strings.TrimSuffix(strings.ReplaceAll(p.UnitName, "@", "-"), ".service"),
		"--network", "host", "--ipc", "host", "--runtime", "nvidia", "--gpus", `"device=` + strings.Join(gpus, ",") + `"`,
		"--volume", res.ConfigPath + ":" + res.ConfigPath + ":ro", "--volume", "/var/cache/vllm-omni:/root/.cache/huggingface", "--env", "HF_TOKEN"}
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		words = append(words, "--env", k+"="+p.Env[k])
	}
	return append(append(words, "vllm/vllm-omni:v"+res.Release), p.Argv...)
}

// runsAsPlanned checks a runner example's scripts, one per host: each
// starts the head before its wait for the head's omni master and every
// headless process after it, and, run by bash with stand-ins for the
// runner's client, hands the client exactly command's words for each
// process of its host, and runs nothing else.
func runsAsPlanned(command runnerCommand) outputCheck {
	return func(t *testing.T, got any) error {
		res := runnerPlan(t)
		scripts, ok := got.(map[string]any)
		if !ok || len(scripts) != len(res.Launches) {
			return fmt.Errorf("want a script for each of the %d hosts, got %s", len(res.Launches), jsonText(got))
		}
		for i, l := range res.Launches {
			script, _ := scripts[l.Host].(string)
			if err := startsHeadFirst(script, i == 0); err != nil {
				return fmt.Errorf("%s: %w", l.Host, err)
			}
			var want [][]string
			for _, p := range l.Processes {
				want = append(want, command(res, l, p))
			}
			calls, err := runWithStandIns(t, script, res)
			if err != nil {
				return fmt.Errorf("%s: %w\n%s", l.Host, err, script)
			}
			if !slices.EqualFunc(sortedCalls(calls), sortedCalls(want), slices.Equal) {
				return fmt.Errorf("%s: the script ran\n  %q\nwant\n  %q", l.Host, sortedCalls(calls), sortedCalls(want))
			}
		}
		return nil
	}
}

// startsHeadFirst holds a script's order: the head's line (on the head's
// host) before the wait for its omni master, every other process's after.
func startsHeadFirst(script string, headHost bool) error {
	lines := strings.Split(script, "\n")
	wait := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "until ") })
	if wait < 0 {
		return fmt.Errorf("no wait for the head's omni master")
	}
	for i, line := range lines {
		if !strings.HasPrefix(line, "srun ") && !strings.HasPrefix(line, "docker ") {
			continue
		}
		head := !strings.Contains(line, "'--headless'")
		if head != (i < wait) || (head && !headHost) {
			return fmt.Errorf("line %d starts a %s process %s the wait for the head", i+1, map[bool]string{true: "head", false: "headless"}[head],
				map[bool]string{true: "before", false: "after"}[i < wait])
		}
	}
	return nil
}

// recordingStandIn records its name and arguments, NUL-separated, in a file of its
// own under $CALLS (background steps run at once), and exits 0.
const recordingStandIn = `#!/bin/sh
f=$(mktemp "$CALLS/call.XXXXXX") || exit 1
printf '%s\0' "$(basename "$0")" "$@" > "$f"
`

// runWithStandIns runs script with bash in a directory of its own, with
// srun and docker stand-ins first on PATH and the head's omni master
// answering (its /dev/tcp path a file that exists), and returns the calls
// the stand-ins recorded. A script that runs `touch pwned` fails.
func runWithStandIns(t *testing.T, script string, res *pipeline.Result) ([][]string, error) {
	dir := t.TempDir()
	bin, calls := filepath.Join(dir, "bin"), filepath.Join(dir, "calls")
	var master int
	for _, p := range res.Ports {
		if p.Name == "omni_master" {
			master = p.Port
		}
	}
	open := filepath.Join(dir, "tcp", res.Health.Host, strconv.Itoa(master))
	for _, d := range []string{bin, calls, filepath.Dir(open)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{filepath.Join(bin, "srun"): recordingStandIn, filepath.Join(bin, "docker"): recordingStandIn, open: "",
		filepath.Join(dir, "run.sh"): strings.ReplaceAll(script, "'/dev/tcp/", "'"+dir+"/tcp/")}
	for name, content := range files {
		if err := os.WriteFile(name, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "run.sh")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "CALLS="+calls, "HF_TOKEN=hf_test")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("bash: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		return nil, fmt.Errorf("the script ran a command substitution of config_path")
	}
	entries, err := os.ReadDir(calls)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(calls, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, strings.Split(string(bytes.TrimSuffix(b, []byte{0})), "\x00"))
	}
	return out, nil
}

func sortedCalls(calls [][]string) [][]string {
	return slices.SortedFunc(slices.Values(calls), func(a, b []string) int {
		return strings.Compare(strings.Join(a, "\x00"), strings.Join(b, "\x00"))
	})
}
