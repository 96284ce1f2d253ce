output "user_data" {
  description = "cloud-init document for the machine: both pipelines' deploy configs and units."
  value       = local.user_data
}

output "units" {
  description = "The systemd units of each pipeline, in pipeline order."
  value       = [for p in local.pipelines : p.units]
}

output "serve_commands" {
  description = "Each pipeline's head command (its stage 0 and its API), in pipeline order."
  value       = [for p in local.pipelines : p.serve_command]
}

output "api_ports" {
  description = "Each pipeline's API port, in pipeline order."
  value       = [for p in local.pipelines : p.api_port]
}

output "firewall_rules" {
  description = "Port of each firewall rule, by name."
  value       = { for k, r in local.firewall_rules : k => r.port }
}

output "gpu_count" {
  description = "GPUs the machine needs for both pipelines."
  value       = module.host.gpu_count
}

output "check_commands" {
  description = "A shell script to run on the machine as root once it is up (terraform output -raw check_commands | ssh <machine> sudo bash): it prints ok or FAIL for each check and exits 1 when any fails. It checks cloud-init done, both deploy configs' SHA-256, every unit and port, each pipeline's readiness and one request through its prefill and decode, and the logs that show each pair found and its KV handed over."
  value = join("", [
    "# Checks this machine against both pipelines' plans: cloud-init, the deploy configs, the units, each API, the ports, one request through each prefill and decode, each head's log of its pair and each decode's log of the KV handoff. Exits 1 when any check fails. Run it on the machine as root: terraform output -raw check_commands | ssh <machine> sudo bash\n",
    join(" \\\n  ", [
      for words in local.check_argv : join(" ", [
        for w in words : can(regex("^[-A-Za-z0-9@%+=:,./_]+$", w)) ? w : "'${replace(w, "'", "'\\''")}'"
      ])
    ]),
  ])
}
