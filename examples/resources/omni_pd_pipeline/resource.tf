terraform {
  required_providers {
    omni = {
      source = "omnipd/omni"
    }
  }
}

resource "omni_pd_pipeline" "qwen" {
  model       = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
  gpus        = 4
  config_path = "/etc/vllm-omni/qwen3-omni-pd.yaml"

  # Changing a trigger replaces the resource, which allocates ports and GPUs
  # afresh. Every other change updates it in place and keeps the ports and
  # GPUs it chose before, as long as they are still valid.
  triggers = {
    machine_image = "gpu-base-2026-11"
  }

  prefill = {
    max_num_seqs           = 16
    gpu_memory_utilization = 0.85
  }

  decode = {
    max_num_seqs = 128
    engine_args = {
      max_num_batched_tokens = 16384
    }
  }

  # Stages that are not split, keyed by model_stage.
  stage_overrides = {
    talker = {
      max_num_seqs = 32
    }
  }

  # Another pipeline on the same hosts already listens on these ports, so
  # the NIXL side-channel ports come from the rest of port_range (25203 and
  # 25204), and the omni master after them.
  reserved_ports = [25201, 25202]
}

output "ports" {
  value = { for p in omni_pd_pipeline.qwen.ports : p.name => p.port }
}

output "serve_command" {
  value = omni_pd_pipeline.qwen.serve_command
}
