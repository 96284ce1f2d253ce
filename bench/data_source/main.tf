# One pipeline planned by the provider: the module a user writes around
# omni_pd_pipeline to deploy one cluster. Variant a of scripts/bench.sh with
# BENCH_LAYOUT=module (the default); see PERFORMANCE.md.

terraform {
  required_providers {
    omni = { source = "omnipd/omni" }
  }
}

variable "model" {
  type = string
}

variable "reserved_ports" {
  type    = set(number)
  default = []
}

data "omni_pd_pipeline" "this" {
  model          = var.model
  reserved_ports = var.reserved_ports
}

output "config_yaml" {
  value = data.omni_pd_pipeline.this.config_yaml
}

output "serve_command" {
  value = data.omni_pd_pipeline.this.serve_command
}
