#!/bin/sh
# Runs epcc on libgomp, LLVM's libomp (through its libgomp.so.1 compatibility)
# and canopy, interleaved, ROUNDS times per thread count; prints the medians.
# Usage: bench/omp/run.sh BUILD_DIR [ROUNDS] [REPS]
set -e
build=${1:-build}; rounds=${2:-5}; reps=${3:-2000}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
gcc -O2 -fopenmp -o "$tmp/epcc" "$here/epcc.c"
mkdir -p "$tmp/libomp"
ln -sf /usr/lib/llvm-14/lib/libomp.so "$tmp/libomp/libgomp.so.1"
canopy=$(cd "$build/lib/canopy-omp" && pwd)
gnu=$(dirname "$(gcc -print-file-name=libgomp.so.1)")
for nt in 1 2 4 8 16; do
  for r in $(seq "$rounds"); do
    for rt in libgomp libomp canopy; do
      case $rt in libgomp) dir=$gnu ;; libomp) dir=$tmp/libomp ;; canopy) dir=$canopy ;; esac
      echo "$nt $rt $(LD_LIBRARY_PATH=$dir "$tmp/epcc" "$nt" "$reps")"
    done
  done
done > "$tmp/raw"
python3 - "$tmp/raw" <<'PY'
import sys, statistics, collections
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.split()
    d[(int(f[0]), f[1])].append((float(f[3]), float(f[5]), float(f[7])))
print("threads runtime   barrier_us parallel_us for_us (medians)")
for (nt, rt), v in sorted(d.items()):
    print("%7d %-9s %10.2f %11.2f %7.2f" % (nt, rt, *[statistics.median(x[i] for x in v) for i in range(3)]))
PY
rm -rf "$tmp"
