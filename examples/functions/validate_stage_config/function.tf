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
  # A prefill-decode config written by hand instead of planned with
  # omni_pd_pipeline, usually read with file("${path.module}/qwen3_omni_pd.yaml").
  pd_config = <<-EOT
    stage_args:
      - stage_id: 0
        is_prefill_only: true
        runtime:
          devices: "0"
          env:
            VLLM_NIXL_SIDE_CHANNEL_PORT: "25201"
        engine_args:
          model_stage: thinker
          tensor_parallel_size: 1
          kv_transfer_config:
            kv_connector: "NixlConnector"
            kv_role: "kv_producer"
            kv_rank: 0
            kv_parallel_size: 2
        final_output: false
      - stage_id: 1
        is_decode_only: true
        runtime:
          devices: "1"
          env:
            VLLM_NIXL_SIDE_CHANNEL_PORT: "25202"
        engine_args:
          model_stage: thinker
          tensor_parallel_size: 1
          kv_transfer_config:
            kv_connector: "NixlConnector"
            kv_role: "kv_consumer"
            kv_rank: 1
            kv_parallel_size: 2
        engine_input_source: [0]
        final_output: true
        final_output_type: text
      - stage_id: 2
        runtime:
          devices: "2"
        engine_args:
          model_stage: talker
          gpu_memory_utilization: 0.6
        engine_input_source: [1]
      - stage_id: 3
        runtime:
          devices: "2"
        engine_args:
          model_stage: code2wav
          gpu_memory_utilization: 0.1
        engine_input_source: [2]
        final_output: true
        final_output_type: audio
    runtime:
      enabled: true
      edges:
        - from: 0
          to: 1
        - from: 1
          to: 2
        - from: 2
          to: 3
  EOT

  # Empty when the config is sound for the vllm-omni release the machines
  # run; one string per problem otherwise. Leave the release out to check
  # the stage graph and the PD pair alone.
  problems = provider::omni::validate_stage_config(local.pd_config, "0.24.0")
  errors   = [for p in local.problems : p if !startswith(p, "warning: ")]
}

# Stops the plan, listing every error, before a broken config reaches a
# machine: mismatched tensor_parallel_size, both sides kv_producer, a stage
# graph not renumbered after the split, GPUs over-subscribed, a key the
# release never reads (sync_process_input_func), a KV connector on which
# every request fails (MooncakeConnector returns no remote_request_id), an
# input processor the release does not have, ...
resource "terraform_data" "deploy_config" {
  input = local.pd_config

  lifecycle {
    precondition {
      condition     = length(local.errors) == 0
      error_message = join("\n", local.errors)
    }
  }
}

# Warnings, such as stages sharing a GPU with little memory headroom, are
# reported without stopping the plan.
check "deploy_config_warnings" {
  assert {
    condition     = length(local.problems) == length(local.errors)
    error_message = join("\n", [for p in local.problems : p if startswith(p, "warning: ")])
  }
}
