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
  description = "Shell commands to run on the machine once it is up: cloud-init done, both deploy configs' SHA-256, every unit and port, each pipeline's readiness and one request through its prefill and decode, and the logs that show each pair found and its KV handed over."
  value = join("\n", concat(
    [
      "# cloud-init is done and the machine holds both pipelines' deploy configs",
      "cloud-init status --wait",
    ],
    [for p in local.pipelines : "echo '${p.config_sha256}  ${p.config_path}' | sha256sum --check"],
    [
      "# every unit, and the ports they listen on",
      "systemctl status --no-pager ${join(" ", local.units)}",
      "ss -ltn '( ${join(" or ", [for port in flatten(local.pipelines[*].ports) : "sport = :${port}"])} )'",
      "# once every stage has loaded the model (minutes): each API lists it, and one request crosses its prefill and decode",
    ],
    flatten([for p in local.pipelines : [p.health.readiness_command, p.health.smoke_command]]),
    ["# each head found its prefill-decode pair at start-up, and each decode, after the smoke request, fetched its prefill's NIXL metadata with no request skipping or failing its KV transfer"],
    flatten([for p in local.pipelines : [
      "journalctl -b --no-pager -u ${p.launches[0].processes[0].unit_name} | grep -F 'PD disaggregation detected: prefill=stage-${p.pd_stage_ids.prefill}, decode=stage-${p.pd_stage_ids.decode}'",
      "journalctl -b --no-pager -u ${p.pd_units.decode} | grep -F 'NIXL compatibility check passed'",
      "! journalctl -b --no-pager -u ${p.pd_units.decode} | grep -F -e 'will not utilize KVTransfer' -e 'NIXL transfer failure'",
    ]]),
  ))
}
