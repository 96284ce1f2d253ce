# A vllm-omni prefill-decode pipeline for one cluster, and the cloud-init
# document that brings a GPU machine up with it.

resource "omni_pd_pipeline" "this" {
  model          = var.model
  gpus           = var.gpus
  config_path    = var.config_path
  reserved_ports = var.reserved_ports

  vllm_omni_version = var.vllm_omni_version

  prefill = {
    tensor_parallel_size = var.tp
  }

  decode = {
    tensor_parallel_size = var.tp
  }

  triggers = merge(var.triggers, {
    cluster = var.cluster_name
  })
}

locals {
  launcher = <<-EOT
    #!/bin/sh
    set -eu
    export PATH="${var.vllm_bin_dir}:$PATH"
    exec ${omni_pd_pipeline.this.serve_command}
  EOT

  unit = <<-EOT
    [Unit]
    Description=vllm-omni ${var.cluster_name}
    Wants=network-online.target
    After=network-online.target

    [Service]
    ExecStart=/usr/local/bin/vllm-omni-serve
    Restart=on-failure
    RestartSec=10

    [Install]
    WantedBy=multi-user.target
  EOT

  user_data = "#cloud-config\n${yamlencode({
    write_files = [
      {
        path        = var.config_path
        permissions = "0644"
        content     = omni_pd_pipeline.this.config_yaml
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
}
