#!/usr/bin/env bash
# Short libFuzzer run of canopy's parsers (part of `make test` and CI).
# Builds the fuzz targets with clang + libFuzzer + ASan/UBSan in build-fuzz
# (FUZZ_BUILD_DIR overrides; -O1 with line tables, libFuzzer's advice), runs
# them all at once, each for FUZZ_SECONDS (default 30) with -max_len=4096 on
# a fresh copy of its seed corpus fuzz/seeds/<target>/, and
# exits non-zero when any of them finds a crash; the reproducer is left in
# <build dir>/findings/<target>/ (replay: <build dir>/bin/<target> FILE).
# FUZZ_TARGETS (default "fuzz_matrix fuzz_synthetic fuzz_omp_env") picks the targets.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-30}
JOBS=${FUZZ_JOBS:-$(nproc)}
read -r -a TARGETS <<<"${FUZZ_TARGETS:-fuzz_matrix fuzz_synthetic fuzz_omp_env}"
# Leaks inside libhwloc itself are not canopy's (see fuzz/lsan.supp).
export LSAN_OPTIONS="suppressions=$PWD/fuzz/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ not found (scripts/setup.sh installs it)" >&2
  exit 1
fi
CC=clang CXX=clang++ cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  '-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG' '-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG' \
  -DCANOPY_BUILD_FUZZ=ON -DCANOPY_BUILD_TESTS=OFF -DCANOPY_BUILD_BENCH=OFF >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS" --target "${TARGETS[@]}"

# One target's run; its exit status is the fuzzer's.
fuzz_one() {
  local t=$1 corpus="$BUILD_DIR/corpus/$1" findings="$BUILD_DIR/findings/$1"
  rm -rf "$corpus" "$findings"
  mkdir -p "$corpus" "$findings"
  cp fuzz/seeds/"$t"/* "$corpus"/
  local dict=()
  if [ -f "fuzz/$t.dict" ]; then dict=("-dict=fuzz/$t.dict"); fi
  "$BUILD_DIR/bin/$t" "${dict[@]}" -max_total_time="$SECONDS_EACH" -max_len=4096 -timeout=20 \
    -rss_limit_mb=2048 -artifact_prefix="$findings/" -print_final_stats=1 "$corpus" >"$BUILD_DIR/$t.log" 2>&1
}
# All at once (CI's time: the fuzzers share the cores instead of queueing).
declare -A pids
for t in "${TARGETS[@]}"; do
  echo "fuzz.sh: running $t for ${SECONDS_EACH}s"
  fuzz_one "$t" &
  pids[$t]=$!
done
status=0
for t in "${TARGETS[@]}"; do
  findings="$BUILD_DIR/findings/$t"
  if wait "${pids[$t]}"; then
    echo "fuzz.sh: $t: $(grep -E "^stat::number_of_executed_units" "$BUILD_DIR/$t.log" || echo "no stats")"
  else
    echo "fuzz.sh: $t FOUND A PROBLEM; reproducer(s): $(ls "$findings")" >&2
    grep -E "ERROR|SUMMARY|runtime error|invariant|terminate|==[0-9]+==" "$BUILD_DIR/$t.log" | head -20 >&2 || true
    echo "fuzz.sh: full log in $BUILD_DIR/$t.log" >&2
    status=1
  fi
done
exit $status
