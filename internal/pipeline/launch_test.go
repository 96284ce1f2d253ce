package pipeline

import (
	"fmt"
	"reflect"
	"strconv"
	"testing"

	"github.com/omnipd/terraform-provider-omni/internal/kvconnector"
	"github.com/omnipd/terraform-provider-omni/internal/releases"
	"github.com/omnipd/terraform-provider-omni/internal/stageconfig"
)

// On one host the serve command is the head's: the model, the API port,
// and the config through the flag the release reads it by. Where the
// release applies each stage's runtime.env in a whole-pipeline process
// (0.22.0, 0.23.0rc1) it runs every stage; elsewhere each stage is its own
// process with the stage-based CLI, the head serving stage 0 and the omni
// master on loopback, the others headless.
func TestServeCommand(t *testing.T) {
	// stage is a stage-based argv: its own words after --omni, where the
	// recipe puts the API port, then those every stage shares.
	stage := func(flag, config string, id int, own ...string) []string {
		return append(append([]string{"vllm", "serve", seedModel, "--omni"}, own...), flag, config, "--stage-id", strconv.Itoa(id),
			"--omni-master-address", "127.0.0.1", "--omni-master-port", "25203")
	}
	tests := []struct {
		name    string
		spec    Spec
		argv    []string
		command string
		// headless is the stage-based argv of stage id, nil for a
		// whole-pipeline launch.
		headless func(id int) []string
	}{
		{"seed", Spec{Model: seedModel},
			stage("--stage-configs-path", DefaultConfigPath, 0, "--port", "8091"),
			"vllm serve " + seedModel + " --omni --port 8091 --stage-configs-path " + DefaultConfigPath + " --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25203",
			func(id int) []string { return stage("--stage-configs-path", DefaultConfigPath, id, "--headless") }},
		{"api_port and a config_path to quote", Spec{Model: seedModel, APIPort: ptr(9000), ConfigPath: "/srv/deploy config.yaml"},
			stage("--stage-configs-path", "/srv/deploy config.yaml", 0, "--port", "9000"),
			"vllm serve " + seedModel + " --omni --port 9000 --stage-configs-path '/srv/deploy config.yaml' --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25203",
			func(id int) []string {
				return stage("--stage-configs-path", "/srv/deploy config.yaml", id, "--headless")
			}},
		{"stages dialect release", Spec{Model: seedModel, Format: "stages", Pipeline: "qwen3_omni_moe_pd", VLLMOmniVersion: "0.28.0"},
			stage("--deploy-config", DefaultConfigPath, 0, "--port", "8091"),
			"vllm serve " + seedModel + " --omni --port 8091 --deploy-config " + DefaultConfigPath + " --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25203",
			func(id int) []string { return stage("--deploy-config", DefaultConfigPath, id, "--headless") }},
		{"a release that applies runtime.env: one process", Spec{Model: seedModel, VLLMOmniVersion: "0.22.0"},
			[]string{"vllm", "serve", seedModel, "--omni", "--port", "8091", "--stage-configs-path", DefaultConfigPath},
			"vllm serve " + seedModel + " --omni --port 8091 --stage-configs-path " + DefaultConfigPath, nil},
		{"0.23.0rc1 applies it too", Spec{Model: seedModel, VLLMOmniVersion: "0.23.0rc1", APIPort: ptr(9000), ConfigPath: "/srv/deploy config.yaml"},
			[]string{"vllm", "serve", seedModel, "--omni", "--port", "9000", "--stage-configs-path", "/srv/deploy config.yaml"},
			"vllm serve " + seedModel + " --omni --port 9000 --stage-configs-path '/srv/deploy config.yaml'", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustPlan(t, tc.spec)
			if !reflect.DeepEqual(res.ServeArgs, tc.argv) || res.ServeCommand != tc.command {
				t.Errorf("serve %q\n  %s\nwant %q\n  %s", res.ServeArgs, res.ServeCommand, tc.argv, tc.command)
			}
			if len(res.Launches) != 1 || res.Launches[0].Host != SingleHost {
				t.Fatalf("launches %+v, want one on the single host", res.Launches)
			}
			l := res.Launches[0]
			if tc.headless == nil {
				checkWholePipelineLaunch(t, l, tc.argv, tc.command)
				return
			}
			if len(l.Processes) != len(l.StageIDs) || len(l.Processes) < 2 {
				t.Fatalf("launch %+v, want one process per stage and no single command", l)
			}
			checkStageProcesses(t, l, plannedStageEnvs(t, res), tc.argv, tc.headless)
		})
	}
}

// checkWholePipelineLaunch: one process, the whole pipeline's, running the
// serve command in the plan's one unit.
func checkWholePipelineLaunch(t *testing.T, l Launch, argv []string, command string) {
	t.Helper()
	if len(l.Processes) != 1 || !reflect.DeepEqual(l.Processes[0].Argv, argv) || l.Processes[0].StageID != nil ||
		l.Processes[0].UnitName != "vllm-omni.service" || commandOf(l.Processes[0]) != command {
		t.Errorf("launch %+v, want one process running the serve command", l)
	}
}

// plannedStageEnvs is each stage's runtime.env (env in the stages dialect) in the
// planned config, by stage id.
func plannedStageEnvs(t *testing.T, res *Result) map[int]map[string]string {
	t.Helper()
	envs := map[int]map[string]string{}
	for _, st := range stageList(t, config(t, res.ConfigYAML)) {
		env := map[string]string{}
		raw := dig(st, "runtime", "env")
		if raw == nil {
			raw = st["env"]
		}
		if m, ok := raw.(map[string]any); ok {
			for k, v := range m {
				env[k] = fmt.Sprint(v)
			}
		}
		id, ok := st["stage_id"].(int)
		if !ok {
			t.Fatalf("stage without an integer stage_id: %v", st)
		}
		envs[id] = env
	}
	return envs
}

// checkStageProcesses: a process per stage, in its own unit, with its
// stage's environment; the first the head running the serve command, the
// others headless.
func checkStageProcesses(t *testing.T, l Launch, envs map[int]map[string]string, argv []string, headless func(id int) []string) {
	t.Helper()
	for i, proc := range l.Processes {
		id := l.StageIDs[i]
		if len(proc.Env)+len(envs[id]) > 0 && !reflect.DeepEqual(proc.Env, envs[id]) {
			t.Errorf("process %d env %v, want its stage's runtime.env %v", i, proc.Env, envs[id])
		}
		if proc.StageID == nil || *proc.StageID != id || proc.UnitName != "vllm-omni-stage@"+strconv.Itoa(id)+".service" {
			t.Errorf("process %d: stage %v unit %q", i, proc.StageID, proc.UnitName)
		}
		if i == 0 {
			if proc.Role != ProcessHead || !reflect.DeepEqual(proc.Argv, argv) {
				t.Errorf("head process %q, want the serve command %q", proc.Argv, argv)
			}
			continue
		}
		if want := headless(id); proc.Role != ProcessHeadless || !reflect.DeepEqual(proc.Argv, want) {
			t.Errorf("process %d: %s %q, want headless %q", i, proc.Role, proc.Argv, want)
		}
	}
}

// health points at the head's API port: on 127.0.0.1 when no host is
// named, an IPv6 host in brackets.
func TestHealth(t *testing.T) {
	tests := []struct {
		host, wantHost, wantBase string
	}{
		{"", "127.0.0.1", "http://127.0.0.1:8091"},
		{"10.0.0.1", "10.0.0.1", "http://10.0.0.1:8091"},
		{"fd00::1", "fd00::1", "http://[fd00::1]:8091"},
	}
	for _, tc := range tests {
		h := health(seedModel, tc.host, 8091, "vllm-omni-stage@0.service", DefaultCheckScriptPath)
		if h.Host != tc.wantHost || h.Port != 8091 || h.LivenessURL != tc.wantBase+"/health" || h.ReadinessURL != tc.wantBase+"/v1/models" {
			t.Errorf("health(%q) = %+v", tc.host, h)
		}
		if want := ShellJoin([]string{"python3", DefaultCheckScriptPath, "ready", tc.wantBase + "/v1/models", seedModel}); h.ReadinessCommand != want {
			t.Errorf("health(%q) readiness command %q, want %q", tc.host, h.ReadinessCommand, want)
		}
		// The smoke check posts one chat completion, which crosses the PD pair.
		if h.SmokeURL != tc.wantBase+"/v1/chat/completions" {
			t.Errorf("health(%q) smoke URL %q", tc.host, h.SmokeURL)
		}
		if want := ShellJoin([]string{"python3", DefaultCheckScriptPath, "smoke", h.SmokeURL, seedModel, "vllm-omni-stage@0.service"}); h.SmokeCommand != want {
			t.Errorf("health(%q) smoke command %q, want %q", tc.host, h.SmokeCommand, want)
		}
	}
}

// The launches are built from the Result and its config alone, with the
// launchInputs the Result does not hold: rebuilt from a planned Result and
// its YAML read back, they are the plan's, on one host and across hosts.
func TestLaunchesFromTheResult(t *testing.T) {
	for _, spec := range []Spec{
		{Model: seedModel},
		{Model: seedModel, Prefill: RoleSpec{Host: "10.0.0.1"}, Decode: RoleSpec{Host: "10.0.0.2"}},
	} {
		res := mustPlan(t, spec)
		doc, err := stageconfig.Parse([]byte(res.ConfigYAML))
		if err != nil {
			t.Fatal(err)
		}
		release, problem := releases.Lookup(res.Release)
		if problem != nil {
			t.Fatal(problem.Detail)
		}
		entry, _ := kvconnector.Lookup(res.Connector)
		in := launchInputs{model: spec.Model, release: release, asked: spec.VLLMOmniVersion, service: spec.Service,
			rdma:       entry.Memlock != nil && entry.Memlock(kvconnector.Settings{}),
			stageBased: len(res.Launches) > 1 || !release.StageEnv.Applied, connectors: []string{res.Connector}}
		again := &Result{Format: res.Format, ConfigPath: res.ConfigPath, ConfigSHA256: res.ConfigSHA256, APIPort: res.APIPort, Stages: res.Stages, Ports: res.Ports}
		if err := addLaunches(again, doc, in); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(again.Launches, res.Launches) || again.SystemdUnit != res.SystemdUnit || again.ServeCommand != res.ServeCommand ||
			again.GPUCount != res.GPUCount || again.Health != res.Health || again.CheckScriptPath != res.CheckScriptPath {
			t.Errorf("hosts %d: the launches rebuilt from the Result differ from the plan's:\n%+v\n%s\nwant\n%+v\n%s", len(res.Launches), again.Launches, again.SystemdUnit.Content, res.Launches, res.SystemdUnit.Content)
		}
	}
}
