variable "cluster_name" {
  description = "Name of the cluster. Renaming it replaces the pipeline, which allocates its ports and GPUs afresh."
  type        = string
}

variable "model" {
  description = "Model to serve, such as Qwen/Qwen3-Omni-30B-A3B-Instruct."
  type        = string
}

variable "gpus" {
  description = "GPUs on each machine of the cluster."
  type        = number
}

variable "tp" {
  description = "tensor_parallel_size of both the prefill and the decode stage."
  type        = number
  default     = 1
}

variable "api_port" {
  description = "Port of the OpenAI-compatible API. Null: the provider's default, 8091."
  type        = number
  default     = null
}

variable "prefill_devices" {
  description = "GPU indices of the prefill stage, as many as tp. Null: the provider places it on the free GPUs."
  type        = list(number)
  default     = null
}

variable "decode_devices" {
  description = "GPU indices of the decode stage, as many as tp. Null: the provider places it on the free GPUs."
  type        = list(number)
  default     = null
}

variable "prefill_max_num_seqs" {
  description = "max_num_seqs of the prefill stage. Null: the provider's default, 16."
  type        = number
  default     = null
}

variable "decode_max_num_seqs" {
  description = "max_num_seqs of the decode stage. Null: the provider's default, 64."
  type        = number
  default     = null
}

variable "reserved_ports" {
  description = "Ports the pipeline must not use on this cluster's machines."
  type        = set(number)
  default     = []
}

variable "vllm_omni_version" {
  description = "The vllm-omni release the machine image carries (\"0.24\", \"0.24.0\"). Null: the newest release that runs the pipeline's PD natively."
  type        = string
  default     = null
}

variable "config_path" {
  description = "Where the deploy config is written on the machine."
  type        = string
  default     = "/etc/vllm-omni/deploy-config.yaml"
}

variable "vllm_bin_dir" {
  description = "Directory holding the vllm executable on the machine image."
  type        = string
  default     = "/opt/vllm-omni/bin"
}

variable "prefill_host" {
  description = "Private IP of the machine that runs the prefill stage. Null, with decode_host null too: one machine runs every stage."
  type        = string
  default     = null
}

variable "decode_host" {
  description = "Private IP of the machine that runs the decode stage and the stages after it. Null: prefill_host's machine."
  type        = string
  default     = null
}

variable "service_user" {
  description = "System account the vllm-omni units run as; cloud-init creates it."
  type        = string
  default     = "vllm-omni"
}

variable "triggers" {
  description = "More values whose change replaces the pipeline, which allocates its ports and GPUs afresh (a machine type, say)."
  type        = map(string)
  default     = {}
}

variable "container" {
  description = "Run each process in its own container of vllm-omni's image, the provider's container block (image, runtime, runtime_path, gpus, pull, mounts, options). Null: the machine image's own vllm, in vllm_bin_dir."
  type = object({
    image        = optional(string)
    runtime      = optional(string)
    runtime_path = optional(string)
    gpus         = optional(string)
    pull         = optional(string)
    mounts = optional(list(object({
      source    = string
      target    = string
      read_only = optional(bool)
    })))
    options = optional(list(string))
  })
  default = null
}
