output "id" {
  description = "Content hash of what the machines run (the deploy config, the check script, the registration and the units); use it to replace machines when it changes."
  value       = omni_pd_pipeline.this.id
}

output "config_sha256" {
  description = "SHA-256 of the deploy config; each process's preflight checks the file at config_path against it."
  value       = omni_pd_pipeline.this.config_sha256
}

output "config_path" {
  description = "Where the deploy config is written on each machine."
  value       = omni_pd_pipeline.this.config_path
}

output "api_port" {
  description = "Port of the OpenAI-compatible API, on the head machine."
  value       = omni_pd_pipeline.this.api_port
}

output "health" {
  description = "How to tell the head serves the model: liveness, readiness and smoke URLs and commands."
  value       = omni_pd_pipeline.this.health
}

output "user_data" {
  description = "cloud-init document of the first (head) machine: on one machine, the only one."
  value       = local.user_data_by_host[omni_pd_pipeline.this.launches[0].host]
}

output "user_data_by_host" {
  description = "cloud-init document of each machine, by host: its deploy config, the check script, the pipeline registration where the plan writes one, the template unit and a drop-in per process, and the units started."
  value       = local.user_data_by_host
}

output "launches" {
  description = "What each host runs, with its processes and ports."
  value       = omni_pd_pipeline.this.launches
}

output "ports" {
  description = "Every port the pipeline listens on: name, port, stage_id (null for the API) and host (null on one machine)."
  value       = omni_pd_pipeline.this.ports
}

output "serve_command" {
  description = "The head's vllm serve command (stage 0 and the API). Where each stage is its own process it starts only the head: the machines run every process of launches, each by its unit."
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

output "check_commands_by_host" {
  description = "A shell script that checks each machine against the plan, by host (as user_data_by_host): one command, the check script's machine, that prints ok or FAIL for each check and exits 1 when any fails. It checks cloud-init done, the deploy config's SHA-256, the host's units and listening ports, on the head the readiness (waiting up to 600 s) and smoke checks and the log line of the PD pair found, and on decode's host the log lines of the KV handoff."
  value       = local.check_commands_by_host
}
