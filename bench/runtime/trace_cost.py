#!/usr/bin/env python3
"""What tracing costs (docs/trace.md, "Cost"):

1. Off: instructions per task on 1 thread under callgrind, of the runtime's
   spawn, fib (invoke and TaskGroup), dependent-task (wavefront, empty
   tasks) and task-graph (wavefront replayed as a TaskGraph) benchmarks,
   for two builds: --before (a build without tracing, e.g. main's) and
   --after (this one). The bar: the same within 2 instructions.
2. On: the same counts with CANOPY_TRACE set (collection off while the file
   is written at exit), and the events the trace holds: instructions per
   event = (on - off) / events per task.
3. Slowdown: wall time of fib (invoke, n=27) and the wavefront (empty
   tasks) on 2 threads, tracing off and on, interleaved rounds, the median
   of the per-round ratios.

usage: bench/runtime/trace_cost.py --before /work/main/build/bin --after build/bin [--rounds 7]
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def fib_tasks(n):
    a, b = 0, 1
    for _ in range(n + 1):
        a, b = b, a + b
    return a - 1


# name, binary, (big args, small args), tasks(big) - tasks(small)
WF_N = 64


def cases():
    return [
        ("spawn", "canopy_bench_spawn_canopy", (["-n", "100000"], ["-n", "1000"]), 2 * 99000),
        ("fib invoke", "canopy_bench_fib_canopy_invoke", (["-n", "25"], ["-n", "10"]),
         2 * (fib_tasks(25) - fib_tasks(10))),
        ("fib TaskGroup", "canopy_bench_fib_canopy_group", (["-n", "25"], ["-n", "10"]),
         2 * (fib_tasks(25) - fib_tasks(10))),
        ("wavefront (data flow)", "canopy_bench_wavefront_canopy",
         (["--mode", "empty", "--no-check", "-n", str(WF_N), "-r", "2"],
          ["--mode", "empty", "--no-check", "-n", str(WF_N), "-r", "0"]), 2 * WF_N * WF_N),
        ("wavefront (TaskGraph)", "canopy_bench_wavefront_canopy_graph",
         (["--mode", "empty", "--no-check", "-n", str(WF_N), "-r", "2"],
          ["--mode", "empty", "--no-check", "-n", str(WF_N), "-r", "0"]), 2 * WF_N * WF_N),
    ]


def instructions(cmd, env):
    out_file = tempfile.mktemp(prefix="canopy-trace-cost-")
    p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}",
                        "--toggle-collect=*stop_at_exit*", "--collect-atstart=yes"] + cmd,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=1800)
    if os.path.exists(out_file):
        os.remove(out_file)
    m = re.search(r"Collected : (\d+)", p.stderr)
    if p.returncode != 0 or not m:
        raise RuntimeError(f"callgrind failed on {' '.join(cmd)}: {p.stderr[-800:]}")
    return int(m.group(1))


def trace_events(path):
    with open(path) as f:
        doc = json.load(f)
    return sum(1 for e in doc["traceEvents"] if e["ph"] in ("X", "i"))


def per_task(bindir, exe, args, tasks, trace_dir=None):
    base = [os.path.join(bindir, exe), "-t", "1", "-w", "1"]
    env = dict(os.environ)
    env.pop("CANOPY_TRACE", None)
    counts, events = [], []
    for k, a in enumerate(args):
        e = dict(env)
        if trace_dir:
            path = os.path.join(trace_dir, f"{exe}-{k}.json")
            e.update(CANOPY_TRACE=path, CANOPY_TRACE_BUFFER=str(1 << 24))
        counts.append(instructions(base + a if "-r" in a else base + ["-r", "1"] + a, e))
        if trace_dir:
            events.append(trace_events(path))
    ir = (counts[0] - counts[1]) / tasks
    ev = (events[0] - events[1]) / tasks if trace_dir else 0
    return ir, ev


def wall(cmd, env):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: {p.stderr[-500:]}")
    secs = [float(x) for x in re.findall(r"seconds=([0-9.]+)", p.stdout)]
    return statistics.median(secs)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", help="bin directory of a build without tracing (e.g. main's)")
    ap.add_argument("--after", required=True, help="bin directory of this build")
    ap.add_argument("--rounds", type=int, default=7, help="interleaved rounds of the slowdown (default 7)")
    ap.add_argument("--skip-callgrind", action="store_true")
    ap.add_argument("--skip-slowdown", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_callgrind:
            print("| benchmark | before (instr/task) | after, off | after, on | events/task | instr/event |")
            print("| --- | --- | --- | --- | --- | --- |")
            for name, exe, a, tasks in cases():
                before = per_task(args.before, exe, a, tasks)[0] if args.before else float("nan")
                off = per_task(args.after, exe, a, tasks)[0]
                on, ev = per_task(args.after, exe, a, tasks, trace_dir=tmp)
                per_event = (on - off) / ev if ev > 0 else float("nan")
                print(f"| {name} | {before:.2f} | {off:.2f} | {on:.2f} | {ev:.2f} | {per_event:.1f} |", flush=True)
        if args.skip_slowdown:
            return 0
        print()
        print(f"slowdown with tracing on, 2 threads, median of {args.rounds} interleaved rounds:")
        for name, exe, extra in [("fib invoke n=27", "canopy_bench_fib_canopy_invoke", ["-n", "27"]),
                                 ("fib TaskGroup n=25", "canopy_bench_fib_canopy_group", ["-n", "25"]),
                                 ("wavefront empty 128x128", "canopy_bench_wavefront_canopy",
                                  ["--mode", "empty", "--no-check", "-n", "128"])]:
            cmd = [os.path.join(args.after, exe), "-t", "2", "-w", "1", "-r", "5"] + extra
            ratios = []
            for r in range(args.rounds):
                env = dict(os.environ)
                env.pop("CANOPY_TRACE", None)
                off = wall(cmd, env)
                on = wall(cmd, dict(env, CANOPY_TRACE=os.path.join(tmp, "slow.json"),
                                    CANOPY_TRACE_BUFFER=str(1 << 22)))
                ratios.append(on / off)
            print(f"  {name}: x{statistics.median(ratios):.2f} (rounds: {', '.join(f'{x:.2f}' for x in ratios)})",
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())
