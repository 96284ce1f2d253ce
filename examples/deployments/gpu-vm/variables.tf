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

variable "vllm_omni_version" {
  description = "The vllm-omni release the machine image carries. Null: the newest release that runs the pipeline's PD natively."
  type        = string
  default     = null
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

variable "config_path" {
  description = "Where the deploy config is written on the machine."
  type        = string
  default     = "/etc/vllm-omni/deploy-config.yaml"
}

variable "vllm_bin_dir" {
  description = "Directory holding the vllm executable on the machine image (a virtualenv's bin)."
  type        = string
  default     = "/opt/vllm-omni/bin"
}

variable "api_allowed_cidrs" {
  description = "Networks allowed to reach the OpenAI-compatible API."
  type        = list(string)
  default     = ["10.0.0.0/8"]
}
