package provider

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/omnipd/terraform-provider-omni/internal/pipeline"
	"github.com/omnipd/terraform-provider-omni/internal/testtool"
)

// exampleRoot says how TestExamples plans one folder under examples/ and
// what the plan must show.
type exampleRoot struct {
	// module, for a folder under examples/modules, holds the arguments of a
	// generated root module that calls it and re-exports every output the
	// module declares. Any other folder is planned as a root module itself.
	module string
	// extra is written beside a folder's own files before the plan: what a
	// registry snippet lacks for the test to see its result, such as an
	// output. The snippet itself is planned as it is.
	extra string
	// cloudConfigs is how many distinct #cloud-config documents the plan
	// holds, in outputs and resources alike; each must pass cloud-init's
	// schema check and each systemd unit in it systemd-analyze verify.
	cloudConfigs int
	// outputs has a check for every output of the plan. An output without
	// one, one that is unknown at plan time, or a check without an output
	// fails the test.
	outputs map[string]outputCheck
	// vars are -var arguments of the first plan, such as a value with every
	// character a shell reads specially, which the outputs must carry
	// through a shell as it is.
	vars []string
	// replans, when set, apply the plan (every resource of the folder is an
	// omni_pd_pipeline or a terraform_data, so nothing leaves the copy) and
	// plan again once per entry: what a later change replaces.
	replans []replan
}

// replan is a second plan of an applied example, with variables set or a
// file added, and the managed resources it must replace: none, or exactly
// these, each for its replace_triggered_by.
type replan struct {
	// vars are -var arguments, such as "api_port=8092".
	vars []string
	// override, when set, is written as zz_test_override.tf for this plan
	// alone (Terraform merges *_override.tf files into the blocks they
	// name).
	override string
	// replaced lists the addresses the plan must replace, sorted.
	replaced []string
}

// outputCheck checks one output's planned value, decoded from JSON.
type outputCheck func(t *testing.T, got any) error

// exampleRoots lists every folder under examples/ that holds Terraform
// files. TestExamples fails on a folder missing here, so no example is left
// unplanned: the registry snippets tfplugindocs embeds in docs/ included.
var exampleRoots = map[string]exampleRoot{
	"provider": {
		// The snippet is the provider block alone; a data source shows that
		// the provider it configures plans.
		extra: `
data "omni_pd_pipeline" "check" {
  model = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
}

output "serve_command" {
  value = data.omni_pd_pipeline.check.serve_command
}
`,
		outputs: map[string]outputCheck{
			"serve_command": isJSON(`"vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8091 --stage-configs-path /etc/vllm-omni/deploy-config.yaml --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25203"`),
		},
	},
	"data-sources/omni_pd_pipeline": {outputs: map[string]outputCheck{
		"deploy_config": equalsFile(seedGolden),
		"serve_command": isJSON(`"vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8091 --stage-configs-path /etc/vllm-omni/deploy-config.yaml --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25203"`),
		// What the snippet's comment promises.
		"tp2_devices": isJSON(`{"prefill": [0, 1], "decode": [2, 3], "talker": [4], "code2wav": [4]}`),
	}},
	"resources/omni_pd_pipeline": {outputs: map[string]outputCheck{
		// reserved_ports = [25201, 25202] moves the side-channel ports on,
		// and the omni master after them.
		"ports":         isJSON(`{"api": 8091, "prefill_side_channel": 25203, "decode_side_channel": 25204, "omni_master": 25205}`),
		"serve_command": isJSON(`"vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8091 --stage-configs-path /etc/vllm-omni/qwen3-omni-pd.yaml --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25205"`),
	}},
	"functions/parse_stage_config": {outputs: map[string]outputCheck{
		"format":       isJSON(`"stage_args"`),
		"stage_names":  isJSON(`{"0": "thinker", "1": "talker", "2": "code2wav"}`),
		"gpus_used":    isJSON(`2`),
		"edges":        isJSON(`["0 -> 1", "1 -> 2"]`),
		"final_stages": isJSON(`[0, 2]`),
	}},
	"functions/check_script": {outputs: map[string]outputCheck{
		// The files a host needs besides its drop-ins, the check script
		// among them, as the pipeline names them.
		"files": func(_ *testing.T, got any) error {
			m, ok := got.(map[string]any)
			script, _ := m["/usr/local/lib/vllm-omni/pd-check.py"].(string)
			unit, _ := m["/etc/systemd/system/vllm-omni-stage@.service"].(string)
			if !ok || len(m) != 3 || script != pipeline.CheckScript || !strings.Contains(unit, "/usr/local/lib/vllm-omni/pd-check.py preflight ") {
				return fmt.Errorf("want the config, the check script and the unit, got %.300s", jsonText(got))
			}
			return nil
		},
	}},
	"functions/validate_stage_config": {
		// The snippet stops the plan on errors and warns on warnings, with
		// no output; these show that the config it checks is sound, and
		// every plan's checks must pass.
		extra: `
output "problems" {
  value = local.problems
}

output "checked_config" {
  value = terraform_data.deploy_config.input == local.pd_config
}
`,
		outputs: map[string]outputCheck{
			"problems":       isJSON(`[]`),
			"checked_config": isJSON(`true`),
		},
	},
	"demo": {outputs: map[string]outputCheck{
		"processes": isJSON(`{
  "vllm-omni-stage@0.service": "head",
  "vllm-omni-stage@1.service": "headless",
  "vllm-omni-stage@2.service": "headless",
  "vllm-omni-stage@3.service": "headless"
}`),
		"systemd_unit":  matches(`(?m)^ExecStart=/usr/bin/env python3 /usr/local/lib/vllm-omni/pd-check\.py preflight 0\.24\.0 `),
		"deploy_config": equalsFile(seedGolden),
		"launch":        isJSON(`"vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8091 --stage-configs-path /etc/vllm-omni/deploy-config.yaml --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25203"`),
	}},
	// The machines guide's runners: each host's script, run with stand-ins
	// for srun and docker, starts every process with the engine's argv
	// and environment, every word as planned.
	"runners/slurm": {vars: []string{"config_path=" + hostileConfigPath},
		outputs: map[string]outputCheck{"sbatch_scripts": runsAsPlanned(slurmStep)}},
	"runners/docker": {vars: []string{"config_path=" + hostileConfigPath},
		outputs: map[string]outputCheck{"docker_scripts": runsAsPlanned(dockerRun)}},
	"deployments/gpu-vm": {
		cloudConfigs: 1,
		outputs: map[string]outputCheck{
			"user_data":     isCloudConfig,
			"serve_command": isJSON(`"vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8091 --stage-configs-path /etc/vllm-omni/deploy-config.yaml --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25203"`),
			"api_port":      isJSON(`8091`),
			// On one machine only the API is reached from others.
			"firewall_rules": isJSON(`{"api": 8091}`),
			"stages":         isJSON(`["0 thinker (prefill) on GPU 0", "1 thinker (decode) on GPU 1", "2 talker (stage) on GPU 2", "3 code2wav (stage) on GPU 2"]`),
			"diagram":        isJSON(seedDiagram),
			// The guides' checks, with this plan's unit names and ports.
			"check_commands": allOf(holdsGuideLogChecks("vllm-omni-qwen3-omni-pd"), isCheckScript(
				"# Checks this machine against the plan: cloud-init, the deploy config, its units, the API, its ports, one request through prefill and decode, the head's log of the pair, decode's log of the KV handoff. Exits 1 when any check fails. Run it on the machine as root: terraform output -raw check_commands | ssh <machine> sudo bash",
				headMachine,
				[]string{"--cloud-init"},
				[]string{"--config", "/etc/vllm-omni/deploy-config.yaml", "~[0-9a-f]{64}"},
				[]string{"--unit", "vllm-omni-qwen3-omni-pd-stage@0.service"},
				[]string{"--unit", "vllm-omni-qwen3-omni-pd-stage@1.service"},
				[]string{"--unit", "vllm-omni-qwen3-omni-pd-stage@2.service"},
				[]string{"--unit", "vllm-omni-qwen3-omni-pd-stage@3.service"},
				[]string{"--ready", "http://127.0.0.1:8091/v1/models", "Qwen/Qwen3-Omni-30B-A3B-Instruct"},
				[]string{"--listen", "8091"},
				[]string{"--listen", "25201"},
				[]string{"--listen", "25202"},
				[]string{"--listen", "25203"},
				[]string{"--smoke", "http://127.0.0.1:8091/v1/chat/completions", "Qwen/Qwen3-Omni-30B-A3B-Instruct", "vllm-omni-qwen3-omni-pd-stage@0.service"},
				[]string{"--log", "vllm-omni-qwen3-omni-pd-stage@0.service", "PD disaggregation detected: prefill=stage-0, decode=stage-1"},
				[]string{"--log", "vllm-omni-qwen3-omni-pd-stage@1.service", "NIXL compatibility check passed"},
				[]string{"--no-log", "vllm-omni-qwen3-omni-pd-stage@1.service", "will not utilize KVTransfer"},
				[]string{"--no-log", "vllm-omni-qwen3-omni-pd-stage@1.service", "NIXL transfer failure"},
			)),
		},
		replans: []replan{
			// A new API port changes the deploy config and the units: the
			// relay through terraform_data.pipeline_id replaces the machine.
			{vars: []string{"api_port=8092"}, replaced: []string{"terraform_data.gpu_vm"}},
			// A higher GPU limit the layout already fits keeps the id, and
			// the machine.
			{vars: []string{"gpus=8"}},
			// A release that loads only the stages dialect: the thinker
			// alone, on the registration the plan writes, a new machine.
			{vars: []string{"model=Qwen/Qwen3-Omni-30B-A3B-Thinking", "vllm_omni_version=0.27.0rc1"}, replaced: []string{"terraform_data.gpu_vm"}},
		},
	},
	"deployments/gpu-vm-container": {
		cloudConfigs: 1,
		outputs: map[string]outputCheck{
			// Each stage's drop-in runs its container of the release's
			// image with docker, asking NVIDIA's runtime for its GPU.
			"user_data": allOf(isCloudConfig,
				matches(`ExecStart=/usr/bin/docker run --rm --name vllm-omni-qwen3-omni-pd-stage-0 .*--runtime nvidia --gpus "\\"device=0\\"" .* docker\.io/vllm/vllm-omni:v0\.24\.0 /usr/bin/python3 /usr/local/lib/vllm-omni/pd-check\.py preflight `),
				matches(`(?s)stage_id: 1\n.*?devices: "0"`)),
			"serve_command":  isJSON(`"vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8091 --stage-configs-path /etc/vllm-omni/deploy-config.yaml --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25203"`),
			"api_port":       isJSON(`8091`),
			"firewall_rules": isJSON(`{"api": 8091}`),
			// The machine's GPUs, which the containers ask for.
			"stages": isJSON(`["0 thinker (prefill) on GPU 0", "1 thinker (decode) on GPU 1", "2 talker (stage) on GPU 2", "3 code2wav (stage) on GPU 2"]`),
			// The same checks as on a host install: the containers' units
			// and their journal.
			"check_commands": allOf(holdsGuideLogChecks("vllm-omni-qwen3-omni-pd"), matches(`--unit vllm-omni-qwen3-omni-pd-stage@3\.service`)),
		},
		replans: []replan{
			// Another runtime writes other units: a new machine.
			{vars: []string{"container_runtime=podman"}, replaced: []string{"terraform_data.gpu_vm"}},
		},
	},
	"deployments/multi-cluster": {
		cloudConfigs: 2,
		outputs: map[string]outputCheck{
			"serve_commands": isJSON(`{
  "eu-west": "vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8091 --stage-configs-path /etc/vllm-omni/deploy-config.yaml --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25204",
  "us-east": "vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8091 --stage-configs-path /etc/vllm-omni/deploy-config.yaml --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25205"
}`),
			"ports": isJSON(`{
  "eu-west": {"api": 8091, "prefill_side_channel": 25202, "decode_side_channel": 25203, "omni_master": 25204},
  "us-east": {"api": 8091, "prefill_side_channel": 25203, "decode_side_channel": 25204, "omni_master": 25205}
}`),
			"gpu_count": isJSON(`{"eu-west": 5, "us-east": 3}`),
			// Each cluster's machine, checked with its own units.
			"check_commands": eachKey(map[string]outputCheck{
				"eu-west": matches(`vllm-omni-eu-west-stage@3\.service`),
				"us-east": matches(`vllm-omni-us-east-stage@3\.service`),
			}),
		},
		replans: []replan{
			// One cluster's new layout replaces that cluster's machine
			// only, through its own terraform_data.pipeline_id.
			{
				override: "module \"pipeline\" {\n  tp = each.key == \"eu-west\" ? 1 : each.value.tp\n}\n",
				replaced: []string{`terraform_data.gpu_vm["eu-west"]`},
			},
		},
	},
	"deployments/multi-host": {
		cloudConfigs: 2,
		outputs: map[string]outputCheck{
			"user_data": func(t *testing.T, got any) error {
				m, ok := got.(map[string]any)
				if !ok || len(m) != 2 {
					return fmt.Errorf("want one document for each of the two hosts, got %v", got)
				}
				for _, host := range []string{"10.20.0.11", "10.20.0.12"} {
					if err := isCloudConfig(t, m[host]); err != nil {
						return fmt.Errorf("%s: %w", host, err)
					}
				}
				return nil
			},
			"units": isJSON(`{
  "10.20.0.11": ["vllm-omni-qwen3-omni-pd-stage@0.service"],
  "10.20.0.12": ["vllm-omni-qwen3-omni-pd-stage@1.service", "vllm-omni-qwen3-omni-pd-stage@2.service", "vllm-omni-qwen3-omni-pd-stage@3.service"]
}`),
			"api_endpoint": isJSON(`"http://10.20.0.11:8091"`),
			// What the other machine dials on the head's, and the API.
			"firewall_rules": isJSON(`{
  "10.20.0.11/api": 8091,
  "10.20.0.11/prefill_side_channel": 25201,
  "10.20.0.11/omni_master": 25202
}`),
			// The head's ephemeral range, as data a firewall rule can
			// for_each over, with Linux's default range.
			"ephemeral_port_rules": isJSON(`{
  "10.20.0.11/ephemeral": {"host": "10.20.0.11", "from_port": 32768, "to_port": 60999, "sources": ["10.20.0.0/16"], "purpose": "the head's per-stage sockets, for the headless stages"}
}`),
			// Each machine's own units and ports; the API checks on the
			// head alone, at its address.
			"check_commands": eachKey(map[string]outputCheck{
				"10.20.0.11": isCheckScript(
					"# Checks 10.20.0.11 against the plan: cloud-init, the deploy config, its units, the API, its ports, one request through prefill and decode, the head's log of the pair. Exits 1 when any check fails. Run it there as root: terraform output -json check_commands | jq -r '.\"10.20.0.11\"' | ssh 10.20.0.11 sudo bash",
					headMachine,
					[]string{"--cloud-init"},
					[]string{"--config", "/etc/vllm-omni/deploy-config.yaml", "~[0-9a-f]{64}"},
					[]string{"--unit", "vllm-omni-qwen3-omni-pd-stage@0.service"},
					[]string{"--ready", "http://10.20.0.11:8091/v1/models", "Qwen/Qwen3-Omni-30B-A3B-Instruct"},
					[]string{"--listen", "8091"},
					[]string{"--listen", "25201"},
					[]string{"--listen", "25202"},
					// 25203 is the edge connector's, which nothing binds.
					[]string{"--smoke", "http://10.20.0.11:8091/v1/chat/completions", "Qwen/Qwen3-Omni-30B-A3B-Instruct", "vllm-omni-qwen3-omni-pd-stage@0.service"},
					[]string{"--log", "vllm-omni-qwen3-omni-pd-stage@0.service", "PD disaggregation detected: prefill=stage-0, decode=stage-1"},
				),
				// Decode is on this machine: its log shows the handoff. It
				// waits for no API.
				"10.20.0.12": isCheckScript(
					"# Checks 10.20.0.12 against the plan: cloud-init, the deploy config, its units, its ports, decode's log of the KV handoff. Exits 1 when any check fails. Run it there as root: terraform output -json check_commands | jq -r '.\"10.20.0.12\"' | ssh 10.20.0.12 sudo bash",
					[]string{"python3", "/usr/local/lib/vllm-omni/pd-check.py", "machine"},
					[]string{"--cloud-init"},
					[]string{"--config", "/etc/vllm-omni/deploy-config.yaml", "~[0-9a-f]{64}"},
					[]string{"--unit", "vllm-omni-qwen3-omni-pd-stage@1.service"},
					[]string{"--unit", "vllm-omni-qwen3-omni-pd-stage@2.service"},
					[]string{"--unit", "vllm-omni-qwen3-omni-pd-stage@3.service"},
					[]string{"--listen", "25201"},
					[]string{"--log", "vllm-omni-qwen3-omni-pd-stage@1.service", "NIXL compatibility check passed"},
					[]string{"--no-log", "vllm-omni-qwen3-omni-pd-stage@1.service", "will not utilize KVTransfer"},
					[]string{"--no-log", "vllm-omni-qwen3-omni-pd-stage@1.service", "NIXL transfer failure"},
				),
			}),
		},
		replans: []replan{
			// New units replace both machines, through the relay.
			{vars: []string{"vllm_bin_dir=/opt/venv/bin"}, replaced: []string{`terraform_data.gpu_machine["10.20.0.11"]`, `terraform_data.gpu_machine["10.20.0.12"]`}},
			// A wider ephemeral range changes a firewall rule, not a
			// machine.
			{vars: []string{"head_ephemeral_ports={first=15000,last=60999}"}},
		},
	},
	"modules/pd-pipeline": {
		module:       "cluster_name = \"a\"\n  model        = \"Qwen/Qwen3-Omni-30B-A3B-Instruct\"\n  gpus         = 4",
		cloudConfigs: 1,
		outputs: map[string]outputCheck{
			"id":        matches(`^[0-9a-f]{64}$`),
			"user_data": isCloudConfig,
			"user_data_by_host": func(t *testing.T, got any) error {
				m, ok := got.(map[string]any)
				if !ok || len(m) != 1 {
					return fmt.Errorf("want one document, for the host local, got %v", got)
				}
				return isCloudConfig(t, m["local"])
			},
			"launches": hasJSON(`[{
  "host": "local",
  "processes": [
    {"role": "head", "stage_id": 0, "unit_name": "vllm-omni-a-stage@0.service",
     "systemd_dropin": {"path": "/etc/systemd/system/vllm-omni-a-stage@0.service.d/plan.conf",
       "content": "[Unit]\nWants=vllm-omni-a-stage@1.service vllm-omni-a-stage@2.service vllm-omni-a-stage@3.service\n\n[Service]\nEnvironment=\"OMNI_PD_CHECKS=--gpus 1 --transport NixlConnector=nixl._api\"\nEnvironment=\"OMNI_PD_STAGE_ARGS=--port 8091\"\nEnvironment=\"VLLM_NIXL_SIDE_CHANNEL_PORT=25201\"\n"}},
    {"role": "headless", "stage_id": 1, "unit_name": "vllm-omni-a-stage@1.service"},
    {"role": "headless", "stage_id": 2, "unit_name": "vllm-omni-a-stage@2.service"},
    {"role": "headless", "stage_id": 3, "unit_name": "vllm-omni-a-stage@3.service"}
  ]
}]`),
			"ports": isJSON(`[
  {"name": "api", "port": 8091, "stage_id": null, "host": null},
  {"name": "prefill_side_channel", "port": 25201, "stage_id": 0, "host": null},
  {"name": "decode_side_channel", "port": 25202, "stage_id": 1, "host": null},
  {"name": "omni_master", "port": 25203, "stage_id": null, "host": null}
]`),
			"serve_command": isJSON(`"vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8091 --stage-configs-path /etc/vllm-omni/deploy-config.yaml --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25203"`),
			"stages": hasJSON(`[
  {"stage_id": 0, "role": "prefill", "model_stage": "thinker", "devices": [0], "kv_role": "kv_producer", "bootstrap_port": 25201},
  {"stage_id": 1, "role": "decode", "model_stage": "thinker", "devices": [1], "kv_role": "kv_consumer", "bootstrap_port": 25202},
  {"stage_id": 2, "role": "stage", "model_stage": "talker", "devices": [2], "kv_role": null},
  {"stage_id": 3, "role": "stage", "model_stage": "code2wav", "devices": [2], "kv_role": null}
]`),
			"vllm_omni_release": isJSON(`"0.24.0"`),
			"gpu_count":         isJSON(`3`),
			"diagram":           isJSON(seedDiagram),
			"config_sha256":     matches(`^[0-9a-f]{64}$`),
			"config_path":       isJSON(`"/etc/vllm-omni/deploy-config.yaml"`),
			"api_port":          isJSON(`8091`),
			"health": hasJSON(`{
  "host": "127.0.0.1", "port": 8091,
  "liveness_url": "http://127.0.0.1:8091/health",
  "readiness_url": "http://127.0.0.1:8091/v1/models",
  "smoke_url": "http://127.0.0.1:8091/v1/chat/completions"
}`),
			"check_commands_by_host": eachKey(map[string]outputCheck{"local": isCheckScript(
				"# Checks this machine against the plan: cloud-init, the deploy config, its units, the API, its ports, one request through prefill and decode, the head's log of the pair, decode's log of the KV handoff. Exits 1 when any check fails. Run it on the machine as root: terraform output -raw check_commands | ssh <machine> sudo bash",
				headMachine,
				[]string{"--cloud-init"},
				[]string{"--config", "/etc/vllm-omni/deploy-config.yaml", "~[0-9a-f]{64}"},
				[]string{"--unit", "vllm-omni-a-stage@0.service"},
				[]string{"--unit", "vllm-omni-a-stage@1.service"},
				[]string{"--unit", "vllm-omni-a-stage@2.service"},
				[]string{"--unit", "vllm-omni-a-stage@3.service"},
				[]string{"--ready", "http://127.0.0.1:8091/v1/models", "Qwen/Qwen3-Omni-30B-A3B-Instruct"},
				[]string{"--listen", "8091"},
				[]string{"--listen", "25201"},
				[]string{"--listen", "25202"},
				[]string{"--listen", "25203"},
				[]string{"--smoke", "http://127.0.0.1:8091/v1/chat/completions", "Qwen/Qwen3-Omni-30B-A3B-Instruct", "vllm-omni-a-stage@0.service"},
				[]string{"--log", "vllm-omni-a-stage@0.service", "PD disaggregation detected: prefill=stage-0, decode=stage-1"},
				[]string{"--log", "vllm-omni-a-stage@1.service", "NIXL compatibility check passed"},
				[]string{"--no-log", "vllm-omni-a-stage@1.service", "will not utilize KVTransfer"},
				[]string{"--no-log", "vllm-omni-a-stage@1.service", "NIXL transfer failure"},
			)}),
		},
	},
	"modules/pd-host-packing": {
		module: "pipelines = 3\n  gpus      = 9",
		outputs: map[string]outputCheck{
			// Three pipelines side by side, each with its own GPUs, API
			// port, port range and config file.
			"pipelines": hasJSON(`[
  {"config_path": "/etc/vllm-omni/pipeline-0.yaml", "devices": [0, 1, 2], "ports": [8091, 25201, 25202, 25203], "api_port": 8091,
   "health": {"readiness_url": "http://127.0.0.1:8091/v1/models"},
   "launches": [{"host": "local", "ports": [8091, 25201, 25202, 25203], "processes": [{"unit_name": "vllm-omni-0-stage@0.service"}, {}, {}, {}]}],
   "serve_command": "vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8091 --stage-configs-path /etc/vllm-omni/pipeline-0.yaml --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25203"},
  {"config_path": "/etc/vllm-omni/pipeline-1.yaml", "devices": [3, 4, 5], "ports": [8092, 25211, 25212, 25213], "api_port": 8092,
   "health": {"readiness_url": "http://127.0.0.1:8092/v1/models"},
   "serve_command": "vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8092 --stage-configs-path /etc/vllm-omni/pipeline-1.yaml --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25213"},
  {"config_path": "/etc/vllm-omni/pipeline-2.yaml", "devices": [6, 7, 8], "ports": [8093, 25221, 25222, 25223],
   "serve_command": "vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8093 --stage-configs-path /etc/vllm-omni/pipeline-2.yaml --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25223"}
]`),
			"ports":     isJSON(`[8091, 25201, 25202, 25203, 8092, 25211, 25212, 25213, 8093, 25221, 25222, 25223]`),
			"gpu_count": isJSON(`9`),
			// One id per pipeline, each its own: a relay of the list
			// changes when any pipeline does.
			"ids": func(t *testing.T, got any) error {
				ids, ok := got.([]any)
				if !ok || len(ids) != 3 {
					return fmt.Errorf("got %s, want three ids", jsonText(got))
				}
				for i, id := range ids {
					if err := matches(`^[0-9a-f]{64}$`)(t, id); err != nil {
						return fmt.Errorf("[%d]: %w", i, err)
					}
					if slices.Index(ids, id) != i {
						return fmt.Errorf("[%d] repeats an earlier id: %s", i, jsonText(got))
					}
				}
				return nil
			},
		},
	},
	"deployments/one-host-two-pipelines": {
		cloudConfigs: 1,
		outputs: map[string]outputCheck{
			// One document installs both pipelines, neither overwriting
			// the other's files.
			"user_data": writesFiles(
				"/etc/vllm-omni/pipeline-0.yaml", "/etc/vllm-omni/pipeline-1.yaml", "/usr/local/lib/vllm-omni/pd-check.py",
				"/etc/systemd/system/vllm-omni-0-stage@.service",
				"/etc/systemd/system/vllm-omni-0-stage@0.service.d/plan.conf", "/etc/systemd/system/vllm-omni-0-stage@1.service.d/plan.conf",
				"/etc/systemd/system/vllm-omni-0-stage@2.service.d/plan.conf", "/etc/systemd/system/vllm-omni-0-stage@3.service.d/plan.conf",
				"/etc/systemd/system/vllm-omni-1-stage@.service",
				"/etc/systemd/system/vllm-omni-1-stage@0.service.d/plan.conf", "/etc/systemd/system/vllm-omni-1-stage@1.service.d/plan.conf",
				"/etc/systemd/system/vllm-omni-1-stage@2.service.d/plan.conf", "/etc/systemd/system/vllm-omni-1-stage@3.service.d/plan.conf",
			),
			"units": isJSON(`[
  ["vllm-omni-0-stage@0.service", "vllm-omni-0-stage@1.service", "vllm-omni-0-stage@2.service", "vllm-omni-0-stage@3.service"],
  ["vllm-omni-1-stage@0.service", "vllm-omni-1-stage@1.service", "vllm-omni-1-stage@2.service", "vllm-omni-1-stage@3.service"]
]`),
			"serve_commands": isJSON(`[
  "vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8091 --stage-configs-path /etc/vllm-omni/pipeline-0.yaml --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25203",
  "vllm serve Qwen/Qwen3-Omni-30B-A3B-Instruct --omni --port 8092 --stage-configs-path /etc/vllm-omni/pipeline-1.yaml --stage-id 0 --omni-master-address 127.0.0.1 --omni-master-port 25213"
]`),
			"api_ports":      isJSON(`[8091, 8092]`),
			"firewall_rules": isJSON(`{"pipeline-0/api": 8091, "pipeline-1/api": 8092}`),
			"gpu_count":      isJSON(`6`),
			"check_commands": isCheckScript(
				"# Checks this machine against both pipelines' plans: cloud-init, the deploy configs, the units, each API, the ports, one request through each prefill and decode, each head's log of its pair and each decode's log of the KV handoff. Exits 1 when any check fails. Run it on the machine as root: terraform output -raw check_commands | ssh <machine> sudo bash",
				headMachine,
				[]string{"--cloud-init"},
				[]string{"--config", "/etc/vllm-omni/pipeline-0.yaml", "~[0-9a-f]{64}"},
				[]string{"--config", "/etc/vllm-omni/pipeline-1.yaml", "~[0-9a-f]{64}"},
				[]string{"--unit", "vllm-omni-0-stage@0.service"},
				[]string{"--unit", "vllm-omni-0-stage@1.service"},
				[]string{"--unit", "vllm-omni-0-stage@2.service"},
				[]string{"--unit", "vllm-omni-0-stage@3.service"},
				[]string{"--unit", "vllm-omni-1-stage@0.service"},
				[]string{"--unit", "vllm-omni-1-stage@1.service"},
				[]string{"--unit", "vllm-omni-1-stage@2.service"},
				[]string{"--unit", "vllm-omni-1-stage@3.service"},
				[]string{"--ready", "http://127.0.0.1:8091/v1/models", "Qwen/Qwen3-Omni-30B-A3B-Instruct"},
				[]string{"--ready", "http://127.0.0.1:8092/v1/models", "Qwen/Qwen3-Omni-30B-A3B-Instruct"},
				[]string{"--listen", "8091"},
				[]string{"--listen", "25201"},
				[]string{"--listen", "25202"},
				[]string{"--listen", "25203"},
				[]string{"--listen", "8092"},
				[]string{"--listen", "25211"},
				[]string{"--listen", "25212"},
				[]string{"--listen", "25213"},
				[]string{"--smoke", "http://127.0.0.1:8091/v1/chat/completions", "Qwen/Qwen3-Omni-30B-A3B-Instruct", "vllm-omni-0-stage@0.service"},
				[]string{"--smoke", "http://127.0.0.1:8092/v1/chat/completions", "Qwen/Qwen3-Omni-30B-A3B-Instruct", "vllm-omni-1-stage@0.service"},
				[]string{"--log", "vllm-omni-0-stage@0.service", "PD disaggregation detected: prefill=stage-0, decode=stage-1"},
				[]string{"--log", "vllm-omni-0-stage@1.service", "NIXL compatibility check passed"},
				[]string{"--no-log", "vllm-omni-0-stage@1.service", "will not utilize KVTransfer"},
				[]string{"--no-log", "vllm-omni-0-stage@1.service", "NIXL transfer failure"},
				[]string{"--log", "vllm-omni-1-stage@0.service", "PD disaggregation detected: prefill=stage-0, decode=stage-1"},
				[]string{"--log", "vllm-omni-1-stage@1.service", "NIXL compatibility check passed"},
				[]string{"--no-log", "vllm-omni-1-stage@1.service", "will not utilize KVTransfer"},
				[]string{"--no-log", "vllm-omni-1-stage@1.service", "NIXL transfer failure"},
			),
		},
		replans: []replan{
			// New API ports change both pipelines: the relay of their ids
			// replaces the machine.
			{vars: []string{"first_api_port=9000"}, replaced: []string{"terraform_data.gpu_vm"}},
			// The APIs' clients are firewall rules, not the machine.
			{vars: []string{`api_allowed_cidrs=["10.1.0.0/16"]`}},
		},
	},
}

// headMachine is the first line of the head machine's check command: the
// check script's machine, waiting for the API while the stages load the
// model.
var headMachine = []string{"python3", "/usr/local/lib/vllm-omni/pd-check.py", "machine", "--wait", "600"}

// seedGolden is the engine's golden deploy config for the seed input: what
// a plan with only the model must render.
const seedGolden = "../pipeline/testdata/golden/seed_qwen3_omni.yaml"

// seedDiagram is the seed pipeline's diagram output, as a JSON string.
const seedDiagram = `"flowchart LR\n  s0[\"0: thinker (prefill)<br/>GPU 0\"]\n  s1[\"1: thinker (decode)<br/>GPU 1\"]\n  s2[\"2: talker<br/>GPU 2\"]\n  s3[\"3: code2wav<br/>GPU 2\"]\n  s0 -- \"KV: NixlConnector\" --> s1\n  s1 --> s2\n  s2 --> s3\n"`

// isJSON wants the value to be exactly the given JSON.
func isJSON(want string) outputCheck {
	return func(t *testing.T, got any) error {
		var w any
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatalf("bad expectation %s: %v", want, err)
		}
		if !reflect.DeepEqual(got, w) {
			return fmt.Errorf("got %s\nwant %s", jsonText(got), jsonText(w))
		}
		return nil
	}
}

// hasJSON wants the value to hold the given JSON: objects may have more
// keys than it names, lists must have its elements, in its order.
func hasJSON(want string) outputCheck {
	return func(t *testing.T, got any) error {
		var w any
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatalf("bad expectation %s: %v", want, err)
		}
		if path, ok := holds(got, w, "$"); !ok {
			return fmt.Errorf("at %s: got %s\nwant it to hold %s", path, jsonText(got), jsonText(w))
		}
		return nil
	}
}

func holds(got, want any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, false
		}
		for _, k := range slices.Sorted(maps.Keys(w)) {
			if _, ok := g[k]; !ok {
				return path + "." + k, false
			}
			if p, ok := holds(g[k], w[k], path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path, false
		}
		for i := range w {
			if p, ok := holds(g[i], w[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	default:
		return path, reflect.DeepEqual(got, want)
	}
}

// equalsFile wants a string equal to a file's content.
func equalsFile(path string) outputCheck {
	return func(t *testing.T, got any) error {
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got != string(want) {
			return fmt.Errorf("differs from %s:\n%v", path, got)
		}
		return nil
	}
}

func matches(re string) outputCheck {
	return func(_ *testing.T, got any) error {
		if s, ok := got.(string); !ok || !regexp.MustCompile(re).MatchString(s) {
			return fmt.Errorf("got %s, want a string matching %s", jsonText(got), re)
		}
		return nil
	}
}

// eachKey wants an object with exactly these keys, each value passing its
// check.
func eachKey(checks map[string]outputCheck) outputCheck {
	return func(t *testing.T, got any) error {
		m, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("got %s, want an object", jsonText(got))
		}
		if have, want := slices.Sorted(maps.Keys(m)), slices.Sorted(maps.Keys(checks)); !slices.Equal(have, want) {
			return fmt.Errorf("keys %q, want %q", have, want)
		}
		for _, k := range slices.Sorted(maps.Keys(checks)) {
			if err := checks[k](t, m[k]); err != nil {
				return fmt.Errorf("%s: %w", k, err)
			}
		}
		return nil
	}
}

// isCloudConfig wants a #cloud-config document; TestExamples checks each
// such document in the plan with cloud-init and systemd-analyze.
func isCloudConfig(_ *testing.T, got any) error {
	if s, ok := got.(string); !ok || !strings.HasPrefix(s, "#cloud-config\n") {
		return fmt.Errorf("got %.80s, want a #cloud-config document", jsonText(got))
	}
	return nil
}

// writesFiles wants a #cloud-config document whose write_files are
// exactly these paths, in this order.
func writesFiles(paths ...string) outputCheck {
	return func(t *testing.T, got any) error {
		if err := isCloudConfig(t, got); err != nil {
			return err
		}
		var doc struct {
			WriteFiles []struct {
				Path string `yaml:"path"`
			} `yaml:"write_files"`
		}
		s, _ := got.(string)
		if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
			return fmt.Errorf("not YAML: %v", err)
		}
		var have []string
		for _, f := range doc.WriteFiles {
			have = append(have, f.Path)
		}
		if !slices.Equal(have, paths) {
			return fmt.Errorf("writes %q, want %q", have, paths)
		}
		return nil
	}
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var outputName = regexp.MustCompile(`(?m)^output "([^"]+)"`)

// moduleRoot writes a root module that calls the module in dir with args and
// re-exports each of its outputs, and returns the root's directory.
func moduleRoot(t *testing.T, examples, dir, args string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
	var outputs []string
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range outputName.FindAllStringSubmatch(string(src), -1) {
			outputs = append(outputs, m[1])
		}
	}
	if len(outputs) == 0 {
		t.Fatalf("%s declares no output", dir)
	}
	sort.Strings(outputs)
	name := filepath.Base(dir)
	root := filepath.Join(examples, "module-roots", name)
	var b strings.Builder
	fmt.Fprintf(&b, `terraform {
  required_providers {
    omni = {
      source = "omnipd/omni"
    }
  }
}

module "this" {
  source = "../../modules/%s"

  %s
}
`, name, args)
	for _, o := range outputs {
		fmt.Fprintf(&b, "\noutput %q {\n  value = module.this.%s\n}\n", o, o)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "main.tf"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

var (
	standIn  = regexp.MustCompile(`(?m)^resource "terraform_data" "([^"]+)"`)
	linkPath = regexp.MustCompile(`\]\(([^)#]+)(?:#[^)]*)?\)`)
)

// Every worked example under examples/deployments has a README that says
// how to run it locally (scripts/demo.sh on that folder), names each of its
// outputs and each terraform_data it plans (the stand-ins to replace for a
// real cloud, and the relays to keep), and links only to files that exist.
func TestExamples_DeploymentReadmes(t *testing.T) {
	root := filepath.Join("..", "..", "examples", "deployments")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
		if err != nil {
			t.Errorf("examples/deployments/%s has no README.md: %v", e.Name(), err)
			continue
		}
		text := string(readme)
		if run := "scripts/demo.sh examples/deployments/" + e.Name(); !strings.Contains(text, run) {
			t.Errorf("%s/README.md does not say how to run it: %s", e.Name(), run)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.tf"))
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range outputName.FindAllStringSubmatch(string(src), -1) {
				if !strings.Contains(text, "`"+m[1]+"`") {
					t.Errorf("%s/README.md does not name the output %s", e.Name(), m[1])
				}
			}
			for _, m := range standIn.FindAllStringSubmatch(string(src), -1) {
				if !strings.Contains(text, "`terraform_data."+m[1]+"`") {
					t.Errorf("%s/README.md does not name terraform_data.%s", e.Name(), m[1])
				}
			}
		}
		for _, m := range linkPath.FindAllStringSubmatch(text, -1) {
			if strings.Contains(m[1], "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(m[1]))); err != nil {
				t.Errorf("%s/README.md links to %s: %v", e.Name(), m[1], err)
			}
		}
	}
}

// exampleFolders lists, relative to examples, every folder that holds a .tf
// file.
func exampleFolders(t *testing.T, examples string) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.Walk(examples, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if info.IsDir() && info.Name() == ".terraform" {
			return filepath.SkipDir
		}
		if !info.IsDir() && strings.HasSuffix(path, ".tf") {
			rel, _ := filepath.Rel(examples, filepath.Dir(path))
			seen[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// Every folder under examples/ is planned by Terraform itself, as a user
// would: the worked examples call the example modules by relative path,
// which plugin-testing cannot install, and the registry snippets are root
// modules of their own. The test builds the provider into a local
// filesystem mirror once, copies examples/ to a temporary directory, and
// runs `terraform init` and `terraform plan` in each folder, with no
// network. Every output must be known in the plan and hold what
// exampleRoots says; every check and precondition must pass, and the plan
// must print no warning. Every cloud-init document a plan renders must
// pass `cloud-init schema`, and every systemd unit inside it
// `systemd-analyze verify`. Where exampleRoots lists replans, the plan is
// applied in the copy and planned again with each change: the machines it
// names, and no other resource, must be replaced, which shows the relay
// from a module's id to replace_triggered_by works.
func TestExamples(t *testing.T) {
	tf := terraformCLI(t, "OpenTofu checks the examples' required_version >= 1.8.0 against its own version, and this test's mirror serves registry.terraform.io addresses only")
	examples := copyExamples(t)
	folders := exampleFolders(t, examples)
	for _, f := range folders {
		if _, ok := exampleRoots[f]; !ok {
			t.Errorf("examples/%s is not planned: add it to exampleRoots, with the outputs its plan must show", f)
		}
	}
	for name := range exampleRoots {
		if !slices.Contains(folders, name) {
			t.Errorf("exampleRoots lists examples/%s, which holds no .tf file", name)
		}
	}
	cliConfig := providerMirror(t)
	for _, name := range slices.Sorted(maps.Keys(exampleRoots)) {
		want := exampleRoots[name]
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(examples, filepath.FromSlash(name))
			if want.module != "" {
				dir = moduleRoot(t, examples, dir, want.module)
			}
			if want.extra != "" {
				if err := os.WriteFile(filepath.Join(dir, "zz_test_outputs.tf"), []byte(want.extra), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			planExample(t, tf, cliConfig, dir, want)
		})
	}
}

// planExample runs terraform init and plan in dir and checks the plan
// against want.
func planExample(t *testing.T, tf, cliConfig, dir string, want exampleRoot) {
	t.Helper()
	cli := exampleCLI{t: t, tf: tf, cliConfig: cliConfig, dir: dir}
	cli.run("init", "-input=false", "-backend=false", "-no-color")
	args := []string{"plan", "-input=false", "-no-color", "-out=plan.bin"}
	for _, v := range want.vars {
		args = append(args, "-var", v)
	}
	if out := cli.run(args...); strings.Contains(string(out), "Warning:") {
		t.Errorf("the plan warns:\n%s", out)
	}
	var plan examplePlan
	if err := json.Unmarshal(cli.run("show", "-json", "plan.bin"), &plan); err != nil {
		t.Fatal(err)
	}
	checkExamplePlan(t, filepath.Base(dir), plan, want)

	if len(want.replans) == 0 {
		return
	}
	cli.run("apply", "-input=false", "-no-color", "plan.bin")
	// A drift job on the applied example finds no drift
	// (TestDriftJob_RefreshOnlyExitsZero says why it did).
	drift := cli.command("plan", "-refresh-only", "-detailed-exitcode", "-input=false", "-no-color")
	if out, err := drift.CombinedOutput(); err != nil {
		t.Errorf("plan -refresh-only -detailed-exitcode after apply: %v, want exit 0 (no drift)\n%s", err, out)
	}
	for _, r := range want.replans {
		replanExample(t, cli, r)
	}
}

// exampleCLI runs Terraform in an example's folder, with the test's CLI
// configuration.
type exampleCLI struct {
	t                  *testing.T
	tf, cliConfig, dir string
}

func (c exampleCLI) command(args ...string) *exec.Cmd {
	cmd := exec.Command(c.tf, append([]string{"-chdir=" + c.dir}, args...)...)
	cmd.Env = append(os.Environ(), "TF_CLI_CONFIG_FILE="+c.cliConfig, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1")
	return cmd
}

// run runs a command and gives its output; a failure fails the test.
func (c exampleCLI) run(args ...string) []byte {
	c.t.Helper()
	out, err := c.command(args...).CombinedOutput()
	if err != nil {
		c.t.Fatalf("terraform %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// examplePlan is what the tests read of a plan's JSON.
type examplePlan struct {
	// Every value the plan knows, outputs and resources alike: a
	// machine's user_data is often only an input of the machine.
	PlannedValues map[string]any `json:"planned_values"`
	OutputChanges map[string]struct {
		After        any `json:"after"`
		AfterUnknown any `json:"after_unknown"`
	} `json:"output_changes"`
	Checks []struct {
		Address struct {
			ToDisplay string `json:"to_display"`
		} `json:"address"`
		Status string `json:"status"`
	} `json:"checks"`
}

// checkExamplePlan holds a plan to what exampleRoots says of its folder:
// every output known and as checked, every check passing, and the
// cloud-init documents it renders.
func checkExamplePlan(t *testing.T, folder string, plan examplePlan, want exampleRoot) {
	t.Helper()
	for name, change := range plan.OutputChanges {
		check, ok := want.outputs[name]
		switch {
		case !ok:
			t.Errorf("output %s has no check in exampleRoots", name)
		case anyTrue(change.AfterUnknown):
			t.Errorf("output %s is not known at plan time", name)
		default:
			if err := check(t, change.After); err != nil {
				t.Errorf("output %s: %v", name, err)
			}
		}
	}
	for name := range want.outputs {
		if _, ok := plan.OutputChanges[name]; !ok {
			t.Errorf("the plan has no output %s", name)
		}
	}
	for _, c := range plan.Checks {
		if c.Status != "pass" {
			t.Errorf("%s: status %s at plan time, want pass", c.Address.ToDisplay, c.Status)
		}
	}
	seen := map[string]bool{}
	for _, doc := range cloudConfigs(plan.PlannedValues) {
		if !seen[doc] {
			seen[doc] = true
			checkCloudConfig(t, folder, doc)
		}
	}
	if len(seen) != want.cloudConfigs {
		t.Errorf("the plan renders %d distinct cloud-init documents, want %d", len(seen), want.cloudConfigs)
	}
}

// replanExample plans an applied example again with r's variables and
// override, and holds the plan to the replacements r lists.
func replanExample(t *testing.T, cli exampleCLI, r replan) {
	t.Helper()
	override := filepath.Join(cli.dir, "zz_test_override.tf")
	if r.override != "" {
		if err := os.WriteFile(override, []byte(r.override), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"plan", "-input=false", "-no-color", "-out=replan.bin"}
	for _, v := range r.vars {
		args = append(args, "-var="+v)
	}
	cli.run(args...)
	if err := os.Remove(override); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var replanned struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Mode    string `json:"mode"`
			Change  struct {
				Actions []string `json:"actions"`
			} `json:"change"`
			ActionReason string `json:"action_reason"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal(cli.run("show", "-json", "replan.bin"), &replanned); err != nil {
		t.Fatal(err)
	}
	replaced := []string{}
	for _, c := range replanned.ResourceChanges {
		if c.Mode != "managed" || !slices.Contains(c.Change.Actions, "delete") || !slices.Contains(c.Change.Actions, "create") {
			continue
		}
		replaced = append(replaced, c.Address)
		if c.ActionReason != "replace_by_triggers" {
			t.Errorf("with %v%s: %s is replaced for %q, want replace_by_triggers", r.vars, overrideNote(r), c.Address, c.ActionReason)
		}
	}
	sort.Strings(replaced)
	if !slices.Equal(replaced, r.replaced) {
		t.Errorf("with %v%s: the plan replaces %q, want %q", r.vars, overrideNote(r), replaced, r.replaced)
	}
}

func overrideNote(r replan) string {
	if r.override == "" {
		return ""
	}
	return " and " + strings.TrimSpace(r.override)
}

// anyTrue reports whether an after_unknown value marks anything unknown.
func anyTrue(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case map[string]any:
		for _, e := range x {
			if anyTrue(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if anyTrue(e) {
				return true
			}
		}
	}
	return false
}

// cloudConfigs finds every #cloud-config document in an output value.
func cloudConfigs(v any) []string {
	switch x := v.(type) {
	case string:
		if strings.HasPrefix(x, "#cloud-config\n") {
			return []string{x}
		}
	case map[string]any:
		var out []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			out = append(out, cloudConfigs(x[k])...)
		}
		return out
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, cloudConfigs(e)...)
		}
		return out
	}
	return nil
}

var execStart = regexp.MustCompile(`(?m)^ExecStart=(\S+)`)

// execLine is a command line's setting, its prefixes and its executable.
var execLine = regexp.MustCompile(`(?m)^(Exec[A-Za-z]+=[-+@:!]*)(/\S+)`)

// stubMissingExecutables replaces each command line's executable that
// this machine lacks (a container runtime's client) with stub.
func stubMissingExecutables(unit, stub string) string {
	return execLine.ReplaceAllStringFunc(unit, func(line string) string {
		m := execLine.FindStringSubmatch(line)
		if _, err := os.Stat(m[2]); err == nil {
			return line
		}
		return m[1] + stub
	})
}

// writeDockerService writes a unit that stands in for dockerd, which
// container units of docker require, where systemd-analyze looks for it.
func writeDockerService(t *testing.T, units string) {
	t.Helper()
	if err := os.MkdirAll(units, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(units, "docker.service"), []byte("[Unit]\nDescription=stands in for dockerd\n[Service]\nExecStart=/bin/true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkCloudConfig runs cloud-init's own schema check on a document, and
// systemd-analyze verify on every unit it enables, as systemd would load
// it from the files the document writes under /etc/systemd/system (a
// stage's instance from the template and its drop-in), with the unit
// files' ExecStart replaced by a stub (verify wants the executable to
// exist).
func checkCloudConfig(t *testing.T, output, doc string) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "user-data")
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cloudInit := testtool.Need(t, "cloud-init")
	if out, err := exec.Command(cloudInit, "schema", "--config-file", path).CombinedOutput(); err != nil {
		t.Errorf("output %s: cloud-init schema: %v\n%s\n%s", output, err, out, doc)
	}
	var parsed struct {
		WriteFiles []struct {
			Path    string `yaml:"path"`
			Content string `yaml:"content"`
		} `yaml:"write_files"`
		RunCmd [][]string `yaml:"runcmd"`
	}
	if err := yaml.Unmarshal([]byte(doc), &parsed); err != nil {
		t.Fatalf("output %s is not YAML: %v", output, err)
	}
	analyze := testtool.Need(t, "systemd-analyze")
	stub := filepath.Join(dir, "vllm")
	if err := os.WriteFile(stub, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	units := filepath.Join(dir, "units")
	for _, f := range parsed.WriteFiles {
		rel, ok := strings.CutPrefix(f.Path, "/etc/systemd/system/")
		if !ok {
			continue
		}
		content := f.Content
		if !strings.Contains(rel, "/") {
			content = execStart.ReplaceAllString(content, "ExecStart="+stub)
		}
		content = stubMissingExecutables(content, stub)
		if strings.Contains(content, "docker.service") {
			writeDockerService(t, units)
		}
		upath := filepath.Join(units, rel)
		if err := os.MkdirAll(filepath.Dir(upath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(upath, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	enabled := 0
	for _, cmd := range parsed.RunCmd {
		if len(cmd) < 2 || cmd[0] != "systemctl" || cmd[1] != "enable" {
			continue
		}
		name := cmd[len(cmd)-1]
		enabled++
		if out, err := exec.Command(analyze, "verify", filepath.Join(units, name)).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("output %s: systemd-analyze verify %s: %v\n%s", output, name, err, out)
		}
	}
	if enabled == 0 {
		t.Errorf("output %s enables no systemd unit", output)
	}
}

// providerMirror and copyExamples are testtool's, shared with the boot
// test.
func providerMirror(t *testing.T) string { return testtool.ProviderMirror(t) }

func copyExamples(t *testing.T) string { return testtool.CopyExamples(t) }

// cliVersion is the first line `version` prints: "Terraform v1.8.5",
// "OpenTofu v1.6.3". plugin-testing's version checks cannot tell the two
// apart: OpenTofu reports its own version as terraform_version.
func cliVersion(t *testing.T, tf string) string {
	t.Helper()
	cmd := exec.Command(tf, "version")
	cmd.Env = append(os.Environ(), "CHECKPOINT_DISABLE=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s version: %v", tf, err)
	}
	line, _, _ := strings.Cut(string(out), "\n")
	return line
}
