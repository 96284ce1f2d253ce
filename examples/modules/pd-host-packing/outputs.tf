output "pipelines" {
  description = "One entry per pipeline: its id (for replace_triggered_by, through a terraform_data), where its config goes, the config and its SHA-256, the head's command, its API port and health checks, its ports, its launches, its units and their files (path => content), where its check script goes, its GPUs, and its prefill and decode stages' ids and units (pd_stage_ids, pd_units)."
  value = [
    for p in omni_pd_pipeline.this : {
      id            = p.id
      config_path   = p.config_path
      config_yaml   = p.config_yaml
      config_sha256 = p.config_sha256
      serve_command = p.serve_command
      api_port      = p.api_port
      health        = p.health
      ports         = [for port in p.ports : port.port]
      launches      = p.launches
      # The units to enable, and the files to write for them, path =>
      # content: the one unit file, and each stage's drop-in.
      units = [for proc in p.launches[0].processes : proc.unit_name]
      unit_files = merge({ (p.systemd_unit.path) = p.systemd_unit.content },
      { for proc in p.launches[0].processes : proc.systemd_dropin.path => proc.systemd_dropin.content if proc.systemd_dropin != null })
      check_script_path = p.check_script_path
      devices           = distinct(flatten([for s in p.stages : s.devices]))
      # The prefill and decode stages' ids, and the unit whose log holds
      # each: the stage's own process, or the one that runs every stage.
      pd_stage_ids = { for s in p.stages : s.role => s.stage_id if s.role != "stage" }
      pd_units = {
        for s in p.stages : s.role => one([
          for proc in p.launches[0].processes : proc.unit_name if proc.stage_id == null || proc.stage_id == s.stage_id
        ]) if s.role != "stage"
      }
    }
  ]
}

output "ids" {
  description = "Every pipeline's id, in order: a terraform_data holding it lets the host's machine be replaced when any pipeline's config or units change."
  value       = omni_pd_pipeline.this[*].id
}

output "ports" {
  description = "Every port the host listens on, for its firewall."
  value       = flatten([for p in omni_pd_pipeline.this : [for port in p.ports : port.port]])
}

output "gpu_count" {
  description = "GPUs the host needs for all the pipelines: the highest GPU index any of them uses, plus one."
  value       = max([for p in omni_pd_pipeline.this : p.gpu_count]...)
}
