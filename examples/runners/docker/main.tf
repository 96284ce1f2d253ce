# Runs a planned pipeline in containers of the release's image, one
# `docker run` per process, each built from the process's argv, env and
# ports: a script per host that starts the head first and the headless
# stages once the head's omni master answers. Write config_yaml to
# config_path on each host first, as for the units.

terraform {
  required_providers {
    omni = {
      source = "omnipd/omni"
    }
  }
}

variable "config_path" {
  description = "Where each host keeps the deploy config; the containers read it at the same path."
  type        = string
  default     = "/etc/vllm-omni/deploy-config.yaml"
}

variable "hf_cache" {
  description = "The host's model cache, mounted where the image keeps its Hugging Face cache."
  type        = string
  default     = "/var/cache/vllm-omni"
}

resource "omni_pd_pipeline" "this" {
  model       = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
  config_path = var.config_path
  prefill     = { host = "10.20.0.11" }
  decode      = { host = "10.20.0.12" }
}

locals {
  pd = omni_pd_pipeline.this
  # The release's own image: it has no entrypoint, so a process's argv is
  # the container's command.
  image     = "vllm/vllm-omni:v${local.pd.vllm_omni_release}"
  master    = one([for p in local.pd.launches[0].processes[0].ports : p.port if p.name == "omni_master"])
  wait_head = "until (: <'/dev/tcp/${local.pd.health.host}/${local.master}') 2>/dev/null; do sleep 2; done"
  # One container per process, every word quoted for the shell ('...',
  # each ' in it written '\'').
  runs = { for l in local.pd.launches : l.host => [for p in l.processes : {
    head = p.role == "head"
    line = join(" ", concat(
      ["docker run --detach --name", format("'%s'", trimsuffix(replace(p.unit_name, "@", "-"), ".service"))],
      # The stages find each other by address and port, and hand
      # payloads to each other through /dev/shm.
      ["--network host --ipc host"],
      # The host's GPUs 0 to gpu_count - 1, numbered inside as on the host,
      # so the config's devices hold and vllm-omni narrows the process to
      # its own.
      ["--runtime nvidia --gpus", format("'\"device=%s\"'", join(",", range(l.gpu_count)))],
      ["--volume", format("'%s'", replace("${local.pd.config_path}:${local.pd.config_path}:ro", "'", "'\\''"))],
      ["--volume", format("'%s'", replace("${var.hf_cache}:/root/.cache/huggingface", "'", "'\\''"))],
      # The token by name, from the script's environment: never in state.
      ["--env HF_TOKEN"],
      [for k, v in p.env : format("--env '%s'", replace("${k}=${v}", "'", "'\\''"))],
      [format("'%s'", local.image)],
      [for w in p.argv : format("'%s'", replace(w, "'", "'\\''"))],
    ))
  }] }
}

output "docker_scripts" {
  description = "One script per host, by host address: run the head's host's first."
  # The containers run each process's argv as it is. Where the processes
  # import a pipeline registration first (a release that loads only the
  # stages dialect, or with `pipeline` set), argv alone cannot start.
  precondition {
    condition     = local.pd.registration_path == null
    error_message = "This plan's processes import the pipeline registration at registration_path before vllm-omni's CLI runs, which argv alone cannot do. Write registration to registration_path on every host and start each process through the check script's preflight, whose words carry --registration (see processes on omni_pd_pipeline's page), or plan for a release that runs prefill-decode natively."
  }
  value = { for l in local.pd.launches : l.host => join("\n", concat(
    ["#!/bin/bash", "set -eu"],
    [for r in local.runs[l.host] : r.line if r.head],
    [local.wait_head],
    [for r in local.runs[l.host] : r.line if !r.head],
    [""],
  )) }
}
