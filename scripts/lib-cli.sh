# shellcheck shell=bash
# Shared by terraform.sh and tofu.sh: find or build a CLI binary, never
# download one. Source it; do not run it.

# Offline machines must never try HashiCorp's update checks.
export CHECKPOINT_DISABLE=1

repo_root() {
  cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd
}

log() {
  printf '%s\n' "$*" >&2
}

# version_of BIN: prints "MAJOR.MINOR.PATCH" reported by BIN, or nothing.
# The JSON form is preferred; the first line ("Terraform v1.8.5",
# "OpenTofu v1.6.3") is the fallback for builds that lack -json.
version_of() {
  local bin=$1 out v
  out=$(TF_CLI_CONFIG_FILE=/dev/null "$bin" version -json 2>/dev/null) || out=""
  v=$(printf '%s' "$out" | sed -n 's/.*"terraform_version"[[:space:]]*:[[:space:]]*"v\{0,1\}\([0-9][0-9.]*\).*/\1/p' | sed -n 1p)
  if [[ -z $v ]]; then
    out=$(TF_CLI_CONFIG_FILE=/dev/null "$bin" version 2>/dev/null | sed -n 1p) || out=""
    v=$(printf '%s' "$out" | sed -n 's/^[A-Za-z]* v\([0-9][0-9.]*\).*/\1/p')
  fi
  printf '%s' "$v"
}

# version_ge A B: true when version A >= version B (numeric, dot-separated).
version_ge() {
  local IFS=.
  # shellcheck disable=SC2206 # word splitting on dots is the point
  local a=($1) b=($2) i
  for i in 0 1 2; do
    if ((${a[i]:-0} > ${b[i]:-0})); then return 0; fi
    if ((${a[i]:-0} < ${b[i]:-0})); then return 1; fi
  done
  return 0
}

# usable BIN MIN: true when BIN is executable and reports a version >= MIN.
usable() {
  local bin=$1 min=$2 v
  [[ -n $bin && -x $bin && ! -d $bin ]] || return 1
  v=$(version_of "$bin")
  [[ -n $v ]] && version_ge "$v" "$min"
}

# abs_path PATH: prints PATH made absolute (plugin-testing requires it).
abs_path() {
  local p=$1
  if [[ $p != /* ]]; then p="$PWD/$p"; fi
  printf '%s/%s' "$(cd "$(dirname "$p")" && pwd)" "$(basename "$p")"
}

# go_build_cli DIR PKG@VER LDFLAGS: go-installs PKG into DIR from the module
# proxy. Runs outside any module so this repo's go.mod is not involved, and
# GOFLAGS is replaced so a caller's -mod=vendor or similar cannot break it.
# CGO is off, as in Terraform's own release builds.
go_build_cli() {
  local dir=$1 pkg=$2 ldflags=$3 tmp
  command -v go >/dev/null 2>&1 || { log "go not found on PATH; cannot build $pkg"; return 1; }
  mkdir -p "$dir"
  tmp=$(mktemp -d)
  log "building $pkg into $dir (a cold build takes a few minutes)..."
  if ! (cd "$tmp" && GOFLAGS=-buildvcs=false GOWORK=off GO111MODULE=on CGO_ENABLED=0 \
    GOBIN="$dir" go install -trimpath -ldflags "$ldflags" "$pkg") >&2; then
    rm -rf "$tmp"
    log "go install $pkg failed"
    return 1
  fi
  rm -rf "$tmp"
}

# find_or_build_cli NAME MIN_VERSION CACHED PKG@VER LDFLAGS: prints the
# absolute path of NAME on PATH if it reports >= MIN_VERSION, else of the
# binary at CACHED, which it first go-installs from the module proxy when it
# is missing or too old.
find_or_build_cli() {
  local name=$1 min=$2 cached=$3 pkg=$4 ldflags=$5 on_path
  if on_path=$(command -v "$name" 2>/dev/null) && usable "$on_path" "$min"; then
    abs_path "$on_path"; echo
    return 0
  fi
  if ! usable "$cached" "$min"; then
    go_build_cli "$(dirname "$cached")" "$pkg" "$ldflags" || return 1
    usable "$cached" "$min" || { log "built $cached but it does not report >= $min"; return 1; }
  fi
  abs_path "$cached"; echo
}
