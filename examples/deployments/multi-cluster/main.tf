# The same pipeline module for two clusters. Each cluster has its own GPU
# count, tensor-parallel size, and ports that other services on its machines
# already use.

locals {
  model = "Qwen/Qwen3-Omni-30B-A3B-Instruct"

  # Networks allowed to reach the API of every cluster.
  api_clients = ["10.0.0.0/8"]

  clusters = {
    "us-east" = {
      gpus = 4
      tp   = 1
      # A second pipeline's side-channel ports on the same machines.
      reserved_ports = [25201, 25202]
    }
    "eu-west" = {
      gpus = 8
      tp   = 2
      # A metrics exporter listens on 25201.
      reserved_ports = [25201]
    }
  }
}

module "pipeline" {
  source   = "../../modules/pd-pipeline"
  for_each = local.clusters

  cluster_name   = each.key
  model          = local.model
  gpus           = each.value.gpus
  tp             = each.value.tp
  reserved_ports = each.value.reserved_ports
}

# replace_triggered_by names resources of this module only, never a module
# output: this relay holds each cluster's pipeline id, and changes when it
# does.
resource "terraform_data" "pipeline_id" {
  for_each = module.pipeline

  input = each.value.id
}

# Stands in for one GPU machine per cluster. A changed deploy config
# changes the pipeline's id, which replaces that cluster's machine only.
resource "terraform_data" "gpu_vm" {
  for_each = module.pipeline

  input = {
    cluster   = each.key
    gpus      = local.clusters[each.key].gpus
    user_data = each.value.user_data
  }

  lifecycle {
    replace_triggered_by = [terraform_data.pipeline_id[each.key]]
  }
}

# One firewall rule per port another machine must reach, keyed
# "cluster/port name": each cluster is one machine, so that is its API
# alone; the omni master and the NIXL side channels listen on 127.0.0.1.
locals {
  firewall_rules = merge([
    for cluster, p in module.pipeline : {
      for port in p.ports : "${cluster}/${port.name}" => {
        cluster = cluster
        port    = port.port
        sources = local.api_clients
        purpose = "OpenAI-compatible API, for its clients"
      } if port.name == "api"
    }
  ]...)
}

resource "terraform_data" "firewall_rule" {
  for_each = local.firewall_rules

  input = merge(each.value, {
    target = terraform_data.gpu_vm[each.value.cluster].id
  })
}
