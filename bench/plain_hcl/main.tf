# What a user would write without the provider: vllm-omni's PD recipe for
# Qwen3-Omni (the seed layout omni_pd_pipeline plans from `model` alone),
# spelled out as an HCL object and rendered with yamlencode(). It is the
# baseline of scripts/bench.sh (variant b); see PERFORMANCE.md.
#
# It does the same work a careful hand-written module would: one shared
# thinker definition split into prefill and decode with merge(), the NIXL
# side-channel ports and the omni master port taken from a port range minus
# reserved ports, and the head stage's serve command (on the default
# release each stage runs as its own process; the head is stage 0).

variable "model" {
  type = string
}

variable "reserved_ports" {
  type    = set(number)
  default = []
}

variable "api_port" {
  type    = number
  default = 8091
}

variable "port_range" {
  type    = object({ first = number, last = number })
  default = { first = 25201, last = 25300 }
}

variable "prefill" {
  type    = object({ tensor_parallel_size = optional(number, 1) })
  default = {}
}

variable "decode" {
  type    = object({ tensor_parallel_size = optional(number, 1) })
  default = {}
}

variable "config_path" {
  type    = string
  default = "/etc/vllm-omni/deploy-config.yaml"
}

locals {
  # The first two free ports of the range become prefill's and decode's
  # NIXL side channels, the third the head's omni master.
  free_ports   = [for p in range(var.port_range.first, var.port_range.last + 1) : p if !contains(var.reserved_ports, p)]
  side_channel = slice(local.free_ports, 0, 2)
  omni_master  = local.free_ports[2]

  # Prefill takes the first GPUs, decode the next ones, and the talker and
  # code2wav share the GPU after them.
  prefill_tp      = var.prefill.tensor_parallel_size
  decode_tp       = var.decode.tensor_parallel_size
  prefill_devices = join(",", range(local.prefill_tp))
  decode_devices  = join(",", range(local.prefill_tp, local.prefill_tp + local.decode_tp))
  shared_device   = tostring(local.prefill_tp + local.decode_tp)

  common_engine_args = {
    model_arch                   = "Qwen3OmniMoeForConditionalGeneration"
    enforce_eager                = true
    trust_remote_code            = true
    distributed_executor_backend = "mp"
    enable_prefix_caching        = false
  }

  thinker_engine_args = merge(local.common_engine_args, {
    model_stage            = "thinker"
    worker_type            = "ar"
    scheduler_cls          = "vllm_omni.core.sched.omni_ar_scheduler.OmniARScheduler"
    gpu_memory_utilization = 0.9
    engine_output_type     = "latent"
    max_num_batched_tokens = 32768
    hf_config_name         = "thinker_config"
  })

  thinker_sampling = {
    temperature        = 0.4
    top_p              = 0.9
    top_k              = 1
    max_tokens         = 2048
    seed               = 42
    detokenize         = true
    repetition_penalty = 1.05
  }

  kv_transfer = {
    for role, rank in { kv_producer = 0, kv_consumer = 1 } : role => {
      kv_connector                  = "NixlConnector"
      kv_role                       = role
      kv_rank                       = rank
      kv_parallel_size              = 2
    }
  }

  serve_command = join(" ", ["vllm", "serve", var.model, "--omni", "--port", tostring(var.api_port), "--stage-configs-path", var.config_path,
  "--stage-id", "0", "--omni-master-address", "127.0.0.1", "--omni-master-port", tostring(local.omni_master)])

  deploy_config = {
    stage_args = [
      {
        stage_id        = 0
        stage_type      = "llm"
        is_prefill_only = true
        runtime = {
          devices = local.prefill_devices
          env     = { VLLM_NIXL_SIDE_CHANNEL_PORT = tostring(local.side_channel[0]) }
        }
        engine_args = merge(local.thinker_engine_args, {
          max_num_seqs         = 16
          tensor_parallel_size = local.prefill_tp
          kv_transfer_config   = local.kv_transfer.kv_producer
        })
        final_output            = false
        is_comprehension        = true
        default_sampling_params = local.thinker_sampling
      },
      {
        stage_id       = 1
        stage_type     = "llm"
        is_decode_only = true
        runtime = {
          devices = local.decode_devices
          env     = { VLLM_NIXL_SIDE_CHANNEL_PORT = tostring(local.side_channel[1]) }
        }
        engine_args = merge(local.thinker_engine_args, {
          max_num_seqs         = 64
          tensor_parallel_size = local.decode_tp
          kv_transfer_config   = local.kv_transfer.kv_consumer
        })
        engine_input_source     = [0]
        final_output            = true
        final_output_type       = "text"
        is_comprehension        = true
        default_sampling_params = local.thinker_sampling
      },
      {
        stage_id   = 2
        stage_type = "llm"
        runtime    = { devices = local.shared_device }
        engine_args = merge(local.common_engine_args, {
          max_num_seqs           = 64
          model_stage            = "talker"
          worker_type            = "ar"
          scheduler_cls          = "vllm_omni.core.sched.omni_ar_scheduler.OmniARScheduler"
          gpu_memory_utilization = 0.6
          engine_output_type     = "latent"
          max_num_batched_tokens = 32768
          hf_config_name         = "talker_config"
        })
        engine_input_source       = [1]
        custom_process_input_func = "vllm_omni.model_executor.stage_input_processors.qwen3_omni.thinker2talker"
        default_sampling_params = {
          temperature        = 0.9
          top_k              = 50
          max_tokens         = 4096
          seed               = 42
          detokenize         = false
          repetition_penalty = 1.05
          stop_token_ids     = [2150]
        }
      },
      {
        stage_id   = 3
        stage_type = "llm"
        runtime    = { devices = local.shared_device }
        engine_args = merge(local.common_engine_args, {
          max_num_seqs           = 1
          model_stage            = "code2wav"
          worker_type            = "generation"
          scheduler_cls          = "vllm_omni.core.sched.omni_generation_scheduler.OmniGenerationScheduler"
          gpu_memory_utilization = 0.1
          async_scheduling       = false
          engine_output_type     = "audio"
          max_num_batched_tokens = 1000000
          hf_config_name         = "thinker_config"
        })
        engine_input_source       = [2]
        custom_process_input_func = "vllm_omni.model_executor.stage_input_processors.qwen3_omni.talker2code2wav"
        final_output              = true
        final_output_type         = "audio"
        default_sampling_params = {
          temperature        = 0.0
          top_p              = 1.0
          top_k              = -1
          max_tokens         = 65536
          seed               = 42
          detokenize         = true
          repetition_penalty = 1.1
        }
      },
    ]
    runtime = {
      enabled = true
      edges   = [for i in range(3) : { from = i, to = i + 1 }]
    }
  }
}

output "config_yaml" {
  value = yamlencode(local.deploy_config)
}

output "serve_command" {
  value = local.serve_command
}
