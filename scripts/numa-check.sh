#!/usr/bin/env bash
# scripts/numa-check.sh: proves canopy's NUMA behaviour on a kernel with
# several NUMA nodes. Builds canopy_numa_check (tests/numa) if needed, then
# runs it inside throw-away QEMU VMs (../shared/tools/numavm) with 2 and
# with 4 nodes. Each run ends "N passed, M failed"; this script exits 0 only
# when every run passed, and prints how long each VM took.
#
#   scripts/numa-check.sh [--build-dir DIR | --binary PATH] [--nodes "2 4"] [--timeout SEC] [--filter SUBSTRING] [--exclude SUBSTRING]
#
# --binary runs an already built canopy_numa_check (ctest does, when
# configured with -DCANOPY_NUMA_VM_TESTS=ON) instead of building one.
# Environment: NUMAVM (path of numavm; default ../shared/tools/numavm/numavm
# next to the repository), NUMAVM_CACHE (as numavm), JOBS (build jobs, 2).
# Exit: 0 all passed; 1 a check failed or a VM failed; 2 bad usage, numavm or
# its cache missing, or the build failed.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$root/build-numa-check
node_counts="2 4"
timeout=600
filter=""
exclude=""
binary=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir) build_dir=$(realpath -m "$2"); shift 2 ;;
    --binary) binary=$(realpath -m "$2"); shift 2 ;;
    --nodes) node_counts=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --filter) filter=$2; shift 2 ;;
    --exclude) exclude=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "numa-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in $node_counts; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "numa-check: --nodes '$node_counts': expected node counts such as \"2 4\"" >&2; exit 2; }
done

numavm=${NUMAVM:-$root/../shared/tools/numavm/numavm}
if [[ ! -x $numavm ]]; then
  echo "numa-check: numavm not found at $numavm; set NUMAVM=/path/to/numavm (see ../shared/tools/numavm/README.md)" >&2
  exit 2
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
    125) echo "== $n nodes: numavm or the VM failed (exit 125) ==" ; status=1 ;;
    *) echo "== $n nodes: FAILED (exit $rc) ==" ; status=1 ;;
  esac
done
ms=$((($(date +%s%N) - total_start) / 1000000))
echo "numa-check: $([[ $status == 0 ]] && echo passed || echo FAILED) on node counts: $node_counts ($((ms / 1000)) s in all)"
exit $status
