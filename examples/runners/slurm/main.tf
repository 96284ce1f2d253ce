# Runs a planned pipeline with Slurm in place of systemd: one batch script
# per host, one job step per process, each built from the process's argv,
# env and ports. Write config_yaml to config_path on a file system every
# node reads, then submit the head's script first.

terraform {
  required_providers {
    omni = {
      source = "omnipd/omni"
    }
  }
}

variable "config_path" {
  description = "Where every node reads the deploy config: a file system the nodes share."
  type        = string
  default     = "/shared/vllm-omni/deploy-config.yaml"
}

variable "slurm_nodes" {
  description = "The Slurm node at each host address of the plan."
  type        = map(string)
  default = {
    "10.20.0.11" = "gpu-a"
    "10.20.0.12" = "gpu-b"
  }
}

resource "omni_pd_pipeline" "this" {
  model       = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
  config_path = var.config_path
  prefill     = { host = "10.20.0.11" }
  decode      = { host = "10.20.0.12" }
}

locals {
  pd = omni_pd_pipeline.this
  # Every headless process registers with the head's omni master, so each
  # script starts its headless steps once the master answers.
  master    = one([for p in local.pd.launches[0].processes[0].ports : p.port if p.name == "omni_master"])
  wait_head = "until (: <'/dev/tcp/${local.pd.health.host}/${local.master}') 2>/dev/null; do sleep 2; done"
  # One job step per process: its environment and its argv, every word
  # quoted for the shell ('...', each ' in it written '\'').
  steps = { for l in local.pd.launches : l.host => [for p in l.processes : {
    head = p.role == "head"
    line = join(" ", concat(
      # Each step is given the job's GPUs, which --overlap lets it share.
      ["srun --overlap --ntasks=1 --gpus=${l.gpu_count} env"],
      [for k, v in p.env : format("'%s'", replace("${k}=${v}", "'", "'\\''"))],
      [for w in p.argv : format("'%s'", replace(w, "'", "'\\''"))],
      ["&"],
    ))
  }] }
}

output "sbatch_scripts" {
  description = "One batch script per host, by host address: submit the head's host's first."
  # The steps start each process's argv as it is. Where the processes
  # import a pipeline registration first (a release that loads only the
  # stages dialect, or with `pipeline` set), argv alone cannot start.
  precondition {
    condition     = local.pd.registration_path == null
    error_message = "This plan's processes import the pipeline registration at registration_path before vllm-omni's CLI runs, which argv alone cannot do. Write registration to registration_path on every host and start each process through the check script's preflight, whose words carry --registration (see processes on omni_pd_pipeline's page), or plan for a release that runs prefill-decode natively."
  }
  value = { for l in local.pd.launches : l.host => join("\n", concat(
    [
      "#!/bin/bash",
      "#SBATCH --job-name=vllm-omni",
      "#SBATCH --nodes=1",
      "#SBATCH --nodelist=${var.slurm_nodes[l.host]}",
      # The plan's ports are the node's: no other job beside this one.
      "#SBATCH --exclusive",
      # The host's GPUs the config names: its device d is the job's d-th
      # GPU, since vllm-omni maps devices through the CUDA_VISIBLE_DEVICES
      # Slurm sets.
      "#SBATCH --gpus=${l.gpu_count}",
    ],
    [for s in local.steps[l.host] : s.line if s.head],
    [local.wait_head],
    [for s in local.steps[l.host] : s.line if !s.head],
    # The job ends when any step does, with its status: no stage fails
    # unseen.
    ["wait -n", "exit $?", ""],
  )) }
}
