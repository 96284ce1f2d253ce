# shellcheck shell=bash
# Shared by terraform.sh and tofu.sh: find or build a CLI binary, never
# download one. Source it; do not run it.

# Offline machines must never try HashiCorp's update checks.
export CHECKPOINT_DISABLE=1

# The releases terraform.sh and tofu.sh build from the Go module proxy: the
# oldest supported ones. Terraform 1.8.5 is also the newest that `go install`
# accepts (later ones carry replace directives).
# shellcheck disable=SC2034 # used by the scripts that source this file
TERRAFORM_BUILD_VERSION=1.8.5
# shellcheck disable=SC2034
TOFU_BUILD_VERSION=1.6.3

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

# cached_cli CACHED VERSION PKG@VER LDFLAGS: prints the absolute path of the
# build at CACHED, which it first go-installs from the module proxy when it
# is missing or does not report exactly VERSION. A lock next to the build
# makes a second caller (CI builds in the background) wait for the first
# instead of building into the same place at the same time.
cached_cli() {
  local cached=$1 want=$2 pkg=$3 ldflags=$4 dir fd
  dir=$(dirname "$cached")
  mkdir -p "$dir"
  if command -v flock >/dev/null 2>&1; then
    exec {fd}>>"$dir/.lock"
    flock "$fd"
  fi
  if [[ $(version_of "$cached" 2>/dev/null) != "$want" ]]; then
    go_build_cli "$dir" "$pkg" "$ldflags" || return 1
    [[ $(version_of "$cached") == "$want" ]] || { log "built $cached but it does not report $want"; return 1; }
  fi
  abs_path "$cached"; echo
}

# path_cli NAME MIN_VERSION: prints the absolute path of NAME on PATH when it
# reports >= MIN_VERSION, else fails saying why.
path_cli() {
  local name=$1 min=$2 on_path v
  if ! on_path=$(command -v "$name" 2>/dev/null); then
    log "no $name on PATH"
    return 1
  fi
  if ! usable "$on_path" "$min"; then
    v=$(version_of "$on_path")
    log "$on_path reports ${v:-no version}, not >= $min"
    return 1
  fi
  abs_path "$on_path"; echo
}

# find_or_build_cli NAME MIN_VERSION CACHED VERSION PKG@VER LDFLAGS: prints
# the absolute path of NAME on PATH if it reports >= MIN_VERSION, else of
# the build of VERSION at CACHED (see cached_cli).
find_or_build_cli() {
  local name=$1 min=$2
  if path_cli "$name" "$min" 2>/dev/null; then
    return 0
  fi
  shift 2
  cached_cli "$@"
}

# pick_cli NAME MIN_VERSION CACHED VERSION PKG@VER LDFLAGS [WHICH]: the CLI a
# script was asked for. WHICH is empty (NAME on PATH, else the build),
# "path" (NAME on PATH only) or VERSION (the build, even when a newer NAME
# is on PATH). Other versions cannot be had offline.
pick_cli() {
  local name=$1 min=$2 version=$4 which=${7:-}
  case $which in
  "") find_or_build_cli "${@:1:6}" ;;
  path) path_cli "$name" "$min" ;;
  "$version") cached_cli "${@:3:4}" ;;
  *)
    log "$name $which: only $version can be built from the Go module proxy; \"path\" picks $name on PATH"
    return 2
    ;;
  esac
}
