#!/usr/bin/env bash
# Plan-time benchmark (`make bench`): how long `terraform plan` takes for N
# pipelines, N = 1, 100, 300, 1000, planned three ways:
#   a  N omni_pd_pipeline data sources (the seed input with its own reserved
#      port each, or with BENCH_LAYOUT=count its own api_port, port_range
#      and tensor_parallel_size; bench/data_source),
#   b  the same layout written by hand in HCL and yamlencode()d
#      (bench/plain_hcl),
#   c  N terraform_data resources holding the same inputs: Terraform's own
#      cost per object, the floor (bench/terraform_data).
# and, reported apart, r: N omni_pd_pipeline resources planned for creation
# (bench/resource).
# By default each pipeline is one instance of a module (for_each over a set
# on the module), as users write one module per cluster; BENCH_LAYOUT picks
# another layout (see write_config).
# With OMNI_BENCH_BASELINE=<provider binary>, a fourth variant a0 plans (a)
# with that binary, for before/after figures under the same load.
# Each repetition runs every (N, variant) once, the variants alternating in a
# rotating order, and the report gives medians, which cancels most drift in
# machine load. The provider runs under GNU time through a wrapper in the
# dev_overrides directory, which records each provider process's peak RSS
# and CPU time. Then the Go benchmarks of the engine steps and the provider's
# RPCs run. The report replaces the part of PERFORMANCE.md between the
# `bench:begin` and `bench:end` markers (`bench-for_each:` or `bench-count:`
# ones for the other layouts); the rest of the file is kept.
#
# Environment: OMNI_CLI (the CLI, see scripts/test-env.sh), BENCH_NS
# ("1 100 300 1000"), BENCH_REPS (3), BENCH_LAYOUT
# (module, for_each or count: for_each or count on the data source and
# terraform_data themselves; Terraform 1.11 re-evaluates a resource's
# for_each set for every instance, a cost that grows with N², see
# PERFORMANCE.md), BENCH_GO (1; 0 skips the Go benchmarks), BENCHARGS
# (extra `go test` flags), OMNI_BENCH_PROVIDER (a prebuilt provider binary
# instead of building one), OMNI_BENCH_BASELINE (see above), BENCH_DOC
# (PERFORMANCE.md; "-" prints the report instead), BENCH_KEEP=1 keeps
# the temp dir.
set -euo pipefail

# shellcheck source=scripts/lib-cli.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib-cli.sh"

repo=$(repo_root)
read -ra ns <<<"${BENCH_NS:-1 100 300 1000}"
read -ra benchargs <<<"${BENCHARGS:-}"
reps=${BENCH_REPS:-3}
if [[ -n ${BENCH_COUNT:-} ]]; then
  log "BENCH_COUNT is gone: use BENCH_LAYOUT=count"
  exit 2
fi
layout=${BENCH_LAYOUT:-module}
case $layout in
module | for_each | count) ;;
*) log "BENCH_LAYOUT must be module, for_each or count, not \"$layout\""; exit 2 ;;
esac
doc=${BENCH_DOC:-$repo/PERFORMANCE.md}
model="Qwen/Qwen3-Omni-30B-A3B-Instruct"
variants=(a b c r)
if [[ -n ${OMNI_BENCH_BASELINE:-} ]]; then variants=(a0 a b c r); fi

[[ -x /usr/bin/time ]] || { log "GNU time is needed at /usr/bin/time: apt-get install -y time"; exit 1; }
# The CLI OMNI_CLI names (scripts/test-env.sh), by default scripts/terraform.sh's.
terraform=$("$repo/scripts/test-env.sh" printenv TF_ACC_TERRAFORM_PATH)
export TF_IN_AUTOMATION=1

work=$(mktemp -d "${TMPDIR:-/tmp}/omni-bench.XXXXXX")
if [[ ${BENCH_KEEP:-} == 1 ]]; then log "bench files kept in $work"; else trap 'rm -rf "$work"' EXIT; fi

provider=${OMNI_BENCH_PROVIDER:-$work/bin/terraform-provider-omni}
if [[ -z ${OMNI_BENCH_PROVIDER:-} ]]; then
  log "building the provider..."
  (cd "$repo" && go build -o "$provider" .)
fi

# override NAME BINARY: a dev_overrides directory holding a wrapper that
# runs BINARY, and the CLI config $work/NAME.tfrc that points at it.
# Terraform starts the provider several times per plan (schema, validate,
# plan); each process writes "<peak RSS KiB> <user s> <system s>" to its own
# file in $OMNI_BENCH_RSS_DIR, which Terraform passes on to the plugin.
override() {
  local name=$1 binary=$2
  mkdir -p "$work/$name"
  cat >"$work/$name/terraform-provider-omni" <<SH
#!/bin/sh
exec /usr/bin/time -f '%M %U %S' -o "\$OMNI_BENCH_RSS_DIR/\$\$" "$binary" "\$@"
SH
  chmod +x "$work/$name/terraform-provider-omni"
  cat >"$work/$name.tfrc" <<HCL
provider_installation {
  dev_overrides {
    "omnipd/omni" = "$work/$name"
  }
  direct {}
}
HCL
}
override current "$provider"
export TF_CLI_CONFIG_FILE=$work/current.tfrc
if [[ -n ${OMNI_BENCH_BASELINE:-} ]]; then override baseline "$OMNI_BENCH_BASELINE"; fi

# write_config VARIANT N DIR: the root module of one (variant, N).
# BENCH_LAYOUT picks how the N instances are repeated:
#   module    for_each over a set on a module holding one pipeline each
#             (bench/data_source, bench/plain_hcl, bench/terraform_data):
#             what users write, one module per cluster;
#   for_each  for_each over a set on the data source and on terraform_data
#             themselves (b stays a module);
#   count     count on the data source and on terraform_data themselves
#             (b is a module with count), and every instance differs in
#             more than a port: its own api_port and port_range, and
#             tensor_parallel_size 1 and 2 in turn on prefill and decode.
# The input lines are the same for a, b, c and r: the data source's
# arguments, the module's variables, terraform_data's input object.
write_config() {
  local v=$1 n=$2 dir=$3 repeat="for_each = local.ids" inputs module
  inputs="model          = \"$model\"
  reserved_ports = [30000 + tonumber(each.key)]"
  if [[ $layout == count ]]; then
    repeat="count = $n"
    inputs="model      = \"$model\"
  api_port   = 10000 + count.index
  port_range = { first = 20000 + 4 * count.index, last = 20003 + 4 * count.index }
  prefill    = { tensor_parallel_size = 1 + count.index % 2 }
  decode     = { tensor_parallel_size = 1 + count.index % 2 }"
  fi
  mkdir -p "$dir"
  case $v in
  a | a0) module=data_source ;;
  r) module=resource ;;
  b) module=plain_hcl ;;
  c) module=terraform_data ;;
  esac
  {
    echo "locals { ids = toset([for i in range($n) : tostring(i)]) }"
    if [[ $layout == module || $v == b ]]; then
      cp -r "$repo/bench/$module" "$dir/$module"
      cat <<HCL
module "p" {
  $repeat
  source = "./$module"
  $inputs
}
HCL
      if [[ $v == c ]]; then
        echo 'output "count" { value = length(module.p) }'
      else
        echo 'output "bytes" { value = sum([for p in module.p : length(p.config_yaml) + length(p.serve_command)]) }'
      fi
    else
      case $v in
      a | a0 | r)
        # The data source (a) or the resource (r) itself, repeated.
        local block='data "omni_pd_pipeline" "p"' ref=data.omni_pd_pipeline.p
        if [[ $v == r ]]; then block='resource "omni_pd_pipeline" "p"' ref=omni_pd_pipeline.p; fi
        cat <<HCL
terraform {
  required_providers {
    omni = { source = "omnipd/omni" }
  }
}
$block {
  $repeat
  $inputs
}
output "bytes" { value = sum([for p in $ref : length(p.config_yaml) + length(p.serve_command)]) }
HCL
        ;;
      c) cat <<HCL
resource "terraform_data" "p" {
  $repeat
  input = {
  $inputs
  }
}
output "count" { value = length(terraform_data.p) }
HCL
        ;;
      esac
    fi
  } >"$dir/main.tf"
  # Local modules need installing; dev_overrides and the built-in
  # terraform_data need no provider installation, and `terraform get`
  # installs modules without looking for providers.
  if [[ -d $dir/$module ]] && ! "$terraform" -chdir="$dir" get -no-color >"$dir/get.log" 2>&1; then
    log "terraform get failed for variant $v, N=$n:"
    tail -n 30 "$dir/get.log" >&2
    exit 1
  fi
}

busy_jiffies() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat; }

# run_plan VARIANT N REP: one plan; appends a row to $work/raw.tsv:
# rep n variant wall_s tf_cpu_s prov_cpu_s prov_rss_mib prov_procs other_load
# tf_cpu is Terraform's CPU time with its children, the provider included;
# other_load is the CPU (in cores) the rest of the machine used meanwhile.
run_plan() {
  local v=$1 n=$2 rep=$3 dir="$work/$1_$2" rc=current rss t0 t1 b0 b1
  if [[ $v == a0 ]]; then rc=baseline; fi
  rss=$(mktemp -d "$work/rss.XXXXXX")
  b0=$(busy_jiffies)
  t0=$(date +%s%N)
  if ! TF_CLI_CONFIG_FILE=$work/$rc.tfrc OMNI_BENCH_RSS_DIR=$rss /usr/bin/time -f '%U %S' -o "$dir/time" \
    "$terraform" -chdir="$dir" plan -refresh=false -lock=false -input=false -no-color >"$dir/plan.log" 2>&1; then
    log "plan failed for variant $v, N=$n:"
    tail -n 30 "$dir/plan.log" >&2
    exit 1
  fi
  t1=$(date +%s%N)
  b1=$(busy_jiffies)
  { cat "$rss"/* 2>/dev/null || true; } | awk -v rep="$rep" -v n="$n" -v v="$v" -v t0="$t0" -v t1="$t1" \
    -v b0="$b0" -v b1="$b1" -v hz="$(getconf CLK_TCK)" -v tf="$(cat "$dir/time")" '
    { if ($1 > rss) rss = $1; cpu += $2 + $3; procs++ }
    END {
      split(tf, t, " "); wall = (t1 - t0) / 1e9; tfcpu = t[1] + t[2]
      other = ((b1 - b0) / hz - tfcpu) / wall; if (other < 0) other = 0
      printf "%d\t%d\t%s\t%.3f\t%.2f\t%.2f\t%.1f\t%d\t%.2f\n", rep, n, v, wall, tfcpu, cpu, rss / 1024, procs, other
    }' >>"$work/raw.tsv"
  rm -rf "$rss"
}

log "using $terraform ($("$terraform" version | sed -n 1p)); N = ${ns[*]}; variants ${variants[*]}; layout $layout; $reps repetitions"
for n in "${ns[@]}"; do
  for v in "${variants[@]}"; do
    write_config "$v" "$n" "$work/${v}_$n"
    run_plan "$v" "$n" 0 # warm-up, left out of the medians
  done
done
for ((rep = 1; rep <= reps; rep++)); do
  for n in "${ns[@]}"; do
    # Rotate the order each repetition so no variant always runs first.
    for ((i = 0; i < ${#variants[@]}; i++)); do
      run_plan "${variants[$(((i + rep) % ${#variants[@]}))]}" "$n" "$rep"
    done
  done
  log "repetition $rep/$reps done"
done

# medians.tsv: n variant, then the median of each column of raw.tsv.
awk -F'\t' '$1 > 0' "$work/raw.tsv" | sort -t$'\t' -k2,2n -k3,3 | awk -F'\t' '
  function med(s,   a, k, i, j, x, m) {
    k = split(s, a, " ")
    for (i = 2; i <= k; i++) { x = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    m = int((k + 1) / 2); return k % 2 ? a[m] : (a[m] + a[m + 1]) / 2
  }
  { key = $2 "\t" $3; if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
    for (c = 4; c <= 9; c++) col[key, c] = col[key, c] " " $c }
  END { for (i = 1; i <= nk; i++) { k = order[i]; printf "%s", k
          for (c = 4; c <= 9; c++) printf "\t%s", med(col[k, c]); printf "\n" } }' >"$work/medians.tsv"

# table AWK-PROGRAM: runs a report table over the medians; the program sees
# wall[n, v], cpu[n, v] (Terraform with provider), pcpu[n, v], rss[n, v]
# and the Ns in order in ns[1..k].
table() {
  awk -F'\t' '
    { wall[$1, $2] = $3; cpu[$1, $2] = $4; pcpu[$1, $2] = $5; rss[$1, $2] = $6
      if (!($1 in seen)) { seen[$1] = 1; ns[++k] = $1 } }
    END { '"$1"' }' "$work/medians.tsv"
}

report() {
  local loads
  loads=$(awk -F'\t' '$1 > 0 {print $9}' "$work/raw.tsv" | sort -g |
    awk '{a[NR] = $1} END {printf "%.2f / %.2f / %.2f", a[1], a[int((NR + 1) / 2)], a[NR]}')
  echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC') by \`make bench\` (scripts/bench.sh)."
  echo
  echo "- Machine: $(nproc) cores ($(awk -F': ' '/^model name/{print $2; exit}' /proc/cpuinfo))," \
    "$(awk '/^MemTotal/{printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) memory."
  echo "- $("$terraform" version | sed -n 1p), $(go version | awk '{print $3}'); provider" \
    "$(if [[ -n ${OMNI_BENCH_PROVIDER:-} ]]; then echo "binary $OMNI_BENCH_PROVIDER"; else echo "built from $(git -C "$repo" describe --always --dirty 2>/dev/null || echo '?')"; fi)."
  echo "- $reps repetitions after one warm-up; the variants alternate in a rotating order; medians."
  case $layout in
  module) echo "- One module instance per pipeline, \`for_each\` over a set of strings on the module (bench/data_source, bench/plain_hcl, bench/terraform_data)." ;;
  for_each) echo "- \`for_each\` over a set of strings on the data sources and the \`terraform_data\` resources themselves; b is one module instance per pipeline." ;;
  count) echo "- \`count\` on the data sources and the \`terraform_data\` resources themselves, b one module instance per pipeline; every instance has its own \`api_port\` and \`port_range\`, and \`tensor_parallel_size\` 1 and 2 in turn on prefill and decode." ;;
  esac
  echo "- Load from other processes while the plans ran, in busy cores outside Terraform and the provider" \
    "(min / median / max over the plans): $loads."
  echo
  echo "Wall time of \`terraform plan\`, and CPU time of Terraform with the provider (s):"
  echo
  echo "| N | a: data sources | b: plain HCL | c: terraform_data | a/b | a/c | CPU a | CPU b | CPU c | CPU a/b | CPU a/c | provider CPU | provider peak RSS (MiB) |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  table 'for (i = 1; i <= k; i++) { n = ns[i]
      printf "| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f |\n", n,
        wall[n, "a"], wall[n, "b"], wall[n, "c"], wall[n, "a"] / wall[n, "b"], wall[n, "a"] / wall[n, "c"],
        cpu[n, "a"], cpu[n, "b"], cpu[n, "c"], cpu[n, "a"] / cpu[n, "b"], cpu[n, "a"] / cpu[n, "c"],
        pcpu[n, "a"], rss[n, "a"] }'
  echo
  echo "Cost of each added pipeline between successive N, from the medians (ms):"
  echo
  echo "| N | wall a | wall b | wall c | CPU a | CPU b | CPU c | provider CPU |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  table 'for (i = 2; i <= k; i++) { lo = ns[i - 1]; hi = ns[i]; d = (hi - lo) / 1000
      printf "| %d → %d | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.2f |\n", lo, hi,
        (wall[hi, "a"] - wall[lo, "a"]) / d, (wall[hi, "b"] - wall[lo, "b"]) / d, (wall[hi, "c"] - wall[lo, "c"]) / d,
        (cpu[hi, "a"] - cpu[lo, "a"]) / d, (cpu[hi, "b"] - cpu[lo, "b"]) / d, (cpu[hi, "c"] - cpu[lo, "c"]) / d,
        (pcpu[hi, "a"] - pcpu[lo, "a"]) / d }'
  echo
  echo "Resources (r), planned for creation, against the same runs' a and b:"
  echo
  echo "| N | wall r | CPU r | provider CPU r | provider peak RSS r (MiB) | r/b | CPU r/b | r/a | CPU r/a |"
  echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  table 'for (i = 1; i <= k; i++) { n = ns[i]
      printf "| %d | %.2f | %.2f | %.2f | %.1f | %.2f | %.2f | %.2f | %.2f |\n", n,
        wall[n, "r"], cpu[n, "r"], pcpu[n, "r"], rss[n, "r"], wall[n, "r"] / wall[n, "b"], cpu[n, "r"] / cpu[n, "b"],
        wall[n, "r"] / wall[n, "a"], cpu[n, "r"] / cpu[n, "a"] }'
  if [[ -n ${OMNI_BENCH_BASELINE:-} ]]; then
    echo
    echo "Baseline binary ($OMNI_BENCH_BASELINE, a0) against this build (a), same runs:"
    echo
    echo "| N | wall a0 | wall a | CPU a0 | CPU a | provider CPU a0 | provider CPU a | peak RSS a0 (MiB) | peak RSS a (MiB) | a0/b | a/b |"
    echo "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    table 'for (i = 1; i <= k; i++) { n = ns[i]
        printf "| %d | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.2f | %.2f |\n", n,
          wall[n, "a0"], wall[n, "a"], cpu[n, "a0"], cpu[n, "a"], pcpu[n, "a0"], pcpu[n, "a"],
          rss[n, "a0"], rss[n, "a"], wall[n, "a0"] / wall[n, "b"], wall[n, "a"] / wall[n, "b"] }'
  fi
  echo
  echo "<details><summary>Every plan (rep 0 is the warm-up)</summary>"
  echo
  echo "| rep | N | variant | wall (s) | CPU, Terraform with provider (s) | provider CPU (s) | provider peak RSS (MiB) | provider processes | other load (cores) |"
  echo "|---:|---:|---|---:|---:|---:|---:|---:|---:|"
  awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6, $7, $8, $9 }' "$work/raw.tsv"
  echo
  echo "</details>"
  if [[ ${BENCH_GO:-1} != 0 ]]; then
    echo
    echo "Go benchmarks, engine steps and provider RPCs on the seed input" \
      "(\`go test -run '^\$' -bench . -benchmem${BENCHARGS:+ $BENCHARGS} ./internal/...\`):"
    echo
    if ! (cd "$repo" && go test -run '^$' -bench . -benchmem "${benchargs[@]}" ./internal/...) >"$work/go.txt" 2>&1; then
      log "go test failed; the report lists the benchmarks that ran"
      echo "(\`go test\` failed; these are the benchmarks that ran.)"
      echo
    fi
    echo '```'
    grep -E '^(Benchmark|cpu:)' "$work/go.txt" | awk '!seen[$0]++' || true
    echo '```'
  fi
}

log "writing the report"
report >"$work/report.md"
# The module layout fills the section between the bench:begin/end markers,
# the others the ones between bench-LAYOUT:begin/end.
marker=bench
if [[ $layout != module ]]; then marker=bench-$layout; fi
begin="<!-- $marker:begin -->" end="<!-- $marker:end -->"
if [[ $doc == - ]]; then
  cat "$work/report.md"
elif [[ -f $doc ]] && grep -qxF "$begin" "$doc" && grep -qxF "$end" "$doc"; then
  awk -v report="$work/report.md" -v begin="$begin" -v end="$end" '
    $0 == end { while ((getline line < report) > 0) print line; skip = 0 }
    !skip { print }
    $0 == begin { skip = 1 }' "$doc" >"$work/doc.md"
  cp "$work/doc.md" "$doc"
  log "updated $doc"
else
  mkdir -p "$(dirname "$doc")"
  if [[ ! -f $doc ]]; then printf '# Plan-time performance\n' >"$doc"; fi
  { echo; echo "$begin"; cat "$work/report.md"; echo "$end"; } >>"$doc"
  log "added the report to $doc"
fi
