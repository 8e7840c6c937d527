#!/usr/bin/env bash
# bench/omp/callgrind_programs.sh: instructions per run of each clang-compiled
# task program (bench/omp/*.c built by clang-14) at one thread, on canopy's
# runtime and on the system libomp, counted by callgrind. A stable figure
# where the machine is too noisy to time a 10% difference: each count is
# (instructions with -r 2) - (instructions with -r 1), both after one warm-up
# run, so start-up (canopy loads the topology, libomp does less) and the
# first run's allocations are left out; what remains is one run and its
# check, the same program code on both runtimes.
#
#   bench/omp/callgrind_programs.sh [-h] [-n SIZE] [BUILD_DIR] [PROGRAM...]
#
# PROGRAM: fib nqueens mergesort sparselu strassen uts wavefront cholesky
# (default: all, at their default sizes; -n SIZE sets every program's size).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
all=(fib nqueens mergesort sparselu strassen uts wavefront cholesky)
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"
  exit 0
fi
size=()
if [[ ${1:-} == -n ]]; then
  [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "callgrind_programs: -n needs a positive size, got '${2:-}'" >&2; exit 2; }
  size=(-n "$2")
  shift 2
fi
build=$(realpath -m "$root/build")
if [[ $# -gt 0 && -d $1 ]]; then
  build=$(realpath -m "$1")
  shift
fi
programs=("$@")
[[ ${#programs[@]} -gt 0 ]] || programs=("${all[@]}")
for p in "${programs[@]}"; do
  [[ " ${all[*]} " == *" $p "* ]] || { echo "callgrind_programs: unknown program '$p' (expected one of: ${all[*]})" >&2; exit 2; }
  [[ -x $build/bin/canopy_bench_omp_kmp_$p ]] ||
    { echo "callgrind_programs: $build/bin/canopy_bench_omp_kmp_$p is not built (needs clang-14)" >&2; exit 2; }
done
command -v valgrind >/dev/null || { echo "callgrind_programs: valgrind not installed" >&2; exit 2; }
[[ -e $build/lib/canopy-omp/libomp.so.5 ]] || { echo "callgrind_programs: build canopy_omp in $build first" >&2; exit 2; }

source "$root/bench/omp/callgrind_lib.sh"
count() { callgrind_instructions "$1" "$build" "$build/bin/canopy_bench_omp_kmp_$2" -t 1 -w 1 -r "$3" "${size[@]}"; }
per_run() { echo $(($(count "$1" "$2" 2) - $(count "$1" "$2" 1))); }

printf '%-10s %16s %16s %14s %8s\n' program "libomp instr" "canopy instr" "difference" ratio
for p in "${programs[@]}"; do
  lib=$(per_run libomp "$p")
  can=$(per_run canopy "$p")
  printf '%-10s %16d %16d %14d %8s\n' "$p" "$lib" "$can" $((can - lib)) "$(awk -v a="$can" -v b="$lib" 'BEGIN{printf "%.4f", a/b}')"
done
