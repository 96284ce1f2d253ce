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
  description = "The head's command: stage 0 and the API server."
  value       = data.omni_pd_pipeline.qwen.serve_command
}

output "processes" {
  description = "Every process the machine runs, one per stage on vllm-omni 0.24.0: its unit, an instance of the template below, and its role."
  value       = { for p in data.omni_pd_pipeline.qwen.launches[0].processes : p.unit_name => p.role }
}

output "systemd_unit" {
  description = "The template every stage's unit is an instance of (each stage's drop-in adds its own options)."
  value       = data.omni_pd_pipeline.qwen.systemd_unit.content
}
