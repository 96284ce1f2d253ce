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
  description = "Port of each firewall rule for a port another machine must reach, by host and name."
  value       = { for k, r in local.port_rules : k => r.from_port }
}

output "ephemeral_port_rules" {
  description = "The firewall rule for the head's ephemeral ports, keyed \"<head>/ephemeral\" for for_each: host, from_port, to_port and sources."
  value       = local.ephemeral_port_rules
}

output "check_commands" {
  description = "A shell script to run on each machine as root once it is up, by private IP: each prints ok or FAIL for each check and exits 1 when any fails. It checks cloud-init done, the deploy config's SHA-256, that machine's units and ports, on the head the API's readiness, one request through prefill and decode and the log of the pair found, and on decode's machine the log of its KV handoff (run it after the head's)."
  value       = module.pipeline.check_commands_by_host
}
