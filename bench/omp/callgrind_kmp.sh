#!/usr/bin/env bash
# bench/omp/callgrind_kmp.sh: instructions per one-thread parallel region,
# per barrier, per task, per static and dynamic loop (nowait) and per single
# of a clang-compiled program (kmp_overhead.c), on canopy's
# runtime and on the system libomp, counted by callgrind (stable on a noisy
# machine): each count is (instructions at 2N - instructions at N) / N.
#
#   bench/omp/callgrind_kmp.sh [BUILD_DIR]     (default: build)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=$(realpath -m "${1:-$root/build}")
command -v valgrind >/dev/null || { echo "callgrind_kmp: valgrind not installed" >&2; exit 2; }
[[ -e $build/lib/canopy-omp/libomp.so.5 ]] || { echo "callgrind_kmp: build canopy_omp in $build first" >&2; exit 2; }
prog=$build/bin/canopy_bench_omp_kmp_overhead  # bench/omp/kmp_overhead.c, built by clang-14 (bench/omp/CMakeLists.txt)
[[ -x $prog ]] || { echo "callgrind_kmp: build canopy_bench_omp_kmp_overhead_build in $build first (needs clang-14)" >&2; exit 2; }
source "$root/bench/omp/callgrind_lib.sh"
count() { callgrind_instructions "$1" "$build" "$prog" "$3" "$2"; }  # runtime what n
n=1000
per() { echo $((($(count "$1" "$2" $((2 * n))) - $(count "$1" "$2" $n)) / n)); }
printf '%-8s %18s %12s %12s %12s %12s %12s\n' runtime "parallel region" barrier task "static for" "dynamic for" single
for rt in canopy libomp; do
  printf '%-8s %18d %12d %12d %12d %12d %12d\n' "$rt" "$(per $rt 0)" "$(per $rt 1)" "$(per $rt 2)" "$(per $rt 3)" \
    "$(per $rt 4)" "$(per $rt 5)"
done
