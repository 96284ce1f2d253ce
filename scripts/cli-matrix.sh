#!/usr/bin/env bash
# Runs the provider's tests (./internal/provider) once per CLI, one CLI after
# another, and prints which tests each one skipped and a summary. The CLIs
# are OMNI_CLI values (see scripts/test-env.sh); by default:
#   terraform-1.8.5  the oldest supported Terraform, built from the Go module
#                    proxy and cached in OMNI_TOOLS_DIR
#   terraform-path   the terraform on PATH, when it is newer than 1.8.5; a
#                    note says why it is left out otherwise
#   tofu-1.6.3       OpenTofu 1.6.3, built and cached the same way; the tests
#                    of provider functions skip themselves there
# Usage: scripts/cli-matrix.sh [--prepare | --skip-default] [CLI...]
# --skip-default leaves out the CLI plain `make test` runs on (OMNI_CLI
# unset), for CI, which has just run the whole suite on it. --prepare only
# finds or builds each CLI and runs no test (CI does it in the background
# while other steps run). Every CLI runs even when one fails; the exit
# status is 1 when any failed. With CI set, a test skipped on Terraform is a
# failure: there every provider test must run.
# Environment: TESTARGS (extra `go test` flags), TEST_TIMEOUT (20m).
set -euo pipefail

# shellcheck source=scripts/lib-cli.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib-cli.sh"

repo=$(repo_root)
skip_default=0 prepare=0
case ${1:-} in
--skip-default) skip_default=1; shift ;;
--prepare) prepare=1; shift ;;
esac
clis=("$@")
if ((${#clis[@]} == 0)); then
  clis=("terraform-$TERRAFORM_BUILD_VERSION" terraform-path "tofu-$TOFU_BUILD_VERSION")
fi
read -ra testargs <<<"${TESTARGS:-}"

# cli_path CLI: the binary test-env.sh picks for OMNI_CLI=CLI (it builds a
# missing pinned one first); fails with test-env.sh's reason on stderr.
cli_path() {
  OMNI_CLI=$1 "$repo/scripts/test-env.sh" printenv TF_ACC_TERRAFORM_PATH
}

work=$(mktemp -d "${TMPDIR:-/tmp}/omni-matrix.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Binaries already covered, each with the run that covered it.
declare -A covered=()
if ((skip_default)); then
  if default=$(OMNI_CLI="" "$repo/scripts/test-env.sh" printenv TF_ACC_TERRAFORM_PATH); then
    covered[$default]="make test"
  fi
fi

summary=()
failed=0
# The -path entries are whatever the machine has: their absence is a note,
# not a failure.
for cli in "${clis[@]}"; do
  if [[ $cli == *-path ]]; then
    if ! tf=$(cli_path "$cli" 2>"$work/why"); then
      summary+=("$cli: skipped, $(tail -n 1 "$work/why")")
      log "== $cli: skipped: $(tail -n 1 "$work/why")"
      continue
    fi
  elif ! tf=$(cli_path "$cli"); then
    summary+=("$cli: FAILED, no CLI")
    failed=1
    continue
  fi
  if ((prepare)); then
    log "== $cli: $tf"
    continue
  fi
  v=$(version_of "$tf")
  name=$(TF_CLI_CONFIG_FILE=/dev/null "$tf" version 2>/dev/null | sed -n '1s/ v.*//p')
  if [[ $cli == terraform-path ]] && version_ge "$TERRAFORM_BUILD_VERSION" "$v"; then
    summary+=("$cli: skipped, $tf is $v, not newer than the pinned $TERRAFORM_BUILD_VERSION")
    log "== $cli: skipped: $tf is $v, not newer than the pinned $TERRAFORM_BUILD_VERSION"
    continue
  fi
  if [[ -n ${covered[$tf]:-} ]]; then
    summary+=("$cli: skipped, $tf ($name $v) already ran in ${covered[$tf]}")
    log "== $cli: skipped: $tf ($name $v) already ran in ${covered[$tf]}"
    continue
  fi
  covered[$tf]=$cli
  log "== $cli: $name $v ($tf)"
  start=$SECONDS
  if OMNI_CLI=$cli "$repo/scripts/test-env.sh" go -C "$repo" test ./internal/provider/... -count=1 -v \
    -timeout="${TEST_TIMEOUT:-20m}" "${testargs[@]}" >"$work/$cli.log" 2>&1; then
    result=ok
  else
    result=FAILED
    failed=1
    cat "$work/$cli.log"
  fi
  # Top-level tests only: subtests are indented.
  pass=$(grep -c '^--- PASS' "$work/$cli.log" || true)
  skip=$(grep -c '^--- SKIP' "$work/$cli.log" || true)
  fail=$(grep -c '^--- FAIL' "$work/$cli.log" || true)
  if ((skip)); then
    log "skipped on $name $v:"
    # Each skipped test with the reason it logged on the line before.
    awk '/^--- SKIP: / { r = prev; sub(/^[[:space:]]+[^ ]+: /, "", r); print "  " $3 ": " r } { prev = $0 }' \
      "$work/$cli.log" >&2
    # Every provider test runs on Terraform 1.8 and later; in CI a skip
    # there means a check or a tool went missing.
    if [[ -n ${CI:-} && $name == Terraform ]]; then
      log "$cli: tests skipped on $name $v, where all of them should run"
      result=FAILED
      failed=1
    fi
  fi
  grep -E '^(ok|FAIL|---)[[:space:]].*internal/provider' "$work/$cli.log" >&2 || true
  summary+=("$cli: $result, $name $v, $pass passed, $skip skipped, $fail failed ($((SECONDS - start))s)")
done

if ((prepare)); then exit "$failed"; fi
log ""
log "CLI matrix:"
for line in "${summary[@]}"; do log "  $line"; done
exit "$failed"
