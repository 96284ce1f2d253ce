#!/usr/bin/env bash
# Builds the provider, points Terraform at that build through dev_overrides
# and applies examples/demo, printing the computed deploy config and launch
# command. Everything it writes (binary, CLI config, state) lives in a temp
# dir that is removed on exit; set OMNI_DEMO_KEEP=1 to keep it.
# Usage: scripts/demo.sh [example-dir]   (default: examples/demo)
# OMNI_CLI picks the CLI (see scripts/test-env.sh).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
example=$(cd "${1:-$repo/examples/demo}" && pwd)

export CHECKPOINT_DISABLE=1
export TF_IN_AUTOMATION=1
# The CLI OMNI_CLI names (scripts/test-env.sh), by default scripts/terraform.sh's.
terraform=$("$repo/scripts/test-env.sh" printenv TF_ACC_TERRAFORM_PATH)

work=$(mktemp -d "${TMPDIR:-/tmp}/omni-demo.XXXXXX")
if [[ ${OMNI_DEMO_KEEP:-} == 1 ]]; then
  echo "demo files kept in $work" >&2
else
  trap 'rm -rf "$work"' EXIT
fi

echo "building the provider..." >&2
(cd "$repo" && go build -o "$work/plugins/terraform-provider-omni" .)

# dev_overrides makes Terraform use the binary above for omnipd/omni without
# `terraform init`; the file is generated so a user's ~/.terraformrc is never
# read or changed.
cat >"$work/terraformrc" <<HCL
provider_installation {
  dev_overrides {
    "omnipd/omni" = "$work/plugins"
  }
  direct {}
}
HCL
export TF_CLI_CONFIG_FILE="$work/terraformrc"

# Apply a copy, so state and .terraform/ never land in the repository.
mkdir "$work/config"
cp "$example"/*.tf "$work/config/"

# Colour only when a person is watching.
color=()
[[ -t 1 ]] || color=(-no-color)

tf() { "$terraform" -chdir="$work/config" "$@"; }

echo "using $terraform ($("$terraform" version | sed -n 1p))" >&2
tf apply -auto-approve -input=false "${color[@]}"

echo
echo "# deploy_config"
tf output -raw deploy_config
echo
echo "# launch (the head: stage 0 and the API)"
tf output -raw launch
echo
if tf output processes >/dev/null 2>&1; then
  echo
  echo "# processes (one systemd unit each)"
  tf output processes
fi
