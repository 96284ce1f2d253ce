variable "name" {
  description = "Name of the pipeline and prefix of its machines."
  type        = string
  default     = "qwen3-omni-pd"
}

variable "model" {
  description = "Model to serve."
  type        = string
  default     = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
}

variable "prefill_ip" {
  description = "Private IP of the machine that runs the prefill stage (and the API)."
  type        = string
  default     = "10.20.0.11"
}

variable "decode_ip" {
  description = "Private IP of the machine that runs decode, the talker and code2wav."
  type        = string
  default     = "10.20.0.12"
}

variable "gpus_per_machine" {
  description = "GPUs on each machine."
  type        = number
  default     = 2
}

variable "vllm_bin_dir" {
  description = "Directory holding the vllm executable on the machine image."
  type        = string
  default     = "/opt/vllm-omni/bin"
}

variable "api_allowed_cidrs" {
  description = "Networks allowed to reach the OpenAI-compatible API."
  type        = list(string)
  default     = ["10.0.0.0/8"]
}

variable "cluster_cidr" {
  description = "Network of the two machines, allowed to reach every other port."
  type        = string
  default     = "10.20.0.0/16"
}
