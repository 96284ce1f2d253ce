variable "model" {
  description = "Model every pipeline serves."
  type        = string
  default     = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
}

variable "pipelines" {
  description = "How many PD pipelines to run on the host. vllm-omni runs one prefill/decode pair per pipeline, so capacity grows by adding pipelines."
  type        = number

  validation {
    condition     = var.pipelines >= 1 && floor(var.pipelines) == var.pipelines
    error_message = "pipelines must be a whole number of at least 1."
  }
}

variable "gpus" {
  description = "GPUs on the host."
  type        = number
}

variable "tp" {
  description = "tensor_parallel_size of prefill and decode in every pipeline."
  type        = number
  default     = 1
}

variable "downstream_stages" {
  description = "model_stage names of the stages after decode; they share one GPU per pipeline."
  type        = list(string)
  default     = ["talker", "code2wav"]
}

variable "first_api_port" {
  description = "API port of the first pipeline; pipeline i listens on first_api_port + i."
  type        = number
  default     = 8091
}

variable "first_port" {
  description = "Start of the first pipeline's connector port range."
  type        = number
  default     = 25201
}

variable "ports_per_pipeline" {
  description = "Size of each pipeline's connector port range; the ranges are laid end to end."
  type        = number
  default     = 10
}

variable "config_dir" {
  description = "Directory on the host that holds one deploy config per pipeline, pipeline-<index>.yaml: an absolute path without a trailing /, outside /etc/systemd/system."
  type        = string
  default     = "/etc/vllm-omni"

  validation {
    condition     = can(regex("^(/[^/]+)+$", var.config_dir)) && !can(regex("/[.][.]?(/|$)", var.config_dir))
    error_message = "config_dir must be an absolute, normalized directory path without a trailing /, such as /etc/vllm-omni: each pipeline's deploy config is config_dir/pipeline-<index>.yaml."
  }
}
