terraform {
  # Provider functions need Terraform 1.8 or later.
  required_version = ">= 1.8.0"

  required_providers {
    omni = {
      source = "omnipd/omni"
    }
  }
}

locals {
  # A config kept in the repository, usually read with
  # file("${path.module}/qwen3_omni.yaml"). Either dialect is accepted.
  stage_config = <<-EOT
    stage_args:
      - stage_id: 0
        runtime:
          devices: "0"
        engine_args:
          model_stage: thinker
          gpu_memory_utilization: 0.9
        final_output: true
        final_output_type: text
      - stage_id: 1
        runtime:
          devices: "1"
        engine_args:
          model_stage: talker
          gpu_memory_utilization: 0.6
        engine_input_source: [0]
      - stage_id: 2
        runtime:
          devices: "1"
        engine_args:
          model_stage: code2wav
          gpu_memory_utilization: 0.1
        engine_input_source: [1]
        final_output: true
        final_output_type: audio
  EOT

  parsed = provider::omni::parse_stage_config(local.stage_config)
}

# "stage_args"
output "format" {
  value = local.parsed.format
}

# { "0" = "thinker", "1" = "talker", "2" = "code2wav" }
output "stage_names" {
  value = { for s in local.parsed.stages : s.stage_id => s.model_stage }
}

# 2: the talker and code2wav share GPU 1.
output "gpus_used" {
  value = length(distinct(flatten(local.parsed.stages[*].devices)))
}

# ["0 -> 1", "1 -> 2"]
output "edges" {
  value = [for e in local.parsed.edges : "${e.from} -> ${e.to}"]
}

# The stages whose output the API returns: [0, 2]
output "final_stages" {
  value = [for s in local.parsed.stages : s.stage_id if s.final_output]
}
