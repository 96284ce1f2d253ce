# Packs several PD pipelines onto one host: each gets its own block of GPUs
# (prefill, decode, then one GPU its downstream stages share), its own API
# port and its own slice of connector ports, so no two pipelines collide.

locals {
  gpus_per_pipeline = 2 * var.tp + 1
  layouts = [
    for i in range(var.pipelines) : {
      index    = i
      first    = i * local.gpus_per_pipeline
      api_port = var.first_api_port + i
      ports = {
        first = var.first_port + i * var.ports_per_pipeline
        last  = var.first_port + (i + 1) * var.ports_per_pipeline - 1
      }
    }
  ]
}

resource "omni_pd_pipeline" "this" {
  count = var.pipelines

  model       = var.model
  gpus        = var.gpus
  api_port    = local.layouts[count.index].api_port
  port_range  = local.layouts[count.index].ports
  config_path = "${var.config_dir}/pipeline-${count.index}.yaml"

  # Each pipeline's units have their own names (vllm-omni-0-stage-0.service,
  # ...), so one pipeline's units never overwrite another's on the host.
  systemd = {
    unit_prefix = "vllm-omni-${count.index}"
  }

  prefill = {
    tensor_parallel_size = var.tp
    devices              = range(local.layouts[count.index].first, local.layouts[count.index].first + var.tp)
  }

  decode = {
    tensor_parallel_size = var.tp
    devices              = range(local.layouts[count.index].first + var.tp, local.layouts[count.index].first + 2 * var.tp)
  }

  stage_overrides = {
    for name in var.downstream_stages : name => {
      devices = [local.layouts[count.index].first + 2 * var.tp]
    }
  }

  lifecycle {
    precondition {
      condition     = var.pipelines * local.gpus_per_pipeline <= var.gpus
      error_message = "${var.pipelines} pipelines with tensor_parallel_size ${var.tp} need ${var.pipelines * local.gpus_per_pipeline} GPUs, but the host has ${var.gpus}."
    }
  }
}
