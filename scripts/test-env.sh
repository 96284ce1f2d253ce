#!/usr/bin/env bash
# Sets up the environment the tests and doc generation need, then runs the
# given command in it:   scripts/test-env.sh go test ./...
# It can also be sourced (`. scripts/test-env.sh`) to export the same
# variables into the current shell.
#
# - TF_ACC_TERRAFORM_PATH: an absolute path to a terraform >= 1.8, so
#   terraform-plugin-testing never tries to download one.
# - TF_CLI_CONFIG_FILE: an empty, generated file. A user's config may be
#   missing (Terraform then warns on every run) or hold dev_overrides or
#   mirrors that would change what the tests see.
# - The terraform directory goes first on PATH, because tfplugindocs looks
#   for `terraform` there and downloads one when it finds none.
# - OMNI_CLI picks the CLI:
#     terraform (default)  scripts/terraform.sh: $TF_ACC_TERRAFORM_PATH, the
#                          terraform on PATH, else the cached 1.8.5 build
#     terraform-1.8.5      the cached 1.8.5 build, even when a newer
#                          terraform is on PATH
#     terraform-path       the terraform on PATH, or fail
#     tofu                 scripts/tofu.sh: the tofu on PATH, else the
#                          cached 1.6.3 build
#     tofu-1.6.3           the cached 1.6.3 build
#     tofu-path            the tofu on PATH, or fail
#   OpenTofu runs get the provider address plugin-testing must use for
#   OpenTofu's registry.

_omni_env() {
  local here tools_dir tf rc
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  tools_dir=${OMNI_TOOLS_DIR:-$here/../.tools}
  mkdir -p "$tools_dir" || return
  tools_dir=$(cd "$tools_dir" && pwd)

  export CHECKPOINT_DISABLE=1
  export TF_IN_AUTOMATION=1
  # Tests use resource.UnitTest, which needs no TF_ACC; setting it anyway
  # keeps any resource.Test case from being skipped silently.
  export TF_ACC=1

  rc="$tools_dir/empty.terraformrc"
  : >"$rc" || return
  export TF_CLI_CONFIG_FILE=$rc

  local cli=${OMNI_CLI:-terraform} which
  # "terraform-1.8.5" asks terraform.sh for "1.8.5", "terraform" for its default.
  which=${cli#*-}
  if [[ $which == "$cli" ]]; then which=""; fi
  case $cli in
  terraform | terraform-?*)
    tf=$(bash "$here/terraform.sh" ${which:+"$which"}) || return
    ;;
  tofu | tofu-?*)
    tf=$(bash "$here/tofu.sh" ${which:+"$which"}) || return
    export TF_ACC_PROVIDER_NAMESPACE=hashicorp
    export TF_ACC_PROVIDER_HOST=registry.opentofu.org
    ;;
  *)
    echo "OMNI_CLI must be terraform, terraform-VERSION, terraform-path, tofu, tofu-VERSION or tofu-path, not '$cli'" >&2
    return 1
    ;;
  esac
  export TF_ACC_TERRAFORM_PATH=$tf
  PATH="$(dirname "$tf"):$PATH"
  export PATH
}

if [[ ${BASH_SOURCE[0]} != "$0" ]]; then
  # Sourced: export into the caller's shell and stop here.
  _omni_env
  return
fi

set -euo pipefail
_omni_env
if (($# == 0)); then
  env | grep -E '^(TF_|CHECKPOINT_DISABLE=)' | sort
  exit 0
fi
exec "$@"
