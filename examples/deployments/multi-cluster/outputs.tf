output "serve_commands" {
  description = "The vllm serve command of each cluster."
  value       = { for cluster, p in module.pipeline : cluster => p.serve_command }
}

output "ports" {
  description = "Ports of each cluster, by name."
  value = {
    for cluster, p in module.pipeline : cluster => { for port in p.ports : port.name => port.port }
  }
}

output "gpu_count" {
  description = "GPUs each cluster's layout uses."
  value       = { for cluster, p in module.pipeline : cluster => p.gpu_count }
}

output "check_commands" {
  description = "The script that checks each cluster's machine against its plan, by cluster; it exits 1 when any check fails. Run it on that machine as root: terraform output -json check_commands | jq -r '.\"us-east\"' | ssh <machine> sudo bash"
  value       = { for cluster, p in module.pipeline : cluster => p.check_commands_by_host[p.launches[0].host] }
}
