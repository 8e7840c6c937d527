#!/usr/bin/env python3
"""Runs the runtime benchmarks (bench/runtime) and prints tables of medians.

    python3 bench/runtime/run.py --bin build/bin [--rounds 5] [--threads 1,2]
                                 [--callgrind] [--smoke] [--markdown]

Competitors run interleaved (round 1 of every program, then round 2, ...),
so that a change in the machine's load hits them all alike; each table
gives the median over the rounds and the ratio of each peer to canopy from
the same run. On a shared machine, a program run during which other
processes used more than --max-others of the CPUs is run again (up to 20
times, waiting for a quieter moment in between). --callgrind also counts instructions per task on one thread
(valgrind --tool=callgrind: total instructions of a run minus those of a
run with almost no tasks, divided by the difference in tasks).
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from benchlib import OMP_ENV, add_common_arguments, add_results, binary, built_programs, collect_with_load_report, median, run_quietly, table  # noqa: E402

PROBLEMS = {
    # problem: (competitors, default size, size for --smoke)
    "spawn": (["canopy", "tbb", "gomp", "libomp"], None, 1000),
    "fib": (["canopy-invoke", "canopy-group", "tbb", "gomp", "libomp", "sequential"], None, 15),
    "epcc": (["canopy", "tbb", "gomp", "libomp"], None, 200),
    "jacobi": (["canopy", "tbb", "gomp", "libomp"], None, 64),
    "wake": (["canopy"], None, 5),
}


def collect(args):
    """{(bench, impl, threads): [seconds per unit ...]} over rounds."""
    results = {}
    jobs = []
    for problem, (impls, _, smoke_n) in PROBLEMS.items():
        if args.only and problem not in args.only:
            continue
        for impl, exe in built_programs(args.bin, problem, impls):
            for t in args.threads:
                if impl == "sequential" and t != 1:
                    continue
                if problem == "wake" and t < 2:
                    continue
                cmd = [exe, "-t", str(t), "-r", "1"]
                if args.smoke:
                    cmd += ["-n", str(smoke_n)]
                jobs.append((cmd, OMP_ENV if impl in ("gomp", "libomp") else None))
    args.reruns = 0
    for _ in range(1 if args.smoke else args.rounds):
        for cmd, env in jobs:
            out, reruns = run_quietly(cmd, env, args.max_others, retry=not args.smoke)
            args.reruns += reruns
            add_results(results, out, cmd)
    return results


def fmt(v, scale, digits=3):
    return "-" if v is None else f"{v * scale:.{digits}g}"


def ratio(peer, canopy):
    return "-" if peer is None or canopy is None else f"{peer / canopy:.2f}x"


def report(results, args):
    ts = args.threads
    # Spawn: ns per task.
    rows = []
    for impl in PROBLEMS["spawn"][0]:
        row = [impl]
        for t in ts:
            v = median(results, "spawn", impl, t)
            row += [fmt(v, 1e9), ratio(v, median(results, "spawn", "canopy", t))]
        rows.append(row)
    table("spawn + run of 10^6 empty tasks, ns per task (ratio: peer / canopy)",
          ["impl"] + [x for t in ts for x in (f"{t}T ns", f"{t}T ratio")], rows, args.markdown)
    # fib: seconds, x sequential, speed-up.
    seq = median(results, "fib", "sequential", 1)
    n_tasks = None
    rows = []
    best = median(results, "fib", "canopy-invoke", ts[0])
    for impl in PROBLEMS["fib"][0]:
        row = [impl]
        for t in ts:
            v = median(results, "fib", impl, t)
            secs = None if v is None else v * bench_count(args)
            row += [fmt(secs, 1, 3), ratio(v, median(results, "fib", "canopy-invoke", t))]
        v1 = median(results, "fib", impl, ts[0])
        row.append("-" if v1 is None or seq is None else f"{v1 / seq:.1f}x")
        if len(ts) > 1:
            v2 = median(results, "fib", impl, ts[1])
            row.append("-" if v1 is None or v2 is None else f"{v1 / v2:.2f}")
        rows.append(row)
    head = ["impl"] + [x for t in ts for x in (f"{t}T s", f"{t}T vs invoke")] + [f"{ts[0]}T / seq"]
    if len(ts) > 1:
        head.append(f"speed-up {ts[0]}->{ts[1]}")
    table(f"fib({args.fib_n}) one task per call, seconds (ratio: peer / canopy invoke)", head, rows, args.markdown)
    # EPCC: µs per construct.
    rows = []
    constructs = sorted({b for (b, _, _) in results if b.startswith("epcc-")})
    for c in constructs:
        for impl in PROBLEMS["epcc"][0]:
            row = [c[5:], impl]
            have = False
            for t in ts:
                v = median(results, c, impl, t)
                have |= v is not None
                row += [fmt(v, 1e6)]
            if have:
                rows.append(row)
    table("EPCC-style overheads, µs per construct (canopy: parallel_for and fork-join inside Runtime::run)",
          ["construct", "impl"] + [f"{t}T µs" for t in ts], rows, args.markdown)
    # Jacobi: ms per sweep.
    rows = []
    impls = sorted({i for (b, i, _) in results if b == "jacobi"})
    for impl in impls:
        row = [impl]
        for t in ts:
            v = median(results, "jacobi", impl, t)
            row += [fmt(v, 1e3), ratio(v, median(results, "jacobi", "canopy-affinity", t))]
        rows.append(row)
    table("2D Jacobi 512x512, ms per sweep (ratio: peer / canopy-affinity)",
          ["impl"] + [x for t in ts for x in (f"{t}T ms", f"{t}T ratio")], rows, args.markdown)
    # Wake-up latency of a parked worker.
    rows = [["canopy", fmt(median(results, "wake", "canopy", t), 1e6)] for t in ts if t >= 2]
    if rows and rows[0][1] != "-":
        table("wake-up of a parked worker, µs (median over rounds of the mean of 200 wake-ups)",
              ["impl", "µs"], rows[:1], args.markdown)
    # Idle cost: CPU of the whole process while the runtime has no work.
    rows = [["canopy", t, fmt(median(results, "idle", "canopy", t), 100, 2)] for t in ts if t >= 2]
    if rows and rows[0][2] != "-":
        table("idle runtime: CPU used over 1 s without work, % of one core (all workers together)",
              ["impl", "threads", "% of a core"], rows[:1], args.markdown)


def bench_count(args):
    # fib's results are per task; a run is fib_tasks(n) tasks.
    a, b = 0, 1
    for _ in range(args.fib_n + 1):
        a, b = b, a + b
    return a - 1


def callgrind(args):
    """Instructions per task on 1 thread: (Ir(n) - Ir(n0)) / (tasks(n) - tasks(n0))."""

    def instructions(cmd):
        out_file = "/tmp/canopy-callgrind.out"
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"] + cmd,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, **OMP_ENV))
        m = re.search(r"Collected : (\d+)", p.stderr)
        if not m:
            raise RuntimeError(f"callgrind failed on {' '.join(cmd)}: {p.stderr[-500:]}")
        os.remove(out_file)
        return int(m.group(1))

    def fib_tasks(n):
        a, b = 0, 1
        for _ in range(n + 1):
            a, b = b, a + b
        return a - 1

    rows = []
    for impl in PROBLEMS["spawn"][0]:
        exe = binary(args.bin, "spawn", impl)
        if os.path.exists(exe):
            # -w 1 -r 1: one warm-up and one measured run, so 2 x n tasks.
            big = instructions([exe, "-t", "1", "-w", "1", "-r", "1", "-n", "100000"])
            small = instructions([exe, "-t", "1", "-w", "1", "-r", "1", "-n", "1000"])
            rows.append(["spawn", impl, f"{(big - small) / (2 * 99000):.0f}"])
    for impl in PROBLEMS["fib"][0]:
        exe = binary(args.bin, "fib", impl)
        if os.path.exists(exe):
            big = instructions([exe, "-t", "1", "-w", "1", "-r", "1", "-n", "25"])
            small = instructions([exe, "-t", "1", "-w", "1", "-r", "1", "-n", "10"])
            rows.append(["fib", impl, f"{(big - small) / (2 * (fib_tasks(25) - fib_tasks(10))):.0f}"])
    table("instructions per task, 1 thread (callgrind)", ["bench", "impl", "instr/task"], rows, args.markdown)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(ap, PROBLEMS)
    ap.add_argument("--callgrind", action="store_true", help="also count instructions per task")
    ap.add_argument("--smoke", action="store_true", help="run everything once on tiny sizes (a test)")
    args = ap.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    args.only = [p for p in args.only.split(",") if p]
    args.fib_n = PROBLEMS["fib"][2] if args.smoke else 35
    results = collect_with_load_report(collect, args)
    if args.smoke:
        print(f"smoke: {len(results)} results")
        return 0
    report(results, args)
    if args.callgrind:
        callgrind(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
