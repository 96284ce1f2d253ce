#!/usr/bin/env bash
# Prints the absolute path of an OpenTofu CLI >= 1.6, used to check that the
# provider also works under OpenTofu. Order: `tofu` on PATH, a cached build,
# and last a build of v1.6.3 from the Go module proxy (on demand only: the
# main test suite never needs it). Only the path goes to stdout.
set -euo pipefail

# shellcheck source=scripts/lib-cli.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib-cli.sh"

MIN_VERSION=1.6.0
BUILD_VERSION=1.6.3
tools_dir=${OMNI_TOOLS_DIR:-$(repo_root)/.tools}
cached="$tools_dir/tofu-$BUILD_VERSION/tofu"

find_or_build_cli tofu "$MIN_VERSION" "$cached" "github.com/opentofu/opentofu/cmd/tofu@v$BUILD_VERSION" \
  "-s -w -X github.com/opentofu/opentofu/version.dev=no"
