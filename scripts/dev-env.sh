#!/usr/bin/env bash
# Builds the provider from this checkout and writes a Terraform CLI
# configuration whose dev_overrides point omnipd/omni at that build, then
# prints the line that makes Terraform use it. In your shell:
#
#   eval "$(make -s dev-env)"        # or: eval "$(scripts/dev-env.sh)"
#
# after which `terraform plan` in any configuration (the examples, your own)
# runs this build. omnipd/omni is not published to any registry, so:
# - skip `terraform init`: with dev_overrides it still asks the registry for
#   omnipd/omni, and fails;
# - run `terraform get` where the configuration calls modules: it installs
#   them, and is all the set-up plan and apply need.
# Run it again after changing the provider: the build is replaced in place,
# and the printed line stays the same.
#
# The build and the configuration live in OMNI_DEV_DIR (default
# ${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-omni/dev). ~/.terraformrc
# is neither read nor changed, but while TF_CLI_CONFIG_FILE names this file
# Terraform does not read ~/.terraformrc either: unset it to go back.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${OMNI_DEV_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/terraform-provider-omni/dev}
mkdir -p "$dir/plugins"
dir=$(cd "$dir" && pwd)

echo "building the provider into $dir/plugins..." >&2
(cd "$repo" && "${GO:-go}" build -o "$dir/plugins/terraform-provider-omni" .)

# Written to a temporary name and moved, so a shell that already uses the
# file never reads half of it.
cat >"$dir/terraformrc.tmp" <<HCL
# Written by scripts/dev-env.sh: Terraform runs omnipd/omni from the build
# beside this file, without terraform init.
provider_installation {
  dev_overrides {
    "omnipd/omni" = "$dir/plugins"
  }
  direct {}
}
HCL
mv "$dir/terraformrc.tmp" "$dir/terraformrc"

printf 'export TF_CLI_CONFIG_FILE=%q\n' "$dir/terraformrc"
cat >&2 <<'TEXT'
# Then, in a configuration: terraform get (if it calls modules), terraform plan.
# Skip terraform init: omnipd/omni is not in any registry. Terraform warns that
# development overrides are in effect; that is expected.
TEXT
