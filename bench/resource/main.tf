# One pipeline planned by the provider's resource, which keeps its ports and
# devices across later plans: the module a user writes around the
# omni_pd_pipeline resource to deploy one cluster. Variant r of
# scripts/bench.sh; see PERFORMANCE.md.

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

resource "omni_pd_pipeline" "this" {
  model          = var.model
  reserved_ports = var.reserved_ports
}

output "config_yaml" {
  value = omni_pd_pipeline.this.config_yaml
}

output "serve_command" {
  value = omni_pd_pipeline.this.serve_command
}
