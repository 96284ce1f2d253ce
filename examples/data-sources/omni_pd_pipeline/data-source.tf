terraform {
  required_providers {
    omni = {
      source = "omnipd/omni"
    }
  }
}

# vllm-omni's PD recipe for Qwen3-Omni: prefill on GPU 0, decode on GPU 1,
# talker and code2wav sharing GPU 2, the API on port 8091. The KV connector
# is NixlConnector (side-channel ports 25201 and 25202): with the recipe's
# MooncakeConnector vllm-omni fails every PD request.
data "omni_pd_pipeline" "qwen" {
  model = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
}

output "deploy_config" {
  value = data.omni_pd_pipeline.qwen.config_yaml
}

output "serve_command" {
  value = data.omni_pd_pipeline.qwen.serve_command
}

# A thinker that needs two GPUs, on an 8-GPU host. vllm-omni needs the same
# tensor_parallel_size on both sides of the pair, so both get 2:
# prefill runs on GPUs 0-1, decode on 2-3, talker and code2wav share GPU 4.
# A layout that needs more than `gpus` GPUs is a plan-time error.
data "omni_pd_pipeline" "qwen_tp2" {
  model = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
  gpus  = 8

  prefill = {
    tensor_parallel_size = 2
  }

  decode = {
    tensor_parallel_size = 2
  }
}

# { prefill = [0, 1], decode = [2, 3], talker = [4], code2wav = [4] }
output "tp2_devices" {
  value = {
    for s in data.omni_pd_pipeline.qwen_tp2.stages :
    (s.role == "stage" ? s.model_stage : s.role) => s.devices
  }
}
