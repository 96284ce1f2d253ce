#!/usr/bin/env bash
# Prints the absolute path of an OpenTofu CLI >= 1.6, used to check that the
# provider also works under OpenTofu.
#   scripts/tofu.sh        `tofu` on PATH, else the cached build of v1.6.3,
#                          built from the Go module proxy when missing
#   scripts/tofu.sh 1.6.3  the cached v1.6.3 build (built when missing), even
#                          when another tofu is on PATH
#   scripts/tofu.sh path   `tofu` on PATH; fails when there is none
# Built on demand only: the main test suite never needs it. Only the path
# goes to stdout.
set -euo pipefail

# shellcheck source=scripts/lib-cli.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib-cli.sh"

MIN_VERSION=1.6.0
BUILD_VERSION=$TOFU_BUILD_VERSION
tools_dir=${OMNI_TOOLS_DIR:-$(repo_root)/.tools}
cached="$tools_dir/tofu-$BUILD_VERSION/tofu"

pick_cli tofu "$MIN_VERSION" "$cached" "$BUILD_VERSION" "github.com/opentofu/opentofu/cmd/tofu@v$BUILD_VERSION" \
  "-s -w -X github.com/opentofu/opentofu/version.dev=no" "${1:-}"
