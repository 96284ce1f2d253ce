package pipeline

import (
	"reflect"
	"testing"
)

// On one host the serve command runs the whole pipeline: the model, the API
// port, and the config through the flag the release reads it by.
func TestServeCommand(t *testing.T) {
	tests := []struct {
		name    string
		spec    Spec
		argv    []string
		command string
	}{
		{"seed", Spec{Model: seedModel},
			[]string{"vllm", "serve", seedModel, "--omni", "--port", "8091", "--stage-configs-path", DefaultConfigPath},
			"vllm serve " + seedModel + " --omni --port 8091 --stage-configs-path " + DefaultConfigPath},
		{"api_port and a config_path to quote", Spec{Model: seedModel, APIPort: ptr(9000), ConfigPath: "/srv/deploy config.yaml"},
			[]string{"vllm", "serve", seedModel, "--omni", "--port", "9000", "--stage-configs-path", "/srv/deploy config.yaml"},
			"vllm serve " + seedModel + " --omni --port 9000 --stage-configs-path '/srv/deploy config.yaml'"},
		{"stages dialect release", Spec{Model: seedModel, Format: "stages", Pipeline: "qwen3_omni_moe_pd", VLLMOmniVersion: "0.28.0"},
			[]string{"vllm", "serve", seedModel, "--omni", "--port", "8091", "--deploy-config", DefaultConfigPath},
			"vllm serve " + seedModel + " --omni --port 8091 --deploy-config " + DefaultConfigPath},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := mustPlan(t, tc.spec)
			if !reflect.DeepEqual(res.ServeArgs, tc.argv) || res.ServeCommand != tc.command {
				t.Errorf("serve %q\n  %s\nwant %q\n  %s", res.ServeArgs, res.ServeCommand, tc.argv, tc.command)
			}
			if len(res.Launches) != 1 || res.Launches[0].Host != SingleHost || len(res.Launches[0].Processes) != 1 ||
				!reflect.DeepEqual(res.Launches[0].Processes[0].Argv, tc.argv) {
				t.Errorf("launches %+v, want one process running the serve command", res.Launches)
			}
		})
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
		h := health(seedModel, tc.host, 8091)
		if h.Host != tc.wantHost || h.Port != 8091 || h.LivenessURL != tc.wantBase+"/health" || h.ReadinessURL != tc.wantBase+"/v1/models" {
			t.Errorf("health(%q) = %+v", tc.host, h)
		}
		if n := len(h.ReadinessArgv); n < 2 || h.ReadinessArgv[n-2] != h.ReadinessURL || h.ReadinessArgv[n-1] != seedModel {
			t.Errorf("health(%q) readiness argv %q does not end with the URL and the model", tc.host, h.ReadinessArgv)
		}
	}
}
