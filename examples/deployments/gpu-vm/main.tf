# One GPU machine running a Qwen3-Omni pipeline with prefill-decode
# disaggregation. It needs only the omni provider and Terraform's built-in
# terraform_data, which stands in for the machine and its firewall rules: in
# a real repository they are a cloud provider's instance and security-group
# rules, fed by the same values.

resource "omni_pd_pipeline" "this" {
  model       = var.model
  gpus        = var.gpus
  config_path = var.config_path

  # A new machine type starts from fresh allocations.
  triggers = {
    instance_type = var.instance_type
  }
}

locals {
  pipeline = omni_pd_pipeline.this

  # The launcher runs the exact command the provider planned. serve_command
  # is shell-quoted, so it is pasted into the script as it is.
  launcher = <<-EOT
    #!/bin/sh
    set -eu
    export PATH="${var.vllm_bin_dir}:$PATH"
    exec ${local.pipeline.serve_command}
  EOT

  unit = <<-EOT
    [Unit]
    Description=vllm-omni ${var.model} (prefill-decode)
    Wants=network-online.target
    After=network-online.target

    [Service]
    ExecStart=/usr/local/bin/vllm-omni-serve
    Restart=on-failure
    RestartSec=10

    [Install]
    WantedBy=multi-user.target
  EOT

  # cloud-init: write the deploy config where the launch command expects it,
  # install the launcher and its unit, then start it.
  user_data = "#cloud-config\n${yamlencode({
    write_files = [
      {
        path        = var.config_path
        permissions = "0644"
        content     = local.pipeline.config_yaml
      },
      {
        path        = "/usr/local/bin/vllm-omni-serve"
        permissions = "0755"
        content     = local.launcher
      },
      {
        path        = "/etc/systemd/system/vllm-omni.service"
        permissions = "0644"
        content     = local.unit
      },
    ]
    runcmd = [
      ["systemctl", "daemon-reload"],
      ["systemctl", "enable", "--now", "vllm-omni.service"],
    ]
  })}"

  # One firewall rule per port the pipeline listens on. The API is open to
  # its clients; the connector ports only to the cluster.
  firewall_rules = [
    for p in local.pipeline.ports : {
      name     = p.name
      protocol = "tcp"
      port     = p.port
      sources  = p.name == "api" ? var.api_allowed_cidrs : [var.cluster_cidr]
      purpose  = p.stage_id == null ? "API" : "stage ${p.stage_id} ${p.name}"
    }
  ]
}

# Stands in for the GPU machine (aws_instance, google_compute_instance, ...).
resource "terraform_data" "gpu_vm" {
  input = {
    name          = var.name
    instance_type = var.instance_type
    gpus          = local.pipeline.gpu_count
    user_data     = local.user_data
  }

  lifecycle {
    # cloud-init runs once, at first boot: a new deploy config needs a new
    # machine.
    replace_triggered_by = [omni_pd_pipeline.this.id]
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
