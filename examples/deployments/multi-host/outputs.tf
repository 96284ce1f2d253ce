output "user_data" {
  description = "cloud-init document of each machine, by private IP."
  value       = module.pipeline.user_data_by_host
}

output "units" {
  description = "The systemd units each machine runs, by private IP."
  value       = { for l in module.pipeline.launches : l.host => [for p in l.processes : p.unit_name] }
}

output "api_endpoint" {
  description = "The API, on the head machine."
  value       = "http://${var.prefill_ip}:${one([for p in module.pipeline.ports : p.port if p.name == "api"])}"
}

output "firewall_rules" {
  description = "Port of each firewall rule, by host and name."
  value       = { for k, r in local.firewall_rules : k => r.port }
}
