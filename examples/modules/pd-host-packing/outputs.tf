output "pipelines" {
  description = "One entry per pipeline: where its config goes, the config, the command and its ports."
  value = [
    for p in omni_pd_pipeline.this : {
      config_path   = p.config_path
      config_yaml   = p.config_yaml
      serve_command = p.serve_command
      ports         = [for port in p.ports : port.port]
      units         = { for proc in p.launches[0].processes : proc.unit_name => proc.systemd_unit }
      devices       = distinct(flatten([for s in p.stages : s.devices]))
    }
  ]
}

output "ports" {
  description = "Every port the host listens on, for its firewall."
  value       = flatten([for p in omni_pd_pipeline.this : [for port in p.ports : port.port]])
}

output "gpu_count" {
  description = "GPUs the host needs for all the pipelines: the highest GPU index any of them uses, plus one."
  value       = max([for p in omni_pd_pipeline.this : p.gpu_count]...)
}
