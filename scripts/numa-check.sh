#!/usr/bin/env bash
# scripts/numa-check.sh: proves canopy's NUMA behaviour on a kernel with
# several NUMA nodes. Builds canopy_numa_check (tests/numa) if needed, then
# runs it inside throw-away QEMU VMs (../shared/tools/numavm) with 2 and
# with 4 nodes. Each run ends "N passed, M failed"; this script exits 0 only
# when every run passed, and prints how long each VM took.
#
#   scripts/numa-check.sh [--build-dir DIR | --binary PATH] [--nodes "2 4"] [--timeout SEC] [--filter SUBSTRING] [--exclude SUBSTRING] [--prepare] [--skip-unavailable]
#
# --binary runs an already built canopy_numa_check (ctest does, when
# configured with -DCANOPY_NUMA_VM_TESTS=ON) instead of building one.
# --prepare runs `numavm --prepare` first (downloads the guest kernel once).
# --skip-unavailable (what `make numa-check` uses): numavm missing, or
# `numavm --prepare` failing, is a skip ("numa-check: skipped: <why>",
# exit 0) instead of an error; but when CI is set (not empty, 0 or false)
# and numavm is there, a failing --prepare is a failure that says so, so
# that CI cannot pass without the multi-node checks having run.
# A VM that does not start (numavm exit 125: qemu's log and the guest
# console are printed above the summary) or times out is always a failure.
# Environment: NUMAVM (path of numavm; default ../shared/tools/numavm/numavm
# next to the repository), NUMAVM_CACHE (as numavm), JOBS (build jobs, 2), CI.
# Exit: 0 all passed (or skipped, see above); 1 a check failed, a VM failed,
# or --prepare failed with CI set; 2 bad usage, numavm or its cache missing,
# or the build failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$root/build-numa-check
node_counts="2 4"
timeout=600
filter=""
exclude=""
binary=""
prepare=0
skip_unavailable=0
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir) build_dir=$(realpath -m "$2"); shift 2 ;;
    --binary) binary=$(realpath -m "$2"); shift 2 ;;
    --nodes) node_counts=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --filter) filter=$2; shift 2 ;;
    --exclude) exclude=$2; shift 2 ;;
    --prepare) prepare=1; shift ;;
    --skip-unavailable) skip_unavailable=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "numa-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in $node_counts; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "numa-check: --nodes '$node_counts': expected node counts such as \"2 4\"" >&2; exit 2; }
done

# CI=true (GitHub Actions, GitLab, ...) or any value but 0 / false.
in_ci=0
case ${CI:-} in "" | 0 | false | FALSE | False) ;; *) in_ci=1 ;; esac

numavm=${NUMAVM:-$root/../shared/tools/numavm/numavm}
if [[ ! -x $numavm ]]; then
  if [[ $skip_unavailable == 1 ]]; then
    echo "numa-check: skipped: numavm not found at $numavm (no multi-node check ran; see ../shared/tools/numavm/README.md)"
    exit 0
  fi
  echo "numa-check: numavm not found at $numavm; set NUMAVM=/path/to/numavm (see ../shared/tools/numavm/README.md)" >&2
  exit 2
fi
if [[ $prepare == 1 ]]; then
  rc=0
  "$numavm" --prepare || rc=$?
  if [[ $rc != 0 ]]; then
    why="numavm --prepare failed (exit $rc; its messages are above): the VMs cannot start (numavm needs qemu and Debian's kernel package; see its README)"
    if [[ $in_ci == 1 ]]; then
      echo "numa-check: FAILED: $why; CI is set ('$CI') and numavm is at $numavm, so the NUMA checks may not be skipped" >&2
      exit 1
    elif [[ $skip_unavailable == 1 ]]; then
      echo "numa-check: skipped: $why"
      exit 0
    fi
    echo "numa-check: $why" >&2
    exit 2
  fi
fi
if [[ $EUID -eq 0 ]]; then cache=${NUMAVM_CACHE:-/var/cache/numavm}
else cache=${NUMAVM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/numavm}; fi
if [[ ! -s $cache/kernel/vmlinux ]]; then
  echo "numa-check: the numavm cache ($cache) has no guest kernel; run once: $numavm --prepare" \
       "(downloads Debian's kernel package with apt-get download, about 70 MB)" >&2
  exit 2
fi

if [[ -n $binary ]]; then
  bin=$binary
  [[ -x $bin ]] || { echo "numa-check: --binary $bin is not an executable" >&2; exit 2; }
else
  bin=$build_dir/bin/canopy_numa_check
  if [[ ! -f $build_dir/CMakeCache.txt ]]; then
    cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCANOPY_BUILD_BENCH=OFF >/dev/null ||
      { echo "numa-check: cmake configure of $build_dir failed" >&2; exit 2; }
  fi
  cmake --build "$build_dir" --target canopy_numa_check -j "${JOBS:-2}" >/dev/null ||
    { echo "numa-check: building canopy_numa_check in $build_dir failed" >&2; exit 2; }
fi

status=0
total_start=$(date +%s%N)
for n in $node_counts; do
  start=$(date +%s%N)
  args=(--nodes "$n")
  [[ -n $filter ]] && args+=(--filter "$filter")
  [[ -n $exclude ]] && args+=(--exclude "$exclude")
  echo "== $n NUMA nodes =="
  # numa_balancing off: the kernel must not move first-touch pages while a
  # check looks at them. 256 MiB per node is plenty for the checks.
  rc=0
  "$numavm" -n "$n" -c 2 -m 256M --timeout "$timeout" --kernel-args numa_balancing=disable -s "$root" \
    -- "$bin" "${args[@]}" || rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  secs=$(printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)))
  case $rc in
    0) echo "== $n nodes: passed ($secs s) ==" ;;
    124) echo "== $n nodes: the VM timed out after $timeout s ==" ; status=1 ;;
    125) echo "== $n nodes: FAILED: the VM did not start or numavm failed (exit 125; qemu's log and the guest console are above) ==" ; status=1 ;;
    *) echo "== $n nodes: FAILED (exit $rc) ==" ; status=1 ;;
  esac
done
ms=$((($(date +%s%N) - total_start) / 1000000))
echo "numa-check: $([[ $status == 0 ]] && echo passed || echo FAILED) on node counts: $node_counts ($((ms / 1000)) s in all)"
exit $status
