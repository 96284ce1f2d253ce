#!/usr/bin/env bash
# Prints the absolute path of a Terraform CLI >= 1.8 (the first version with
# provider-defined functions).
#   scripts/terraform.sh        $TF_ACC_TERRAFORM_PATH, else `terraform` on
#                               PATH, else the cached build of v1.8.5, built
#                               from the Go module proxy when missing
#   scripts/terraform.sh 1.8.5  the cached v1.8.5 build (built when missing),
#                               even when a newer terraform is on PATH
#   scripts/terraform.sh path   `terraform` on PATH; fails when there is none
#                               or it is older than 1.8
# v1.8.5 is the newest release that `go install` accepts: later ones carry
# replace directives. Progress goes to stderr; only the path goes to stdout.
set -euo pipefail

# shellcheck source=scripts/lib-cli.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib-cli.sh"

MIN_VERSION=1.8.0
BUILD_VERSION=$TERRAFORM_BUILD_VERSION
tools_dir=${OMNI_TOOLS_DIR:-$(repo_root)/.tools}
cached="$tools_dir/terraform-$BUILD_VERSION/terraform"

if [[ -z ${1:-} && -n ${TF_ACC_TERRAFORM_PATH:-} ]]; then
  if usable "$TF_ACC_TERRAFORM_PATH" "$MIN_VERSION"; then
    abs_path "$TF_ACC_TERRAFORM_PATH"; echo
    exit 0
  fi
  log "ignoring TF_ACC_TERRAFORM_PATH=$TF_ACC_TERRAFORM_PATH: not an executable terraform >= $MIN_VERSION"
fi

pick_cli terraform "$MIN_VERSION" "$cached" "$BUILD_VERSION" "github.com/hashicorp/terraform@v$BUILD_VERSION" \
  "-s -w -X github.com/hashicorp/terraform/version.dev=no" "${1:-}"
