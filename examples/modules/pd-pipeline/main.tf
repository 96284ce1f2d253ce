# A vllm-omni prefill-decode pipeline for one cluster, and one cloud-init
# document per machine that brings it up: the deploy config, one systemd
# unit per process the machine runs, and the account they run as. One
# machine or several, it is the same path: launches has one entry per host.

resource "omni_pd_pipeline" "this" {
  model          = var.model
  gpus           = var.gpus
  api_port       = var.api_port
  config_path    = var.config_path
  reserved_ports = var.reserved_ports

  vllm_omni_version = var.vllm_omni_version

  # A null setting is as good as unset: the provider plans it.
  prefill = {
    tensor_parallel_size = var.tp
    host                 = var.prefill_host
    devices              = var.prefill_devices
    max_num_seqs         = var.prefill_max_num_seqs
  }

  decode = {
    tensor_parallel_size = var.tp
    host                 = var.decode_host
    devices              = var.decode_devices
    max_num_seqs         = var.decode_max_num_seqs
  }

  systemd = {
    user        = var.service_user
    vllm_path   = "${var.vllm_bin_dir}/vllm"
    unit_prefix = "vllm-omni-${var.cluster_name}"
  }

  triggers = merge(var.triggers, {
    cluster = var.cluster_name
  })
}

locals {
  # One cloud-init document per host, keyed by launches[*].host: the
  # machine's address, or "local" when the pipeline names no host.
  user_data_by_host = {
    for l in omni_pd_pipeline.this.launches : l.host => "#cloud-config\n${yamlencode({
      # The account the units run as; "default" keeps the image's own user.
      users = ["default", {
        name   = var.service_user
        system = true
        shell  = "/usr/sbin/nologin"
      }]
      # The config, the check script the units run first, the one unit
      # file, and each of this host's stages' drop-ins.
      write_files = concat(
        [
          {
            path        = var.config_path
            permissions = "0644"
            content     = omni_pd_pipeline.this.config_yaml
          },
          {
            path        = omni_pd_pipeline.this.check_script_path
            permissions = "0644"
            content     = provider::omni::check_script()
          },
          {
            path        = omni_pd_pipeline.this.systemd_unit.path
            permissions = "0644"
            content     = omni_pd_pipeline.this.systemd_unit.content
          },
        ],
        [for p in l.processes : {
          path        = p.systemd_dropin.path
          permissions = "0644"
          content     = p.systemd_dropin.content
        } if p.systemd_dropin != null],
      )
      # --no-block: queue the start jobs and go on; a headless unit's main
      # process, not its start, waits for the head, which may boot later.
      runcmd = concat(
        [["systemctl", "daemon-reload"]],
        [for p in l.processes : ["systemctl", "enable", "--now", "--no-block", p.unit_name]],
      )
    })}"
  }
}

locals {
  # Commands that check one machine against the plan, keyed like
  # user_data_by_host: its units, its ports and, on the head, the API and
  # one request through the PD pair. Run them on that machine.
  check_commands_by_host = {
    for i, l in omni_pd_pipeline.this.launches : l.host => join("\n", concat(
      [
        "# cloud-init is done and the machine holds this plan's deploy config",
        "cloud-init status --wait",
        "echo '${omni_pd_pipeline.this.config_sha256}  ${var.config_path}' | sha256sum --check",
        "# this machine's units, and the ports they listen on",
        "systemctl status --no-pager ${join(" ", [for p in l.processes : p.unit_name])}",
        "ss -ltn '( ${join(" or ", [for port in l.ports : "sport = :${port}"])} )'",
      ],
      # launches[0] is the head's machine.
      i == 0 ? [
        "# once every stage has loaded the model (minutes): the API lists it, and one request crosses prefill and decode",
        omni_pd_pipeline.this.health.readiness_command,
        omni_pd_pipeline.this.health.smoke_command,
        "# the head found the prefill-decode pair at start-up: without this line PD is off",
        "journalctl -b --no-pager -u ${local.head_unit} | grep -F 'PD disaggregation detected: prefill=stage-${local.pd_stage.prefill}, decode=stage-${local.pd_stage.decode}'",
      ] : [],
      contains(l.stage_ids, local.pd_stage.decode) ? [
        "# after the smoke request: decode fetched prefill's NIXL metadata (once per prefill engine), and no request skipped or failed its KV transfer",
        "journalctl -b --no-pager -u ${local.stage_unit[local.pd_stage.decode]} | grep -F 'NIXL compatibility check passed'",
        "! journalctl -b --no-pager -u ${local.stage_unit[local.pd_stage.decode]} | grep -F -e 'will not utilize KVTransfer' -e 'NIXL transfer failure'",
      ] : [],
    ))
  }

  # The prefill and decode stages' ids, by role.
  pd_stage = {
    for s in omni_pd_pipeline.this.stages : s.role => s.stage_id if s.role != "stage"
  }

  # The unit whose log holds a stage's: the stage's own process, or the
  # process that runs every stage of its host.
  stage_unit = merge([
    for l in omni_pd_pipeline.this.launches : {
      for id in l.stage_ids : id => one([
        for p in l.processes : p.unit_name if p.stage_id == null || p.stage_id == id
      ])
    }
  ]...)

  head_unit = omni_pd_pipeline.this.launches[0].processes[0].unit_name
}
