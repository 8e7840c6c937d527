#!/usr/bin/env python3
"""Compares OpenMP runtimes on the clang-compiled EPCC-style overheads
(canopy_bench_omp_kmp_epcc): the system libomp and any number of builds of
canopy's runtime (e.g. main before and after a change), run in interleaved
rounds (round r runs every runtime at every thread count before round r+1),
medians of the rounds and ratios to libomp. run.py --abi kmp compares one
canopy with libomp and checks issue 12's bars; this is for a change's
before/after in the same run.

    python3 bench/omp/epcc_compare.py --bin build/bin --rounds 5 --threads 1,2 \\
        before=/path/to/old/build/lib/canopy-omp after=build/lib/canopy-omp

Each NAME=DIR names a directory holding canopy's libomp.so.5. Every run is
`epcc -t T -r 1 -w 1` (one warm-up run per construct): about 2 s at 1-2
threads, 4 s at 8 and more when oversubscribed.
"""
import argparse
import collections
import os
import re
import statistics
import subprocess
import sys


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import runtime_dirs  # noqa: E402  (the system libomp and the canopy builds)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="directory with canopy_bench_omp_kmp_epcc (build/bin)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("libs", nargs="+", metavar="NAME=DIR", help="a canopy build's lib/canopy-omp directory")
    args = ap.parse_args()
    prog = os.path.join(args.bin, "canopy_bench_omp_kmp_epcc")
    if not os.access(prog, os.X_OK):
        raise SystemExit(f"epcc_compare.py: {prog} not found (clang-14 and libomp-dev needed at configure time)")
    threads = [t for t in args.threads.split(",") if t]
    if not threads or not all(t.isdigit() and int(t) > 0 for t in threads):
        raise SystemExit(f"epcc_compare.py: --threads '{args.threads}': expected positive whole numbers, comma separated")
    libs = runtime_dirs("epcc_compare.py", args.libs)
    times = collections.defaultdict(list)  # (construct, threads, runtime) -> µs per construct
    for _ in range(args.rounds):
        for t in threads:
            for name, d in libs.items():
                env = dict(os.environ, LD_LIBRARY_PATH=d)
                run = subprocess.run([prog, "-t", t, "-r", "1", "-w", "1"], env=env, capture_output=True, text=True)
                if run.returncode != 0:
                    sys.exit(f"epcc_compare.py: {name}, {t} threads: exit {run.returncode}: {run.stderr.strip()}")
                for m in re.finditer(r"bench=epcc-(\S+) .*seconds=(\S+) count=(\d+)", run.stdout):
                    times[(m[1], t, name)].append(float(m[2]) / int(m[3]) * 1e6)
    names = list(libs)
    print("| construct | threads | " + " | ".join(f"{n} µs" for n in names) + " | " +
          " | ".join(f"{n} / libomp" for n in names[1:]) + " |")
    print("|" + "---|" * (2 + 2 * len(names) - 1))
    for c in sorted({k[0] for k in times}):
        for t in threads:
            med = [statistics.median(times[(c, t, n)]) for n in names]
            ratios = [f"{m / med[0]:.2f}x" if med[0] > 0 else "-" for m in med[1:]]
            print(f"| {c} | {t} | " + " | ".join(f"{m:.3g}" for m in med) + " | " + " | ".join(ratios) + " |")
    print(f"{args.rounds} interleaved rounds, medians; overhead per construct beyond its work (epcc.c)")


if __name__ == "__main__":
    main()
