# Computes a prefill/decode disaggregated vllm-omni deployment for one model.
# Run it with `make demo`, which builds the provider and points Terraform at
# the local build; no registry or network access is needed.

terraform {
  required_providers {
    omni = {
      source = "omnipd/omni"
    }
  }
}

data "omni_pd_pipeline" "qwen" {
  model = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
}

output "deploy_config" {
  description = "The rendered deploy config (YAML)."
  value       = data.omni_pd_pipeline.qwen.config_yaml
}

output "launch" {
  description = "The command that serves the model with this config."
  value       = data.omni_pd_pipeline.qwen.serve_command
}
