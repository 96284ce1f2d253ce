terraform {
  # Provider functions need Terraform 1.8 or later.
  required_version = ">= 1.8.0"

  required_providers {
    omni = {
      source = "omnipd/omni"
    }
  }
}

data "omni_pd_pipeline" "qwen" {
  model = "Qwen/Qwen3-Omni-30B-A3B-Instruct"
}

# The files a host of the pipeline needs besides its drop-ins, path =>
# content, for cloud-init's write_files: the check script is one of them,
# and the same for every pipeline.
output "files" {
  value = {
    (data.omni_pd_pipeline.qwen.config_path)       = data.omni_pd_pipeline.qwen.config_yaml
    (data.omni_pd_pipeline.qwen.check_script_path) = provider::omni::check_script()
    (data.omni_pd_pipeline.qwen.systemd_unit.path) = data.omni_pd_pipeline.qwen.systemd_unit.content
  }
}
