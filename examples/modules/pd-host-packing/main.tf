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

  # The files and units of each pipeline on the host. The provider judges
  # one pipeline's paths against each other (a config_path on the check
  # script, the environment file or a unit is refused) but cannot see the
  # other pipelines: each pipeline's deploy config and units must be its own
  # here, or the last written would replace the others'. The check script
  # (the same text for every pipeline), the environment file and the model
  # cache are shared on purpose.
  config_paths  = [for i in range(var.pipelines) : "${var.config_dir}/pipeline-${i}.yaml"]
  unit_prefixes = [for i in range(var.pipelines) : "vllm-omni-${i}"]
}

resource "omni_pd_pipeline" "this" {
  count = var.pipelines

  model       = var.model
  gpus        = var.gpus
  api_port    = local.layouts[count.index].api_port
  port_range  = local.layouts[count.index].ports
  config_path = local.config_paths[count.index]

  # Each pipeline's units have their own names (vllm-omni-0-stage@0.service,
  # ...), so one pipeline's units never overwrite another's on the host.
  systemd = {
    unit_prefix = local.unit_prefixes[count.index]
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
    precondition {
      condition     = length(distinct(local.config_paths)) == var.pipelines && length(distinct(local.unit_prefixes)) == var.pipelines
      error_message = "Each pipeline on the host needs a deploy config and unit names of its own, but the module gives ${var.pipelines} pipelines the config paths ${join(", ", local.config_paths)} and the unit prefixes ${join(", ", local.unit_prefixes)}: make each one distinct, such as with the pipeline's index."
    }
  }
}
