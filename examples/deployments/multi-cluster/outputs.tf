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
