#!/usr/bin/env python3
"""Runs the data-flow benchmarks (bench/dataflow) and prints tables of medians.

    python3 bench/dataflow/run.py --bin build/bin [--rounds 5] [--threads 1,2]
                                  [--only wavefront,cholesky,stream,jacobi2d]
                                  [--jacobi-blocks 32,256,1024]
                                  [--callgrind] [--smoke] [--markdown]

Every competitor is a separate program (canopy_bench_<problem>_<impl>); they
run interleaved (round 1 of every program, then round 2, ...), so that a
change in the machine's load hits them all alike, and each table gives the
median over the rounds and the ratio of each competitor to the best peer
(the best non-canopy, non-sequential competitor) from the same run. On a
shared machine, a program run during which other processes used more than
--max-others of the CPUs is run again (up to 20 times, waiting for a quieter
moment in between), as bench/runtime/run.py does.

The busy wavefront's delay is calibrated once (the sequential program's
--calibrate) and passed to every program (--spin), so that all do the same
work; efficiency = sequential time / (threads x time).

The Jacobi programs with tasks (gomp-depend, libomp-depend, canopy) run at
every row-block count of --jacobi-blocks, and each appears once per count
("canopy 1024b"): how fine the blocks must be for a runtime to gain from
running the blocks of later sweeps while their rows are still in cache is
the runtime's business, so every peer is compared at each count and the
best peer is the best of all of them. The `-for` versions do not use blocks
(one per thread) and appear once.

--callgrind counts instructions per dependent task of the empty-task
wavefront on 1 thread (valgrind --tool=callgrind): the instructions of a
program doing 3 wavefronts minus those of the same program doing 1, divided
by 2 x the tasks of one wavefront, so that start-up and the registration of
the data handles (which grows with the grid too) cancel out.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from benchlib import OMP_ENV, add_common_arguments, add_results, binary, built_programs, collect_with_load_report, median, run, run_quietly, table  # noqa: E402

# problem: programs (impl part of the binary name); a program may print
# several competitors (tbb and tbb-prebuilt, gomp-for and gomp-depend).
PROBLEMS = {
    "wavefront": ["sequential", "gomp", "libomp", "starpu", "tbb", "tbb-prebuilt", "canopy", "canopy-graph"],
    "cholesky": ["sequential", "gomp", "libomp", "starpu", "openblas", "canopy"],
    "stream": ["gomp"],
    "jacobi2d": ["gomp", "libomp", "canopy"],
}
NOT_PEERS = ("canopy", "sequential")


def env_for(impl, threads, args):
    env = {}
    if impl.startswith(("gomp", "libomp")):
        env.update(OMP_ENV)
    if impl.startswith("starpu"):
        env.update({"STARPU_NCPU": str(threads), "STARPU_SCHED": args.starpu_sched, "STARPU_SILENT": "1",
                    "STARPU_NCUDA": "0", "STARPU_NOPENCL": "0"})
    # OpenBLAS (pthreads build): -t threads for the whole-matrix dpotrf, one
    # for the task kernels (so that its thread pool is not even started).
    env["OPENBLAS_NUM_THREADS"] = str(threads) if impl == "openblas" else "1"
    return env


def calibrate(args):
    """Iterations of the ~500 ns delay, from the sequential wavefront (None: each program calibrates)."""
    exe = binary(args.bin, "wavefront", "sequential")
    if not os.path.exists(exe):
        return None
    m = re.search(r"CALIBRATE iterations=(\d+) seconds=(\S+)", run([exe, "--calibrate"]))
    if not m:
        raise RuntimeError(f"{exe} --calibrate printed no CALIBRATE line")
    args.delay_seconds = float(m.group(2))
    return int(m.group(1))


def jobs_for(args):
    spin = calibrate(args) if "wavefront" in args.only else None
    jobs = []
    for problem, impls in PROBLEMS.items():
        if problem not in args.only:
            continue
        for impl, exe in built_programs(args.bin, problem, impls):
            for t in args.threads:
                if impl == "sequential" and t != 1:
                    continue
                cmd = [exe, "-t", str(t), "-r", "1"]
                if args.smoke:
                    cmd += ["--smoke", "-w", "1"]
                if problem == "wavefront" and spin is not None:
                    cmd += ["--spin", str(spin)]
                if problem == "cholesky" and args.tile:
                    cmd += ["--tile", str(args.tile)]
                if problem == "jacobi2d" and not args.smoke:
                    for b in args.jacobi_blocks:
                        jobs.append((cmd + ["--blocks", str(b)], env_for(impl, t, args)))
                    continue
                jobs.append((cmd, env_for(impl, t, args)))
    return jobs


def jacobi_by_blocks(out, cmd, first_blocks):
    """A Jacobi program's RESULT lines with the block count in the task versions' names.

    `-for` versions do not depend on --blocks: kept from the first count's run only.
    """
    if "--blocks" not in cmd:
        return out
    blocks = cmd[cmd.index("--blocks") + 1]
    lines = []
    for line in out.splitlines():
        m = re.search(r"impl=(\S+)", line)
        if line.startswith("RESULT") and m:
            if m.group(1).endswith("-for"):
                if blocks != str(first_blocks):
                    continue
            else:
                line = line.replace(m.group(0), f"impl={m.group(1)}-{blocks}b")
        lines.append(line)
    return "\n".join(lines)


def collect(args):
    """{(bench, impl, threads): [seconds per unit ...]} over rounds."""
    results = {}
    jobs = jobs_for(args)
    args.reruns = 0
    args.failures = []

    def failed(e):
        args.failures.append(str(e))
        print(f"FAILED: {e}", file=sys.stderr)
    for _ in range(1 if args.smoke else args.rounds):
        for cmd, env in jobs:
            # A wrong result (or a crash) voids that program's run: a test
            # fails at once; a measurement reports it and goes on.
            out, reruns = run_quietly(cmd, env, args.max_others, retry=not args.smoke,
                                      on_failure=None if args.smoke else failed)
            args.reruns += reruns
            if out:
                add_results(results, jacobi_by_blocks(out, cmd, args.jacobi_blocks[0]), cmd)
    return results


def impls_of(results, bench):
    """Competitors of a bench in a stable order: peers, then canopy ones, sequential last."""
    names = {i for (b, i, _) in results if b == bench}

    def blocks(i):  # "canopy-1024b" -> 1024 (Jacobi), else 0
        m = re.search(r"-(\d+)b$", i)
        return int(m.group(1)) if m else 0
    return sorted(names, key=lambda i: (i.startswith("canopy"), i == "sequential", re.sub(r"-\d+b$", "", i),
                                        blocks(i)))


def is_peer(impl):
    return not impl.startswith(NOT_PEERS)


def fmt(v, digits=3):
    """Three significant digits, without exponents (1330, 45.2, 0.529)."""
    if v is None:
        return "-"
    return f"{v:.0f}" if abs(v) >= 10 ** (digits - 1) else f"{v:.{digits}g}"


def best_peer(results, bench, t, lower_is_better=True):
    vals = [(median(results, bench, i, t), i) for i in impls_of(results, bench) if is_peer(i)]
    vals = [(v, i) for v, i in vals if v is not None]
    if not vals:
        return None, None
    # Medians are seconds per unit: the best is the smallest either way.
    return min(vals)


def per_unit_table(results, args, bench, title, scale, unit, rate=False, extra=None):
    """One row per competitor: value at each thread count and its ratio to the best peer.

    scale turns seconds per unit into the figure shown (ns per task: 1e9; rates: 1/(v*scale)).
    """
    ts = args.threads
    rows = []
    for impl in impls_of(results, bench):
        row = [impl]
        for t in ts:
            v = median(results, bench, impl, t)
            best, _ = best_peer(results, bench, t)
            shown = None if v is None else (1.0 / (v * scale) if rate else v * scale)
            # ratio > 1 means better than the best peer for rates, worse for times; say it as speed.
            ratio = "-" if v is None or best is None or impl == "sequential" else f"{best / v:.2f}"
            row += [fmt(shown), ratio]
            if extra:
                row.append(extra(impl, t, v))
        rows.append(row)
    head = ["impl"]
    for t in ts:
        head += [f"{t}T {unit}", f"{t}T vs best peer"]
        if extra:
            head.append(f"{t}T {extra.__doc__}")
    table(title + " (vs best peer: the best peer's time / this one's, >1 = faster)", head, rows, args.markdown)


def report(results, args):
    if "wavefront" in args.only:
        per_unit_table(results, args, "wavefront-empty",
                       "wavefront 256x256 tiles, empty tasks: ns per dependent task", 1e9, "ns")
        seq = median(results, "wavefront-busy", "sequential", 1)

        def eff(impl, t, v):
            """efficiency"""
            return "-" if v is None or seq is None else f"{seq / (t * v) * 100:.0f}%"

        per_unit_table(results, args, "wavefront-busy",
                       "wavefront 256x256 tiles, ~500 ns tasks: ns per task, efficiency = sequential / (threads x time)",
                       1e9, "ns", extra=eff)
    if "cholesky" in args.only:
        per_unit_table(results, args, "cholesky", f"tiled Cholesky {args.chol_desc}: GFLOP/s (n^3/3 / time)",
                       1e9, "GFLOP/s", rate=True)
    if "stream" in args.only or "jacobi2d" in args.only:
        def frac(impl, t, v):
            """of triad"""
            tr = median(results, "triad", "gomp", t)
            return "-" if v is None or tr is None else f"{tr / v * 100:.0f}%"

        per_unit_table(results, args, "triad", "STREAM triad (OpenMP, 3 x 128 MiB): GB/s", 1e9, "GB/s", rate=True)
        per_unit_table(results, args, "jacobi2d",
                       "Jacobi 2D 4096x4096, 20 sweeps, task versions at each row-block count (-<count>b): "
                       "GB/s (16 bytes per point and sweep), "
                       "fraction of triad at the same thread count", 1e9, "GB/s", rate=True, extra=frac)


def callgrind(args):
    """Instructions per dependent task, empty-task wavefront, 1 thread."""
    n = args.callgrind_n

    def instructions(cmd, env):
        out_file = f"/tmp/canopy-df-callgrind-{os.getpid()}.out"
        p = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}"] + cmd,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=dict(os.environ, **env), timeout=1800)
        m = re.search(r"Collected : (\d+)", p.stderr)
        if os.path.exists(out_file):
            os.remove(out_file)
        if p.returncode != 0 or not m:
            raise RuntimeError(f"callgrind failed on {' '.join(cmd)}: {p.stderr[-500:]}")
        return int(m.group(1))

    rows = []
    for impl in PROBLEMS["wavefront"]:
        exe = binary(args.bin, "wavefront", impl)
        if not os.path.exists(exe):
            continue
        base = [exe, "-t", "1", "-w", "1", "--mode", "empty", "--no-check", "-n", str(n)]
        env = env_for(impl, 1, args)
        try:
            one = instructions(base + ["-r", "0"], env)
            three = instructions(base + ["-r", "2"], env)
            rows.append(["wavefront-empty", impl, f"{(three - one) / (2 * n * n):.0f}"])
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            print(f"({impl}: {e})", file=sys.stderr)
            rows.append(["wavefront-empty", impl, "-"])
    table(f"instructions per dependent task, 1 thread (callgrind, {n}x{n} tiles, empty tasks)",
          ["bench", "program", "instr/task"], rows, args.markdown)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(ap, PROBLEMS)
    ap.add_argument("--tile", type=int, default=0, help="Cholesky tile size (default 256)")
    ap.add_argument("--jacobi-blocks", default="32,256,1024",
                    help="row-block counts of the Jacobi task versions, comma separated (default 32,256,1024)")
    ap.add_argument("--starpu-sched", default="lws", help="StarPU scheduler (STARPU_SCHED), default lws")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions per dependent task")
    ap.add_argument("--callgrind-n", type=int, default=128, help="wavefront side for --callgrind (default 128)")
    ap.add_argument("--smoke", action="store_true", help="run everything once on tiny sizes, checked (a test)")
    args = ap.parse_args()
    args.threads = [int(t) for t in args.threads.split(",")]
    bad_blocks = f"--jacobi-blocks: expected positive integers separated by commas, got {args.jacobi_blocks!r}"
    try:
        args.jacobi_blocks = [int(b) for b in args.jacobi_blocks.split(",")]
    except ValueError:
        ap.error(bad_blocks)
    if min(args.jacobi_blocks) < 1:
        ap.error(bad_blocks)
    args.only = [p for p in args.only.split(",") if p] or list(PROBLEMS)
    unknown = [p for p in args.only if p not in PROBLEMS]
    if unknown:
        ap.error(f"--only: unknown problem(s) {', '.join(unknown)}; expected some of {', '.join(PROBLEMS)}")
    args.chol_desc = f"4096x4096, tile {args.tile or 256}"
    results = collect_with_load_report(collect, args)
    if getattr(args, "delay_seconds", None):
        print(f"busy wavefront delay: {args.delay_seconds * 1e9:.0f} ns per task (calibrated once)")
    if args.smoke:
        print(f"smoke: {len(results)} results")
        return 0
    report(results, args)
    if args.callgrind:
        callgrind(args)
    if args.failures:
        print(f"\n{len(args.failures)} program run(s) FAILED (left out of the medians):")
        for f in args.failures:
            print(f"  {f}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
