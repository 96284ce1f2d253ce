variable "name" {
  description = "Name of the GPU machine and prefix of its firewall rules."
  type        = string
  default     = "qwen3-omni-pd-x2"
}

variable "model" {
  description = "Model both pipelines serve."
  type        = string
  default     = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
}

variable "instance_type" {
  description = "Machine type; it must have at least var.gpus GPUs."
  type        = string
  default     = "gpu-8x-80gb"
}

variable "gpus" {
  description = "GPUs on the machine. Each pipeline takes three (prefill, decode, and one the talker and code2wav share), so two need six; the plan fails if they do not fit."
  type        = number
  default     = 8
}

variable "first_api_port" {
  description = "API port of the first pipeline; the second listens on the next port."
  type        = number
  default     = 8091
}

variable "api_allowed_cidrs" {
  description = "Networks allowed to reach the two APIs."
  type        = list(string)
  default     = ["10.0.0.0/8"]
}
