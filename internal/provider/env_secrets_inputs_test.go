package provider

import (
	"strings"
	"testing"
)

// A stage's environment that would undo what the plan writes, and a
// secret Terraform would store, are errors at the attribute that holds
// them, through Terraform for the data source and the resource alike:
// before, each was planned, stored in state and written to the machines
// with no word.
func TestAccPDPipeline_EnvAndSecretInputs(t *testing.T) {
	const token = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
	withEnv := func(line string) string {
		thinker := "      model_stage: thinker\n      worker_type: ar\n"
		return baseConfig(strings.Replace(goodBase, thinker, thinker+"    runtime:\n      env:\n        "+line+"\n", 1))
	}
	runBadInputs(t, []badInput{
		{name: "stage env OMNI_PD_STAGE_ARGS", body: []string{withEnv(`OMNI_PD_STAGE_ARGS: "--headless"`)},
			attr: `base_config`, fix: `line 9: runtime.env.OMNI_PD_STAGE_ARGS \(stage 0 \(thinker\)\) is a variable the units set themselves`, code: "env_var_planned"},
		{name: "stage env CUDA_VISIBLE_DEVICES", body: []string{withEnv(`CUDA_VISIBLE_DEVICES: "1"`)},
			attr: `base_config`, fix: `prefill.devices, decode.devices`, code: "env_var_planned"},
		{name: "stage env HF_HOME under /home", body: []string{withEnv(`HF_HOME: /home/vllm/hf`)},
			attr: `base_config`, fix: `runtime.env.HF_HOME: "/home/vllm/hf" is under /home`, code: "systemd_path_protected"},
		{name: "HF_TOKEN in a stage env", body: []string{withEnv(`HF_TOKEN: ` + token)},
			attr: `base_config`, fix: `line 9: stage_args\[0\].runtime.env.HF_TOKEN holds a Hugging Face access token .* systemd.environment_file`, code: "secret_in_state"},
		{name: "engine_args.hf_token", body: []string{`prefill = { engine_args = { hf_token = "` + token + `" } }`},
			attr: `prefill.engine_args.hf_token`, fix: `systemd.environment_file`, code: "secret_in_state"},
		{name: "a token in extra_config", body: []string{`connector = { name = "NixlConnector", extra_config = { backends = ["UCX"], auth_token = "q8Zr2Lx0Vb7Nw4Ke9Tp1" } }`},
			attr: `connector.extra_config.auth_token`, fix: `names a credential and holds a long generated-looking value`, code: "secret_in_state"},
	})
}
