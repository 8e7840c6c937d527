#!/usr/bin/env bash
# scripts/omp-affinity-check.sh: the affinity clause on kernels with 2 and
# 4 NUMA nodes (numavm, one VM at a time under /tmp/numavm.lock). Runs
# bench/omp/affinity_locality.c (a blocked Jacobi and a tiled Cholesky with
# depend + affinity clauses, data block-cyclic over the nodes), built with
# clang, on canopy's runtime (loose and strict) and on the system libomp
# (which ignores the clause), two threads per node bound spread over the
# cores, and prints each run's locality: the share of the bytes the tasks
# wrote that were on the node where they ran. Fails when canopy strict is
# under 95%. Then automatic affinity (CANOPY_AFFINITY=auto, no affinity
# clause, the Jacobi's depend items array sections covering its blocks:
# -DDEPEND_SECTIONS) on canopy's runtime: the written blocks' pages move to
# their writers' nodes (CANOPY_STATS line: pages moved, none left); fails
# when the Jacobi's second half (after the mapping) is under 80% local
# (without the moves: about 1 / nodes).
#
#   scripts/omp-affinity-check.sh [--build-dir DIR] [--nodes "2 4"]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=$root/build
node_counts="2 4"
while [[ $# -gt 0 ]]; do
  case $1 in
    --build-dir) build_dir=$(realpath -m "$2"); shift 2 ;;
    --nodes) node_counts=$2; shift 2 ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "omp-affinity-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
numavm=${NUMAVM:-$root/../shared/tools/numavm/numavm}
[[ -x $numavm ]] || { echo "omp-affinity-check: skipped: numavm not found at $numavm"; exit 0; }
clang=$(command -v clang-14 || command -v clang || true)
[[ -n $clang ]] || { echo "omp-affinity-check: skipped: no clang"; exit 0; }
lib=$build_dir/lib/canopy-omp
[[ -e $lib/libomp.so.5 ]] || { echo "omp-affinity-check: $lib/libomp.so.5 missing: build canopy_omp first" >&2; exit 2; }
prog=$build_dir/bench/omp/affinity_locality
mkdir -p "$(dirname "$prog")"
"$clang" -fopenmp -O2 "$root/bench/omp/affinity_locality.c" -o "$prog" -lm
sections=${prog}_sections
"$clang" -fopenmp -O2 -DDEPEND_SECTIONS "$root/bench/omp/affinity_locality.c" -o "$sections" -lm
status=0
for n in $node_counts; do
  threads=$((2 * n))
  guest="cd $root;
    export OMP_NUM_THREADS=$threads OMP_PROC_BIND=spread OMP_PLACES=cores;
    echo \"canopy loose:  \$(LD_LIBRARY_PATH=$lib $prog)\";
    echo \"canopy strict: \$(LD_LIBRARY_PATH=$lib CANOPY_OMP_AFFINITY=strict $prog)\";
    echo \"libomp:        \$($prog)\";
    echo \"canopy auto:   \$(LD_LIBRARY_PATH=$lib CANOPY_AFFINITY=auto CANOPY_STATS=1 $sections 3 2>&1)\""
  echo "== $n NUMA nodes, $threads threads =="
  out=$(flock /tmp/numavm.lock "$numavm" -n "$n" -c 2 -m 256M --timeout 600 --kernel-args numa_balancing=disable \
        -s "$root" -- sh -c "$guest") || { echo "$out"; echo "omp-affinity-check: the VM failed" >&2; exit 1; }
  echo "$out"
  strict=$(echo "$out" | sed -n 's/^canopy strict: locality jacobi \([0-9.]*\)% .*cholesky \([0-9.]*\)%.*/\1 \2/p')
  for v in $strict; do
    awk -v v="$v" 'BEGIN { exit !(v >= 95) }' || { echo "omp-affinity-check: canopy strict locality $v% < 95%" >&2; status=1; }
  done
  [[ -n $strict ]] || { echo "omp-affinity-check: no strict result" >&2; status=1; }
  late=$(echo "$out" | sed -n 's/^.*locality jacobi [0-9.]*% (second half \([0-9.]*\)%).*/\1/p' | tail -1)
  echo "$out" | grep -q "canopy affinity: OpenMP tasks: mapping 1: .* [1-9][0-9]* pages moved, 0 left" ||
    { echo "omp-affinity-check: automatic affinity moved no depend item's pages" >&2; status=1; }
  [[ -n $late ]] && awk -v v="$late" 'BEGIN { exit !(v >= 80) }' ||
    { echo "omp-affinity-check: automatic affinity locality '$late'% < 80% after the mapping" >&2; status=1; }
done
exit $status
