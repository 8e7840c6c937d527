#!/usr/bin/env bash
# bench/apps/lu/numa.sh: the blocked LU's locality in throw-away QEMU VMs
# with several NUMA nodes (../shared/tools/numavm, as bench/apps/numa.sh):
# in each VM, bench/apps/lu/run.py --locality --size small on all the VM's
# CPUs, every placement variant. Times inside the VM mean nothing (emulated
# CPUs); the local share of the bytes accessed and the MB migrated are what
# this measures. Runs the VMs under the numavm lock (/tmp/numavm.lock).
#
#   bench/apps/lu/numa.sh [--bin DIR] [--nodes "2 4"] [--cpus-per-node 2] [--rounds 1] [--markdown]
#
# Exit: 0 when every VM ran and every check passed; 1 otherwise; 2 bad usage.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
bin=$root/build/bin
node_counts="2 4"
cpus=2
rounds=1
markdown=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --bin) bin=$(realpath -m "$2"); shift 2 ;;
    --nodes) node_counts=$2; shift 2 ;;
    --cpus-per-node) cpus=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --markdown) markdown=--markdown; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "bench/apps/lu/numa.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for n in $node_counts $cpus $rounds; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "bench/apps/lu/numa.sh: '$n': expected a positive whole number" >&2; exit 2; }
done
numavm=${NUMAVM:-$root/../shared/tools/numavm/numavm}
[[ -x $numavm ]] || numavm=/work/shared/tools/numavm/numavm
[[ -x $numavm ]] || { echo "bench/apps/lu/numa.sh: numavm not found (set NUMAVM)" >&2; exit 2; }
[[ -x $bin/canopy_bench_lu_canopy ]] || { echo "bench/apps/lu/numa.sh: no canopy_bench_lu_canopy in $bin" >&2; exit 2; }

status=0
for n in $node_counts; do
  echo "== $n NUMA nodes x $cpus CPUs (numavm, numa_balancing=disable)"
  start=$(date +%s)
  rc=0
  (cd "$root" && flock /tmp/numavm.lock "$numavm" --nodes "$n" --cpus-per-node "$cpus" --mem-per-node 512M \
     --timeout 1800 --kernel-args numa_balancing=disable -- \
     python3 bench/apps/lu/run.py --bin "$bin" --size small --locality --rounds "$rounds" --max-others 1 \
       --threads $((n * cpus)) $markdown) || rc=$?
  echo "== $n nodes: exit $rc, $(($(date +%s) - start)) s"
  [[ $rc == 0 ]] || status=1
done
exit $status
