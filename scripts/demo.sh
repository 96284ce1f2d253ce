#!/usr/bin/env bash
# Runs an example, or any configuration, with the provider built from this
# checkout, which Terraform is pointed at through a generated CLI config
# with dev_overrides (scripts/dev-env.sh).
#
# Usage: scripts/demo.sh [dir]   (default: examples/demo)
#
# - dir is copied to a temp dir with every local module it calls, in the
#   same layout, so sources such as "../../modules/pd-pipeline" still
#   resolve; `terraform get` installs them (dev_overrides leaves no room for
#   `terraform init`: omnipd/omni is in no registry).
# - A folder with a deploy_config output, such as examples/demo, is applied
#   (its state stays in the temp dir) and its deploy config and launch
#   command are printed. Any other folder, examples/deployments/* among
#   them, is planned: the plan lists every output with its value.
# - Only omnipd/omni and Terraform's built-in providers (terraform_data)
#   can be used: nothing else is installed.
#
# Everything it writes (binary, CLI config, state) lives in the temp dir,
# removed on exit; set OMNI_DEMO_KEEP=1 to keep it. OMNI_CLI picks the CLI
# (see scripts/test-env.sh).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
example=$(cd "${1:-$repo/examples/demo}" && pwd -P)
if ! compgen -G "$example/*.tf" >/dev/null; then
  echo "$example holds no .tf file" >&2
  exit 2
fi

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

# The build and a CLI config whose dev_overrides point at it, both in the
# temp dir; a user's ~/.terraformrc is never read or changed.
export_line=$(OMNI_DEV_DIR="$work/dev" "$repo/scripts/dev-env.sh" 2>/dev/null)
eval "$export_line"

# Every directory the configuration needs: its own and, transitively, each
# local module's ("./x", "../x"; registry and git sources are left to
# Terraform, which cannot fetch them without init here).
dirs=("$example")
for ((i = 0; i < ${#dirs[@]}; i++)); do
  d=${dirs[i]}
  while IFS= read -r src; do
    if ! m=$(cd "$d/$src" 2>/dev/null && pwd -P); then
      echo "$d calls the module $src, which does not exist" >&2
      exit 2
    fi
    seen=0
    for x in "${dirs[@]}"; do [[ $x == "$m" ]] && seen=1; done
    ((seen)) || dirs+=("$m")
  done < <(sed -nE 's/^[[:space:]]*source[[:space:]]*=[[:space:]]*"(\.\.?\/[^"]*)".*/\1/p' "$d"/*.tf)
done

# Copy them under their deepest common parent, so each relative source
# points where it did.
top=$example
for d in "${dirs[@]}"; do
  while [[ $top != / && $d != "$top" && $d != "$top"/* ]]; do top=$(dirname "$top"); done
done
tree="$work/tree"
for d in "${dirs[@]}"; do
  rel=${d#"$top"}
  mkdir -p "$tree$rel"
  tar -C "$d" --exclude=.terraform --exclude='*.tfstate*' --exclude=.terraform.lock.hcl -cf - . | tar -C "$tree$rel" -xf -
done
config="$tree${example#"$top"}"

# Colour only when a person is watching.
color=()
[[ -t 1 ]] || color=(-no-color)

tf() { "$terraform" -chdir="$config" "$@"; }

echo "using $terraform ($("$terraform" version | sed -n 1p))" >&2
if ((${#dirs[@]} > 1)); then
  tf get "${color[@]}"
fi

if ! grep -qE '^output "deploy_config"' "$config"/*.tf; then
  tf plan -input=false "${color[@]}"
  exit 0
fi

tf apply -auto-approve -input=false "${color[@]}"

echo
echo "# deploy_config"
tf output -raw deploy_config
echo
for name in launch serve_command; do
  if tf output "$name" >/dev/null 2>&1; then
    echo "# $name (the head: stage 0 and the API)"
    tf output -raw "$name"
    echo
    break
  fi
done
if tf output processes >/dev/null 2>&1; then
  echo
  echo "# processes (one systemd unit each)"
  tf output processes
fi
