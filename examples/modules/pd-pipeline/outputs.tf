output "id" {
  description = "Content hash of the deploy config; use it to replace machines when the config changes."
  value       = omni_pd_pipeline.this.id
}

output "user_data" {
  description = "cloud-init document that writes the deploy config and starts vllm serve."
  value       = local.user_data
}

output "ports" {
  description = "Every port the pipeline listens on: name, port and stage_id (null for the API)."
  value       = omni_pd_pipeline.this.ports
}

output "serve_command" {
  description = "The vllm serve command the machine runs."
  value       = omni_pd_pipeline.this.serve_command
}

output "stages" {
  description = "Every stage: stage_id, role, model_stage, devices and its connector settings."
  value       = omni_pd_pipeline.this.stages
}

output "vllm_omni_release" {
  description = "The vllm-omni release the deploy config and the command are written for: install exactly this on the machine image."
  value       = omni_pd_pipeline.this.vllm_omni_release
}

output "gpu_count" {
  description = "GPUs the layout uses."
  value       = omni_pd_pipeline.this.gpu_count
}

output "diagram" {
  description = "The stage graph as a Mermaid flowchart."
  value       = omni_pd_pipeline.this.diagram
}
