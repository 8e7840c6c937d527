# Sourced by callgrind_kmp.sh and callgrind_programs.sh: the instructions
# callgrind counts in one run of a clang-compiled program at one thread, on
# RUNTIME (canopy: BUILD/lib/canopy-omp's libomp.so.5; libomp: the system's).
# A failing program fails the call, its output on standard error.
#
#   callgrind_instructions RUNTIME BUILD PROGRAM [ARG...]
callgrind_instructions() {
  local rt=$1 build=$2 env=() out
  shift 2
  [[ $rt == canopy ]] && env=(LD_LIBRARY_PATH="$build/lib/canopy-omp")
  out=$(env "${env[@]}" OMP_NUM_THREADS=1 valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null) ||
    { echo "$(basename "$1") failed on $rt:" >&2; echo "$out" >&2; return 1; }
  sed -n 's/.*Collected : \([0-9]*\).*/\1/p' <<<"$out"
}
