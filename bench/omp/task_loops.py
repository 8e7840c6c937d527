#!/usr/bin/env python3
"""Runs bench/omp/task_loops.c (compiled here by clang-14 -fopenmp -O2) at
2 threads on the system libomp and on any number of canopy builds, in
interleaved rounds (each round runs every shape on every runtime once, one
run of TASKS tasks per process), and prints per shape and runtime the
median ns per task, the ratio to libomp in the same rounds, and for
`master` the median share of the tasks the second thread ran. A faster
figure than epcc's for these three shapes, and one that shows which regime
a producer/consumer run was in.

    python3 bench/omp/task_loops.py --rounds 8 \\
        before=/path/to/old/build/lib/canopy-omp after=build/lib/canopy-omp

Each NAME=DIR names a directory holding canopy's libomp.so.5. About 0.1-0.5 s
per run.
"""
import argparse
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import runtime_dirs  # noqa: E402  (the system libomp and the canopy builds)

SHAPES = ("master", "taskwait", "depend")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--tasks", type=int, default=200000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("libs", nargs="+", metavar="NAME=DIR", help="a canopy build's lib/canopy-omp directory")
    args = ap.parse_args()
    if args.rounds < 1 or args.tasks < 10 or args.threads < 1:
        raise SystemExit("task_loops.py: --rounds and --threads must be >= 1, --tasks >= 10")
    libs = runtime_dirs("task_loops.py", args.libs)
    tmp = libs["libomp"]
    prog = os.path.join(tmp, "task_loops")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "task_loops.c")
    subprocess.run(["clang-14", "-std=c11", "-O2", "-fopenmp", src, "-o", prog], check=True)
    ns = {(s, n): [] for s in SHAPES for n in libs}
    share = {n: [] for n in libs}
    base_env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OMP_PROC_BIND="close", OMP_PLACES="cores")
    for _ in range(args.rounds):
        for shape in SHAPES:
            for name, d in libs.items():
                env = dict(base_env, LD_LIBRARY_PATH=d)
                out = subprocess.run([prog, shape, str(args.tasks), "1"], env=env, capture_output=True, text=True)
                if out.returncode != 0:
                    raise SystemExit(f"task_loops.py: {shape} on {name} failed: {out.stderr.strip()}")
                _, t, by1 = out.stdout.split()
                ns[(shape, name)].append(float(t))
                if shape == "master":
                    share[name].append(float(by1.split("=")[1]))
    print(f"| shape | runtime | ns per task | / libomp | master: tasks run by thread 1 |")
    print("|---|---|---|---|---|")
    for shape in SHAPES:
        ref = statistics.median(ns[(shape, "libomp")])
        for name in libs:
            m = statistics.median(ns[(shape, name)])
            sh = f"{statistics.median(share[name]):.2f}" if shape == "master" else "-"
            print(f"| {shape} | {name} | {m:.0f} | {m / ref:.2f}x | {sh} |")
    print(f"{args.rounds} interleaved rounds at {args.threads} threads, {args.tasks} tasks per run, medians")


if __name__ == "__main__":
    main()
