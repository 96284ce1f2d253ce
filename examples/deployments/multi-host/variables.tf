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

variable "head_ephemeral_ports" {
  description = "The head machine's ephemeral port range, its net.ipv4.ip_local_port_range (sysctl net.ipv4.ip_local_port_range; Linux's default is 32768-60999). The omni master's connections to the headless processes use ports from it, so the other machine must reach it."
  type = object({
    first = number
    last  = number
  })
  default = {
    first = 32768
    last  = 60999
  }

  validation {
    condition     = 1 <= var.head_ephemeral_ports.first && var.head_ephemeral_ports.first <= var.head_ephemeral_ports.last && var.head_ephemeral_ports.last <= 65535
    error_message = "head_ephemeral_ports must be a range of ports, first <= last, within 1-65535."
  }
}
