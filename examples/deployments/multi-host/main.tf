# A Qwen3-Omni pipeline across two GPU machines: prefill on one, decode, the
# talker and code2wav on the other. The pd-pipeline module renders one
# cloud-init document per machine, each with one systemd unit per process
# the machine runs; the head (the prefill machine) serves the API and the
# omni master, the other machine's processes run headless and wait for it.
#
# terraform_data stands in for the machines and their firewall rules: in a
# real repository they are a cloud provider's instances (with these private
# IPs) and security-group rules, fed by the same values.

module "pipeline" {
  source = "../../modules/pd-pipeline"

  cluster_name = var.name
  model        = var.model
  gpus         = var.gpus_per_machine
  vllm_bin_dir = var.vllm_bin_dir

  prefill_host = var.prefill_ip
  decode_host  = var.decode_ip
}

# replace_triggered_by names resources of this module only, never a module
# output: this relay holds the pipeline's id, and changes when it does.
resource "terraform_data" "pipeline_id" {
  input = module.pipeline.id
}

# One machine per host the pipeline runs on, keyed by its address. The keys
# are known at plan time: the resource computes launches in the plan.
resource "terraform_data" "gpu_machine" {
  for_each = module.pipeline.user_data_by_host

  input = {
    name       = "${var.name}-${replace(each.key, ".", "-")}"
    private_ip = each.key
    user_data  = each.value
  }

  # cloud-init runs once, at first boot: a new deploy config or unit needs a
  # new machine. A real instance takes the same block.
  lifecycle {
    replace_triggered_by = [terraform_data.pipeline_id]
  }
}

locals {
  head = module.pipeline.launches[0].host

  # The ports another machine must reach, each with what it is for: the
  # API for its clients; on the head's machine, the omni master and
  # prefill's NIXL side channel, which the headless stages and decode dial.
  # Nothing dials decode's side channel (decode reads from prefill), and
  # nothing listens on an edge's connector port (edge_<from>_<to>): in
  # vllm-omni 0.24.0's stage-based launch the talker and code2wav take
  # their input through /dev/shm on their own machine, whatever the edge
  # names.
  reached = {
    api                  = "OpenAI-compatible API, for its clients"
    omni_master          = "omni master, for the headless stages"
    prefill_side_channel = "prefill's NIXL side channel, for decode"
  }

  port_rules = {
    for p in module.pipeline.ports : "${p.host}/${p.name}" => {
      host      = p.host
      from_port = p.port
      to_port   = p.port
      sources   = p.name == "api" ? var.api_allowed_cidrs : [var.cluster_cidr]
      purpose   = local.reached[p.name]
    } if contains(keys(local.reached), p.name) && (p.name == "api" || p.host == local.head)
  }

  # The head's omni master also talks to the headless processes over ports
  # the OS picks from its ephemeral range, so the other machine must reach
  # that whole range on the head.
  ephemeral_port_rules = {
    "${local.head}/ephemeral" = {
      host      = local.head
      from_port = var.head_ephemeral_ports.first
      to_port   = var.head_ephemeral_ports.last
      sources   = [var.cluster_cidr]
      purpose   = "the head's per-stage sockets, for the headless stages"
    }
  }
}

# Stands in for the machines' firewall rules (aws_vpc_security_group_ingress_rule,
# google_compute_firewall, ...): one per port, and the head's ephemeral range.
resource "terraform_data" "firewall_rule" {
  for_each = merge(local.port_rules, local.ephemeral_port_rules)

  input = merge(each.value, {
    target = terraform_data.gpu_machine[each.value.host].id
  })
}
