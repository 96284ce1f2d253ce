variable "name" {
  description = "Name of the GPU machine and prefix of its firewall rules."
  type        = string
  default     = "qwen3-omni-pd"
}

variable "model" {
  description = "Model to serve."
  type        = string
  default     = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
}

variable "instance_type" {
  description = "Machine type; it must have at least var.gpus GPUs."
  type        = string
  default     = "gpu-4x-80gb"
}

variable "gpus" {
  description = "GPUs on the machine. The plan fails if the layout needs more."
  type        = number
  default     = 4
}

variable "api_port" {
  description = "Port of the OpenAI-compatible API."
  type        = number
  default     = 8091
}

variable "image" {
  description = "vllm-omni's image, pinned by tag or digest (registry.example/vllm/vllm-omni@sha256:...). Null: the official image of the release the plan is for."
  type        = string
  default     = null
}

variable "container_runtime" {
  description = "The machine image's container runtime: docker (with NVIDIA's runtime) or podman (with a CDI spec of the GPUs)."
  type        = string
  default     = "docker"
}

variable "api_allowed_cidrs" {
  description = "Networks allowed to reach the OpenAI-compatible API."
  type        = list(string)
  default     = ["10.0.0.0/8"]
}
