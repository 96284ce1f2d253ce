#!/usr/bin/env bash
# Prints the absolute path of a Terraform CLI >= 1.8 (the first version with
# provider-defined functions). Order: $TF_ACC_TERRAFORM_PATH, `terraform` on
# PATH, a cached build, and last a build of v1.8.5 from the Go module proxy.
# v1.8.5 is the newest release that `go install` accepts: later ones carry
# replace directives. Progress goes to stderr; only the path goes to stdout.
set -euo pipefail

# shellcheck source=scripts/lib-cli.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib-cli.sh"

MIN_VERSION=1.8.0
BUILD_VERSION=1.8.5
tools_dir=${OMNI_TOOLS_DIR:-$(repo_root)/.tools}
cached="$tools_dir/terraform-$BUILD_VERSION/terraform"

if [[ -n ${TF_ACC_TERRAFORM_PATH:-} ]]; then
  if usable "$TF_ACC_TERRAFORM_PATH" "$MIN_VERSION"; then
    abs_path "$TF_ACC_TERRAFORM_PATH"; echo
    exit 0
  fi
  log "ignoring TF_ACC_TERRAFORM_PATH=$TF_ACC_TERRAFORM_PATH: not an executable terraform >= $MIN_VERSION"
fi

find_or_build_cli terraform "$MIN_VERSION" "$cached" "github.com/hashicorp/terraform@v$BUILD_VERSION" \
  "-s -w -X github.com/hashicorp/terraform/version.dev=no"
