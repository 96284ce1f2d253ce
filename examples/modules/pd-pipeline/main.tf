# A vllm-omni prefill-decode pipeline for one cluster, and one cloud-init
# document per machine that brings it up: the deploy config, the check
# script, the pipeline registration where the plan writes one, the template
# unit with a drop-in per process the machine runs, and the account the
# units run as on a host install (unused with a container). One machine or
# several, it is the same path: launches has one entry per host.

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

  # In a container vllm and its Python are the image's, and the units run
  # the runtime's client as root: the account and the path are the host
  # install's.
  container = var.container

  systemd = {
    user        = var.container == null ? var.service_user : null
    vllm_path   = var.container == null ? "${var.vllm_bin_dir}/vllm" : null
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
      # The account the units run as on a host install (with a container they
      # run the runtime's client as root, and it is unused); "default" keeps
      # the image's own user.
      users = ["default", {
        name   = var.service_user
        system = true
        shell  = "/usr/sbin/nologin"
      }]
      # The config, the check script the units run first, the pipeline
      # registration they import where the plan writes one, the one unit
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
        ],
        omni_pd_pipeline.this.registration == null ? [] : [{
          path        = omni_pd_pipeline.this.registration_path
          permissions = "0644"
          content     = omni_pd_pipeline.this.registration
        }],
        [
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
  # What checks one machine against the plan, keyed like user_data_by_host:
  # one argument list for the check script's `machine`, then one for each
  # of its checks, run in this order. The head's API lists the model once
  # every stage has loaded it (minutes), so the head waits for it before
  # the ports: the side channels listen only once their stage has loaded.
  # On decode's machine the log lines of the KV handoff follow the head's
  # smoke request.
  check_argv_by_host = {
    for i, l in omni_pd_pipeline.this.launches : l.host => concat(
      [concat(["python3", omni_pd_pipeline.this.check_script_path, "machine"], i == 0 ? ["--wait", "600"] : [])],
      [
        ["--cloud-init"],
        ["--config", omni_pd_pipeline.this.config_path, omni_pd_pipeline.this.config_sha256],
      ],
      [for p in l.processes : ["--unit", p.unit_name]],
      i == 0 ? [["--ready", omni_pd_pipeline.this.health.readiness_url, omni_pd_pipeline.this.model]] : [],
      # Every port of the host but an edge connector's: in vllm-omni
      # 0.24.0's stage-based launch the talker and code2wav take their
      # input through /dev/shm and no edge connector is built, so nothing
      # listens there.
      [for p in omni_pd_pipeline.this.ports : ["--listen", tostring(p.port)] if coalesce(p.host, "local") == l.host && !startswith(p.name, "edge_")],
      # launches[0] is the head's machine. Without the pair's line PD is
      # off.
      i == 0 ? [
        ["--smoke", omni_pd_pipeline.this.health.smoke_url, omni_pd_pipeline.this.model, local.head_unit],
        ["--log", local.head_unit, "PD disaggregation detected: prefill=stage-${local.pd_stage.prefill}, decode=stage-${local.pd_stage.decode}"],
      ] : [],
      # Decode fetched prefill's NIXL metadata (once per prefill engine),
      # and no request skipped or failed its KV transfer.
      contains(l.stage_ids, local.pd_stage.decode) ? [
        ["--log", local.stage_unit[local.pd_stage.decode], "NIXL compatibility check passed"],
        ["--no-log", local.stage_unit[local.pd_stage.decode], "will not utilize KVTransfer"],
        ["--no-log", local.stage_unit[local.pd_stage.decode], "NIXL transfer failure"],
      ] : [],
    )
  }

  # What each machine's checks cover, for the script's first line.
  check_what_by_host = {
    for i, l in omni_pd_pipeline.this.launches : l.host => join(", ", concat(
      ["cloud-init", "the deploy config", "its units"],
      i == 0 ? ["the API"] : [],
      ["its ports"],
      i == 0 ? ["one request through prefill and decode", "the head's log of the pair"] : [],
      contains(l.stage_ids, local.pd_stage.decode) ? ["decode's log of the KV handoff"] : [],
    ))
  }

  # One command per machine, so the script's exit status is the checks':
  # a comment, then the check script's machine with one check a line.
  # Words bash would split or expand are single-quoted.
  check_commands_by_host = {
    for host, argv in local.check_argv_by_host : host => join("", [
      "# Checks ${host == "local" ? "this machine" : host} against the plan: ${local.check_what_by_host[host]}. Exits 1 when any check fails. ",
      length(local.check_argv_by_host) == 1
      ? "Run it on the machine as root: terraform output -raw check_commands | ssh <machine> sudo bash\n"
      : "Run it there as root: terraform output -json check_commands | jq -r '.\"${host}\"' | ssh ${host} sudo bash\n",
      join(" \\\n  ", [
        for words in argv : join(" ", [
          for w in words : can(regex("^[-A-Za-z0-9@%+=:,./_]+$", w)) ? w : "'${replace(w, "'", "'\\''")}'"
        ])
      ]),
    ])
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
