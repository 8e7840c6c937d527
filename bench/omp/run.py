#!/usr/bin/env python3
"""Runs the OpenMP runtime benchmarks (bench/omp): the same gcc-compiled
binaries on libgomp, on LLVM's libomp (through its libgomp compatibility)
and on canopy's OpenMP runtime, and prints medians, ratios and the bars of
issue 11 (docs/bench-omp.md). With --abi kmp: the clang-compiled binaries
(canopy_bench_omp_kmp_*, the libomp ABI) on libomp and on canopy, and the
bars of issue 12.

    python3 bench/omp/run.py --bin build/bin [--abi gomp|kmp]
        [--runtimes gomp,libomp,canopy] [--rounds 5] [--threads 1,2,4,8,16]
        [--shapes 2x2,4x2,8x4,16x8] [--only REGEX] [--markdown] [--smoke]

The runtime is chosen by LD_LIBRARY_PATH: a directory whose libgomp.so.1 is
the runtime (libomp: a temporary directory with a libgomp.so.1 link to
libomp.so.5; canopy: <build>/lib/canopy-omp); with --abi kmp, a directory
whose libomp.so.5 is the runtime (libomp: a temporary directory with a
libomp.so.5 link to the system's; canopy: <build>/lib/canopy-omp). Before any measurement each
runtime is checked once: a program run with -m must have mapped that very
library (read from /proc/self/maps) and no other OpenMP runtime, with a
2-thread team; otherwise the run stops. The same run has OMP_DISPLAY_ENV=true:
libgomp and libomp must print their environment block (its _OPENMP value is
reported; a canopy runtime that prints none is named, not stopped). A runtime whose library is missing is reported as skipped.
Rounds interleave the runtimes: round r runs every program on every runtime
before round r+1 starts.
"""
import argparse
import glob
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from benchlib import OMP_ENV, add_common_arguments, add_results, collect_with_load_report, median, run_quietly, table  # noqa: E402

# program: size for --smoke (-n). Sizes of full runs are the programs' defaults.
PROGRAMS = {
    "epcc": 64,        # repetitions per construct
    "fib": 12,
    "nqueens": 7,
    "mergesort": 20000,
    "sparselu": 6,
    "strassen": 128,
    "uts": 30,
    "wavefront": 512,
    "cholesky": 256,
    "nested": 2,       # time steps
    "taskmem": 20000,  # tasks
}
TASK_PROGRAMS = ["fib", "nqueens", "mergesort", "sparselu", "strassen", "uts", "wavefront", "cholesky"]
RUNTIMES = ["gomp", "libomp", "canopy"]
PEERS = ["gomp", "libomp"]
# --abi kmp (clang's programs): the runtimes, and the one peer of issue 12's bars
KMP_RUNTIMES = ["libomp", "canopy"]
KMP_PEERS = ["libomp"]
EPCC_TEAM_BAR = ["barrier", "parallel", "for"]  # the oversubscribed bar's constructs
# the bars of issue 12 (--abi kmp): canopy / libomp at 1 and 2 threads, and
# the oversubscribed team constructs' share of libomp's time
KMP_GEOMEAN_BAR, KMP_EACH_BAR, KMP_TEAM_BAR = 1.0, 1.1, 0.5


def exe(args, program):
    infix = "kmp_" if args.abi == "kmp" else ""
    return os.path.join(args.bin, f"canopy_bench_omp_{infix}{program}")


def library_name(args):
    """The file name the programs ask the dynamic loader for."""
    return "libomp.so.5" if args.abi == "kmp" else "libgomp.so.1"


def find_libomp(given):
    """libomp.so.5's path: --libomp, else the newest LLVM's, else the multiarch one."""
    if given:
        if not os.path.exists(given):
            raise SystemExit(f"run.py: --libomp {given}: no such file")
        return given
    found = sorted(glob.glob("/usr/lib/llvm-*/lib/libomp.so.5"), key=lambda p: int(re.search(r"llvm-(\d+)", p).group(1)))
    found += glob.glob("/usr/lib/*-linux-gnu/libomp.so.5")
    return found[-1] if found else None


def runtime_dirs(tool, specs):
    """{name: directory holding a libomp.so.5}: "libomp" (a temporary directory linking the system's) and each
    NAME=DIR of `specs` (canopy builds' lib/canopy-omp), for the scripts that compare canopy builds with libomp
    (epcc_compare.py, task_loops.py); `tool` names the script in errors."""
    libomp = find_libomp("")
    if not libomp:
        raise SystemExit(f"{tool}: no libomp.so.5 in /usr/lib (install libomp-dev)")
    tmp = tempfile.mkdtemp()
    os.symlink(libomp, os.path.join(tmp, "libomp.so.5"))
    libs = {"libomp": tmp}
    for spec in specs:
        name, sep, d = spec.partition("=")
        if not sep or not name or name == "libomp":
            raise SystemExit(f"{tool}: '{spec}': expected NAME=DIR with a NAME other than libomp")
        if not os.path.exists(os.path.join(d, "libomp.so.5")):
            raise SystemExit(f"{tool}: {spec}: no libomp.so.5 in {d}")
        libs[name] = os.path.abspath(d)
    return libs


def setup_runtimes(args, tmpdir):
    """{runtime: (LD_LIBRARY_PATH, the library file that must be mapped or None for the system's libgomp)}
    for the runtimes asked for whose library exists; the others are named as skipped."""
    runtimes, skipped = {}, []
    name = library_name(args)
    for rt in args.runtimes:
        if rt == "gomp" and args.abi == "kmp":
            raise SystemExit("run.py: --abi kmp: clang's programs run on libomp and canopy, not on libgomp")
        if rt == "gomp":
            runtimes[rt] = ("", None)
        elif rt == "libomp":
            lib = find_libomp(args.libomp)
            if not lib:
                skipped.append(f"libomp (no libomp.so.5: install libomp-dev or give --libomp)")
                continue
            d = os.path.join(tmpdir, "libomp")
            os.makedirs(d, exist_ok=True)
            os.symlink(lib, os.path.join(d, name))
            runtimes[rt] = (d, os.path.realpath(lib))
        elif rt == "canopy":
            d = args.canopy_lib or os.path.join(args.bin, "..", "lib", "canopy-omp")
            lib = os.path.join(d, name)
            if not os.path.exists(lib) and args.canopy_lib:
                raise SystemExit(f"run.py: --canopy-lib {args.canopy_lib}: no {name} there")
            if not os.path.exists(lib):
                skipped.append(f"canopy (no {os.path.normpath(lib)} yet)")
                continue
            runtimes[rt] = (os.path.abspath(d), os.path.realpath(lib))
        else:
            raise SystemExit(f"run.py: --runtimes: unknown runtime '{rt}' (expected {', '.join(RUNTIMES)})")
    return runtimes, skipped


# epcc constructs a runtime cannot run, by (ABI, runtime): libomp 14's
# libgomp compatibility crashes (SIGSEGV) in GCC's doacross calls
# (GOMP_doacross_post / GOMP_doacross_wait); epcc skips what EPCC_SKIP names.
EPCC_SKIP = {("gomp", "libomp"): "doacross"}


def env_for(runtimes, rt, extra=None, abi="gomp"):
    env = dict(OMP_ENV)
    env["LD_LIBRARY_PATH"] = runtimes[rt][0]
    env["CANOPY_BENCH_IMPL"] = rt
    if (abi, rt) in EPCC_SKIP:
        env["EPCC_SKIP"] = EPCC_SKIP[(abi, rt)]
    if extra:
        env.update(extra)
    return env


def verify_runtimes(args, runtimes):
    """Checks once per runtime that the switch really happened (fails loudly
    otherwise); returns {runtime: (library path, the _OPENMP line of OMP_DISPLAY_ENV)}."""
    probe = exe(args, "fib")
    expected = {rt: lib for rt, (_, lib) in runtimes.items()}
    others = {lib for lib in expected.values() if lib}
    info = {}
    for rt in runtimes:
        env = dict(os.environ, **env_for(runtimes, rt, {"OMP_DISPLAY_ENV": "true"}))
        p = subprocess.run([probe, "-t", "2", "-m"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env=env, timeout=60)
        if p.returncode != 0:
            raise SystemExit(f"run.py: {rt}: '{probe} -t 2 -m' failed ({p.returncode}): {p.stderr.strip()[-1000:]}")
        mapped = {os.path.realpath(m) for m in re.findall(r"^RUNTIME (.+)$", p.stdout, re.M)}
        team = re.search(r"^TEAM (\d+)$", p.stdout, re.M)
        want = expected[rt]
        if want is None:  # the system's libgomp: a libgomp.so.1 that is none of the others
            ok = any(os.path.basename(m).startswith("libgomp.so") for m in mapped) and not (mapped & others)
            lib = next((m for m in sorted(mapped) if os.path.basename(m).startswith("libgomp.so")), "?")
        else:
            ok = want in mapped and not (mapped & (others - {want})) and not any(
                os.path.basename(m).startswith("libgomp.so") and m != want for m in mapped)
            lib = want
        if not ok:
            raise SystemExit(f"run.py: {rt}: LD_LIBRARY_PATH={runtimes[rt][0]!r} did not switch the runtime: the "
                             f"process mapped {sorted(mapped) or 'no OpenMP library'}, expected "
                             f"{want or 'the system libgomp alone'}")
        if not team or int(team.group(1)) != 2:
            raise SystemExit(f"run.py: {rt}: a parallel region of 2 threads ran with "
                             f"{team.group(1) if team else 'no'} threads")
        # Both peers print the block; a runtime that does not is named (the
        # maps check above is what proves the switch).
        if "OPENMP DISPLAY ENVIRONMENT BEGIN" not in p.stderr:
            if rt in args.peers:
                raise SystemExit(f"run.py: {rt}: OMP_DISPLAY_ENV=true printed no environment block: "
                                 f"{p.stderr[-500:]!r}")
            info[rt] = (lib, "? (no OMP_DISPLAY_ENV block printed)")
            continue
        version = re.search(r"_OPENMP\s*=\s*'?(\d+)", p.stderr)
        info[rt] = (lib, version.group(1) if version else "?")
    return info


def check_the_check(args, runtimes):
    """--smoke: the switch check must fail when the switch does not happen
    (libomp expected, the system's libgomp loaded; and the reverse)."""
    if "libomp" not in runtimes:
        return
    if args.abi == "kmp":  # each runtime's directory given to the other
        if "canopy" not in runtimes:
            return
        wrong = [{"libomp": (runtimes["canopy"][0], runtimes["libomp"][1])},
                 {"canopy": (runtimes["libomp"][0], runtimes["canopy"][1])}]
    else:
        wrong = [{"libomp": ("", runtimes["libomp"][1])}, {"gomp": (runtimes["libomp"][0], None)}]
    for fake in wrong:
        try:
            verify_runtimes(args, fake)
        except SystemExit:
            continue
        raise SystemExit(f"run.py: the runtime check accepted a switch that did not happen: {fake}")
    print("runtime check: rejects a switch that did not happen (smoke)")


def jobs_of(args):
    """[(program, label threads, argv)] of one round."""
    jobs = []
    only = re.compile(args.only.replace(",", "|")) if args.only else None
    for program, smoke_n in PROGRAMS.items():
        if only and not only.search(program):
            continue
        if not os.path.exists(exe(args, program)):
            print(f"(skipping {program}: {exe(args, program)} not built)", file=sys.stderr)
            continue
        size = ["-n", str(smoke_n)] if args.smoke else []
        # epcc: 5 timed batches per construct per run (each ~0.05 s, after
        # the warm-up), all in the median: 5 samples per round for the cost
        # of ~1.8 runs, so a burst of foreign load spoils few of them. The
        # task programs: 3 timed runs each (a single 0.1 s run moved by up
        # to 40% between rounds on this VM, so 7 samples could not tell 10%).
        reps = "1" if args.smoke else "5" if program == "epcc" else "3" if program in TASK_PROGRAMS else "1"
        base = [exe(args, program), "-r", reps] + (["-w", "0"] if args.smoke else [])
        if program == "nested":
            for o, i in args.shapes:
                jobs.append((program, o * i, base + ["-t", str(o), "-i", str(i)] + size))
        elif program == "epcc":
            for t in args.threads:
                jobs.append((program, t, base + ["-t", str(t)] + size))
        elif program == "taskmem":
            for t in args.task_threads:
                jobs.append((program, t, base + ["-t", str(t)] + size))
                jobs.append(("taskmem-base", t, [exe(args, program), "-r", "1", "-w", "0", "-t", str(t), "-n", "1"]))
        else:
            for t in args.task_threads:
                jobs.append((program, t, base + ["-t", str(t)] + size))
    # Oversubscribed epcc (--abi kmp): the floor of a fork-join whose threads
    # only yield, beside it (report_kmp compares `parallel` with it).
    floor = os.path.join(args.bin, "canopy_bench_omp_yield_floor")
    cores = os.cpu_count() or 1
    if args.abi == "kmp" and (not only or only.search("epcc")) and os.path.exists(floor):
        for t in args.threads:
            if t > cores:
                jobs.append(("yield-floor", t, [floor, str(t), "200" if args.smoke else "20000"]))
    return jobs


def collect(args):
    results = {}
    args.rss = {}          # (bench, runtime, threads): [KiB]
    args.outstanding = {}  # (runtime, threads): [max outstanding tasks]
    args.failures = []
    args.reruns = 0
    jobs = jobs_of(args)
    for _ in range(1 if args.smoke else args.rounds):
        for program, t, cmd in jobs:
            for rt in args.runtime_envs:
                env = env_for(args.runtime_envs, rt, abi=args.abi)
                if program.startswith("taskmem"):
                    # memory does not depend on the load: run once, no retry
                    out, _ = run_quietly(cmd, env, args.max_others, retry=False,
                                         on_failure=lambda e, rt=rt: args.failures.append(f"{rt}: {e}"))
                    rss = re.search(r"PEAK_RSS kib=(\d+)", out)
                    if not rss:
                        continue
                    args.rss.setdefault((program, rt, t), []).append(int(rss.group(1)))
                    if program == "taskmem":
                        add_results(results, out, cmd)
                        m = re.search(r"OUTSTANDING max=(\d+)", out)
                        args.outstanding.setdefault((rt, t), []).append(int(m.group(1)) if m else 0)
                    continue
                out, reruns = run_quietly(cmd, env, args.max_others, retry=not args.smoke,
                                          on_failure=lambda e, rt=rt: args.failures.append(f"{rt}: {e}"))
                args.reruns += reruns
                if out:
                    add_results(results, out, cmd)
    return results


def fmt(v, scale=1, digits=3):
    return "-" if v is None else f"{v * scale:.{digits}g}"


def best_peer(results, bench, t, peers=PEERS):
    vals = [v for v in (median(results, bench, p, t) for p in peers) if v is not None]
    return min(vals) if vals else None


def ratio(a, b):
    return None if a is None or b is None or b <= 0 or a < 0 else a / b


def yes_no(ok):
    return "-" if ok is None else ("yes" if ok else "NO")


def report_epcc(results, args):
    rts = list(args.runtime_envs)
    rows = []
    constructs = []
    for (b, _, _) in results:
        if b.startswith("epcc-") and b not in constructs:
            constructs.append(b)
    for c in constructs:
        for t in args.threads:
            vals = {rt: median(results, c, rt, t) for rt in rts}
            if all(v is None for v in vals.values()):
                continue
            cv, peer = vals.get("canopy"), best_peer(results, c, t)
            bar = None
            g, l = vals.get("gomp"), vals.get("libomp")
            if cv is not None and t <= 2 and peer is not None:
                bar = cv <= peer
            elif cv is not None and t >= 8 and c[5:] in EPCC_TEAM_BAR and g is not None and l is not None:
                bar = cv <= g / 5 and cv <= l / 2
            r = ratio(cv, peer)
            rows.append([c[5:], t] + [fmt(vals[rt], 1e6) for rt in rts] +
                        ["-" if r is None else f"{r:.2f}x", yes_no(bar)])
    table("EPCC-style overheads, µs per construct beyond its work (ratio: canopy / the faster peer; bar: "
          "<= the faster peer at 1-2 threads; barrier/parallel/for at >= 8 threads <= gomp/5 and <= libomp/2)",
          ["construct", "threads"] + [f"{rt} µs" for rt in rts] + ["canopy ratio", "bar met"], rows, args.markdown)


def report_tasks(results, args):
    rts = list(args.runtime_envs)
    rows = []
    ratios = {}
    for p in TASK_PROGRAMS:
        for t in args.task_threads:
            vals = {rt: median(results, p, rt, t) for rt in rts}
            if all(v is None for v in vals.values()):
                continue
            r = ratio(vals.get("canopy"), best_peer(results, p, t))
            if r is not None:
                ratios.setdefault(t, []).append((p, r))
            rows.append([p, t] + [fmt(vals[rt], 1e3) for rt in rts] + ["-" if r is None else f"{r:.2f}x"])
    table("task-parallel programs, ms per run (ratio: canopy / the faster peer)",
          ["program", "threads"] + [f"{rt} ms" for rt in rts] + ["canopy ratio"], rows, args.markdown)
    for t, rs in sorted(ratios.items()):
        geo = math.exp(sum(math.log(r) for _, r in rs) / len(rs))
        worst = max(rs, key=lambda x: x[1])
        bar = f"  bar (geomean <= 1.0, none > 1.1x): {yes_no(geo <= 1.0 and worst[1] <= 1.1)}" if t == 2 else ""
        print(f"canopy / faster peer at {t} threads: geometric mean {geo:.3f}, worst {worst[0]} {worst[1]:.2f}x{bar}")


def report_nested(results, args):
    rts = list(args.runtime_envs)
    rows = []
    first = {}
    growth = {}
    for o, i in args.shapes:
        b, t = f"nested-{o}x{i}", o * i
        vals = {rt: median(results, b, rt, t) for rt in rts}
        if all(v is None for v in vals.values()):
            continue
        for rt, v in vals.items():
            if v is not None:
                first.setdefault(rt, v)
                growth[rt] = v / first[rt]
        cv, peer = vals.get("canopy"), best_peer(results, b, t)
        r = ratio(cv, peer)
        rows.append([f"{o}x{i}", t] + [fmt(vals[rt], 1e3) for rt in rts] +
                    ["-" if r is None else f"{r:.2f}x", yes_no(None if cv is None or peer is None else cv <= peer)])
    table("nested parallelism (BT-MZ shape, outer x inner threads), ms per run: the curve over shapes "
          "(ratio: canopy / the best peer; bar: no slower than the best peer)",
          ["shape", "threads"] + [f"{rt} ms" for rt in rts] + ["canopy ratio", "bar met"], rows, args.markdown)
    if growth:
        print("time at the largest shape / time at the smallest: " +
              ", ".join(f"{rt} {g:.2f}x" for rt, g in growth.items()))
        if "canopy" in growth and "gomp" in growth:
            ok = growth["canopy"] <= 1.5 and growth["canopy"] <= growth["gomp"]
            print(f"bar (canopy's time does not grow like libgomp's: growth <= 1.5x and <= gomp's): {yes_no(ok)}")


def kmp_row(results, bench, t):
    """(libomp, canopy, canopy / libomp) medians of one bench at t threads."""
    lv, cv = median(results, bench, "libomp", t), median(results, bench, "canopy", t)
    return lv, cv, ratio(cv, lv)


def report_yield_floor(results, args):
    """The oversubscribed `parallel` of each runtime beside the yield floor
    (bench/omp/yield_floor.c: a fork-join of plain threads that only yield,
    every thread once per round): what no runtime that waits by yielding
    can go below on this machine."""
    for t in args.threads:
        floor = median(results, "yield-floor", "pthreads", t)
        if floor is None:
            continue
        parts = [f"yield floor at {t} threads: {fmt(floor, 1e6)} µs per round"]
        for rt in ("libomp", "canopy"):
            v = median(results, "epcc-parallel", rt, t)
            if v is not None:
                parts.append(f"{rt}'s parallel {fmt(v, 1e6)} µs ({v / floor:.2f}x the floor)")
        print("; ".join(parts))


def report_kmp(results, args):
    """--abi kmp: the constructs, the task programs and the nested shapes of
    clang's programs on libomp and canopy, and the verdicts of issue 12's bars."""
    small = {}  # threads (1, 2): [(name, canopy / libomp)]
    team = []   # (construct, threads, canopy / libomp) at >= 8 threads
    constructs = []
    for (b, _, _) in results:
        if b.startswith("epcc-") and b not in constructs:
            constructs.append(b)
    def each_bar(name, t, r):
        """The 1-2 thread bar of one item (recorded for the geometric mean); None elsewhere."""
        if r is None or t > 2:
            return None
        small.setdefault(t, []).append((name, r))
        return r <= KMP_EACH_BAR

    rows = []
    for c in constructs:
        for t in args.threads:
            lv, cv, r = kmp_row(results, c, t)
            if lv is None and cv is None:
                continue
            bar = each_bar(c[5:], t, r)
            if r is not None and t >= 8 and c[5:] in EPCC_TEAM_BAR:
                team.append((c[5:], t, r))
                bar = r <= KMP_TEAM_BAR
            rows.append([c[5:], t, fmt(lv, 1e6), fmt(cv, 1e6), "-" if r is None else f"{r:.2f}x", yes_no(bar)])
    table(f"clang-compiled EPCC-style overheads, µs per construct beyond its work (ratio: canopy / libomp; bar: "
          f"<= {KMP_EACH_BAR}x at 1-2 threads; barrier/parallel/for at >= 8 threads <= {KMP_TEAM_BAR}x)",
          ["construct", "threads", "libomp µs", "canopy µs", "ratio", "bar met"], rows, args.markdown)
    report_yield_floor(results, args)
    rows = []
    for p in TASK_PROGRAMS:
        for t in args.task_threads:
            lv, cv, r = kmp_row(results, p, t)
            if lv is None and cv is None:
                continue
            bar = each_bar(p, t, r)
            rows.append([p, t, fmt(lv, 1e3), fmt(cv, 1e3), "-" if r is None else f"{r:.2f}x", yes_no(bar)])
    table(f"clang-compiled task programs, ms per run (ratio: canopy / libomp; bar: <= {KMP_EACH_BAR}x at 1-2 threads)",
          ["program", "threads", "libomp ms", "canopy ms", "ratio", "bar met"], rows, args.markdown)
    rows = []
    for o, i in args.shapes:
        lv, cv, r = kmp_row(results, f"nested-{o}x{i}", o * i)
        if lv is None and cv is None:
            continue
        rows.append([f"{o}x{i}", o * i, fmt(lv, 1e3), fmt(cv, 1e3), "-" if r is None else f"{r:.2f}x"])
    table("clang-compiled nested parallelism (BT-MZ shape, outer x inner threads), ms per run (ratio: canopy / libomp)",
          ["shape", "threads", "libomp ms", "canopy ms", "ratio"], rows, args.markdown)
    verdicts = []
    for t, rs in sorted(small.items()):
        geo = math.exp(sum(math.log(r) for _, r in rs) / len(rs))
        worst = max(rs, key=lambda x: x[1])
        ok = geo <= KMP_GEOMEAN_BAR and worst[1] <= KMP_EACH_BAR
        verdicts.append(ok)
        print(f"bar at {t} thread{'s' if t > 1 else ''}: canopy / libomp over {len(rs)} constructs and programs: "
              f"geometric mean {geo:.3f} (<= {KMP_GEOMEAN_BAR}), worst {worst[0]} {worst[1]:.2f}x "
              f"(<= {KMP_EACH_BAR}x): {yes_no(ok)}")
    for t in sorted({t for _, t, _ in team}):
        rs = [(c, r) for c, tt, r in team if tt == t]
        ok = all(r <= KMP_TEAM_BAR for _, r in rs)
        verdicts.append(ok)
        print(f"bar at {t} threads: barrier/parallel/for at most {KMP_TEAM_BAR}x of libomp's: " +
              ", ".join(f"{c} {r:.2f}x" for c, r in rs) + f": {yes_no(ok)}")
    if verdicts:
        print(f"issue 12's bars: {sum(verdicts)} of {len(verdicts)} met")


def report_memory(results, args):
    rts = list(args.runtime_envs)
    rows = []
    for t in args.task_threads:
        peak = {rt: args.rss.get(("taskmem", rt, t)) for rt in rts}
        for rt in rts:
            if not peak[rt]:
                continue
            kib = max(peak[rt])
            base = max(args.rss.get(("taskmem-base", rt, t), [0]))
            held = max(args.outstanding.get((rt, t), [0]))
            peers = [max(peak[p]) for p in args.peers if peak.get(p)]
            r = f"{kib / min(peers):.2f}x" if rt == "canopy" and peers else "-"
            per_task = f"{(kib - base) * 1024 / held:.0f}" if held > 1 else "-"
            rows.append([t, rt, f"{kib / 1024:.1f}", f"{base / 1024:.1f}", held, per_task,
                         fmt(median(results, "taskmem", rt, t), 1e3), r])
    table(f"memory: one thread creates {PROGRAMS['taskmem'] if args.smoke else '10^6'} tasks before any may finish; "
          "peak RSS (VmHWM), the same program with 1 task, the most tasks the runtime held at once",
          ["threads", "runtime", "peak RSS MiB", "1-task RSS MiB", "max outstanding", "bytes / held task", "ms",
           "canopy / lower peer"], rows, args.markdown)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(ap, PROGRAMS)
    ap.add_argument("--abi", choices=["gomp", "kmp"], default="gomp",
                    help="gomp: the gcc-compiled programs (libgomp ABI) on gomp, libomp, canopy; kmp: the "
                         "clang-compiled ones (canopy_bench_omp_kmp_*, libomp ABI) on libomp and canopy")
    ap.add_argument("--runtimes", default="",
                    help="runtimes to run on, comma separated (default: gomp,libomp,canopy; --abi kmp: libomp,canopy)")
    ap.add_argument("--shapes", default="",
                    help="nested shapes OUTERxINNER, comma separated (default 2x2,4x2,8x4,16x8; --smoke: 2x2,4x2)")
    ap.add_argument("--task-threads", default="",
                    help="threads of the task programs and taskmem (default: those of --threads up to the cores)")
    ap.add_argument("--libomp", default="", help="LLVM's libomp.so.5 (default: the newest /usr/lib/llvm-*/lib one)")
    ap.add_argument("--canopy-lib", default="", help="directory with canopy's libgomp.so.1 (default: BIN/../lib/canopy-omp)")
    ap.add_argument("--smoke", action="store_true", help="every program once on a tiny size, results checked (a test)")
    args = ap.parse_args()
    try:
        args.threads = [int(t) for t in args.threads.split(",")]
        shapes = args.shapes or ("2x2,4x2" if args.smoke else "2x2,4x2,8x4,16x8")
        args.shapes = [tuple(int(x) for x in s.split("x")) for s in shapes.split(",")]
        args.task_threads = ([int(t) for t in args.task_threads.split(",")] if args.task_threads else
                             [t for t in args.threads if t <= (os.cpu_count() or 1)] or [min(args.threads)])
    except ValueError:
        raise SystemExit("run.py: --threads / --task-threads take numbers, --shapes OUTERxINNER pairs (e.g. 2x2,4x2)")
    if any(t < 1 for t in args.threads + args.task_threads) or any(len(s) != 2 or min(s) < 1 for s in args.shapes):
        raise SystemExit("run.py: thread counts and shapes must be positive")
    args.runtimes = [r for r in (args.runtimes or ",".join(KMP_RUNTIMES if args.abi == "kmp" else RUNTIMES)).split(",") if r]
    args.peers = KMP_PEERS if args.abi == "kmp" else PEERS
    if not os.path.isdir(args.bin):
        raise SystemExit(f"run.py: --bin {args.bin}: no such directory")
    if not os.path.exists(exe(args, "fib")):
        raise SystemExit(f"run.py: {exe(args, 'fib')} is not built (target {os.path.basename(exe(args, 'fib'))}"
                         f"{'_build: needs clang-14 and libomp-dev' if args.abi == 'kmp' else ''})")
    with tempfile.TemporaryDirectory(prefix="canopy-bench-omp-") as tmp:
        args.runtime_envs, skipped = setup_runtimes(args, tmp)
        for s in skipped:
            print(f"skipped runtime: {s}")
        info = verify_runtimes(args, args.runtime_envs)
        if args.smoke:
            check_the_check(args, args.runtime_envs)
        for rt, (lib, version) in info.items():
            print(f"runtime {rt}: {lib} (checked in /proc/self/maps; OMP_DISPLAY_ENV _OPENMP={version})")
        results = collect_with_load_report(collect, args)
    for f in args.failures:
        print(f"FAILED {f}", file=sys.stderr)
    if args.smoke:
        print(f"smoke: {len(results)} results on {', '.join(args.runtime_envs)}; {len(args.failures)} failures")
        return 1 if args.failures or not results else 0
    if args.abi == "kmp":
        report_kmp(results, args)
    else:
        report_epcc(results, args)
        report_tasks(results, args)
        report_nested(results, args)
    report_memory(results, args)
    return 1 if args.failures else 0


if __name__ == "__main__":
    sys.exit(main())
