# Two Qwen3-Omni PD pipelines on one GPU machine, side by side: the
# pd-host-packing module gives each its own GPUs, API port, connector ports,
# deploy config file and unit names, and this configuration writes one
# cloud-init document that installs both. It needs only the omni provider
# and Terraform's built-in terraform_data, which stands in for the machine
# and its firewall rules: in a real repository they are a cloud provider's
# instance and security-group rules, fed by the same values.

module "host" {
  source = "../../modules/pd-host-packing"

  model          = var.model
  pipelines      = 2
  gpus           = var.gpus
  first_api_port = var.first_api_port
}

locals {
  pipelines = module.host.pipelines

  # Every unit of both pipelines: the module names them
  # vllm-omni-0-stage@0.service, ..., vllm-omni-1-stage@0.service, ..., each
  # pipeline's an instance of its own template, so none overwrites another.
  units      = flatten([for p in local.pipelines : p.units])
  unit_files = merge([for p in local.pipelines : p.unit_files]...)

  # One cloud-init document for the machine: both deploy configs, the check
  # script (one file, the same for every pipeline), every unit file, and the
  # account the units run as (the provider's default user).
  user_data = "#cloud-config\n${yamlencode({
    users = ["default", {
      name   = "vllm-omni"
      system = true
      shell  = "/usr/sbin/nologin"
    }]
    write_files = concat(
      [for p in local.pipelines : {
        path        = p.config_path
        permissions = "0644"
        content     = p.config_yaml
      }],
      [for path in distinct(local.pipelines[*].check_script_path) : {
        path        = path
        permissions = "0644"
        content     = provider::omni::check_script()
      }],
      [for path, content in local.unit_files : {
        path        = path
        permissions = "0644"
        content     = content
      }],
    )
    # --no-block: queue the start jobs and go on; a headless unit's main
    # process, not its start, waits for its head.
    runcmd = concat(
      [["systemctl", "daemon-reload"]],
      [for name in local.units : ["systemctl", "enable", "--now", "--no-block", name]],
    )
  })}"

  # Only the APIs face the network. Every other port is between processes
  # of this one machine, which no security group sees.
  firewall_rules = {
    for i, p in local.pipelines : "pipeline-${i}/api" => {
      protocol = "tcp"
      port     = p.api_port
      sources  = var.api_allowed_cidrs
      purpose  = "pipeline ${i}'s OpenAI-compatible API, for its clients"
    }
  }
}

locals {
  # What checks the machine, for check_commands: the check script's
  # machine, then each check, in the order it runs them. The APIs list the
  # model once every stage has loaded it, and the side channels listen
  # only then, so the ports come after the APIs; each decode logs its KV
  # handoff once its pipeline's smoke request has run.
  check_argv = concat(
    [["python3", local.pipelines[0].check_script_path, "machine", "--wait", "600"]],
    [["--cloud-init"]],
    [for p in local.pipelines : ["--config", p.config_path, p.config_sha256]],
    [for name in local.units : ["--unit", name]],
    [for p in local.pipelines : ["--ready", p.health.readiness_url, var.model]],
    [for port in flatten(local.pipelines[*].ports) : ["--listen", tostring(port)]],
    [for p in local.pipelines : ["--smoke", p.health.smoke_url, var.model, p.launches[0].processes[0].unit_name]],
    concat([for p in local.pipelines : [
      ["--log", p.launches[0].processes[0].unit_name, "PD disaggregation detected: prefill=stage-${p.pd_stage_ids.prefill}, decode=stage-${p.pd_stage_ids.decode}"],
      ["--log", p.pd_units.decode, "NIXL compatibility check passed"],
      ["--no-log", p.pd_units.decode, "will not utilize KVTransfer"],
      ["--no-log", p.pd_units.decode, "NIXL transfer failure"],
    ]]...),
  )
}

# replace_triggered_by names resources of this module only, never a module
# output: this relay holds both pipelines' ids, and changes when either does.
resource "terraform_data" "pipeline_ids" {
  input = module.host.ids
}

# Stands in for the GPU machine (aws_instance, google_compute_instance, ...).
resource "terraform_data" "gpu_vm" {
  input = {
    name          = var.name
    instance_type = var.instance_type
    gpus          = module.host.gpu_count
    user_data     = local.user_data
  }

  # cloud-init runs once, at first boot: a new deploy config or unit of
  # either pipeline needs a new machine. A real instance takes the same
  # block.
  lifecycle {
    replace_triggered_by = [terraform_data.pipeline_ids]
  }
}

# Stands in for the machine's firewall rules.
resource "terraform_data" "firewall_rule" {
  for_each = local.firewall_rules

  input = merge(each.value, {
    name   = "${var.name}-${replace(each.key, "/", "-")}"
    target = terraform_data.gpu_vm.id
  })
}
