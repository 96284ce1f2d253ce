# One GPU machine running a Qwen3-Omni pipeline with prefill-decode
# disaggregation. The pipeline and the cloud-init document that starts it
# come from the pd-pipeline module; this configuration adds the machine and
# its firewall rules. It needs only the omni provider and Terraform's
# built-in terraform_data, which stands in for the machine and its firewall
# rules: in a real repository they are a cloud provider's instance and
# security-group rules, fed by the same values.

module "pipeline" {
  source = "../../modules/pd-pipeline"

  cluster_name = var.name
  model        = var.model
  gpus         = var.gpus
  api_port     = var.api_port
  config_path  = var.config_path
  vllm_bin_dir = var.vllm_bin_dir

  vllm_omni_version = var.vllm_omni_version

  # A new machine type starts from fresh allocations.
  triggers = {
    instance_type = var.instance_type
  }
}

locals {
  # One firewall rule per port another machine must reach. On one machine
  # that is the API alone, for its clients: the omni master and the NIXL
  # side channels listen on 127.0.0.1, since every stage that dials them
  # runs here.
  firewall_rules = [
    for p in module.pipeline.ports : {
      name     = p.name
      protocol = "tcp"
      port     = p.port
      sources  = var.api_allowed_cidrs
      purpose  = "OpenAI-compatible API, for its clients"
    } if p.name == "api"
  ]
}

# replace_triggered_by names resources of this module only, never a module
# output: this relay holds the pipeline's id, and changes when it does.
resource "terraform_data" "pipeline_id" {
  input = module.pipeline.id
}

# Stands in for the GPU machine (aws_instance, google_compute_instance, ...).
resource "terraform_data" "gpu_vm" {
  input = {
    name          = var.name
    instance_type = var.instance_type
    gpus          = module.pipeline.gpu_count
    user_data     = module.pipeline.user_data
  }

  # cloud-init runs once, at first boot: a new deploy config or unit needs a
  # new machine. A real instance takes the same block.
  lifecycle {
    replace_triggered_by = [terraform_data.pipeline_id]
  }
}

# Stands in for the machine's firewall rules. The keys are known at plan
# time, since the resource computes its ports in the plan.
resource "terraform_data" "firewall_rule" {
  for_each = { for rule in local.firewall_rules : rule.name => rule }

  input = merge(each.value, {
    name   = "${var.name}-${replace(each.key, "_", "-")}"
    target = terraform_data.gpu_vm.id
  })
}
