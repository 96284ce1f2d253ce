output "user_data" {
  description = "cloud-init document for the GPU machine."
  value       = module.pipeline.user_data
}

output "serve_command" {
  description = "The head's vllm command: stage 0 and the API. The machine runs it, and each other stage's, in a container from the stage's unit in user_data."
  value       = module.pipeline.serve_command
}

output "api_port" {
  description = "Port of the OpenAI-compatible API."
  value       = module.pipeline.api_port
}

output "firewall_rules" {
  description = "Port of each firewall rule, by name."
  value       = { for rule in local.firewall_rules : rule.name => rule.port }
}

output "stages" {
  description = "Stage, role and the machine's GPUs, one line each: what each container asks for, and sees as GPU 0 on."
  value = [
    for s in module.pipeline.stages :
    "${s.stage_id} ${s.model_stage} (${s.role}) on GPU ${join(",", s.devices)}"
  ]
}

output "check_commands" {
  description = "A shell script to run on the machine as root once it is up (terraform output -raw check_commands | ssh <machine> sudo bash): it prints ok or FAIL for each check and exits 1 when any fails. It checks cloud-init done, the deploy config's SHA-256, the plan's units and ports, the API's readiness, one request through prefill and decode, and the logs that show the pair found and its KV handed over."
  value       = module.pipeline.check_commands_by_host[module.pipeline.launches[0].host]
}
