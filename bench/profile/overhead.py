#!/usr/bin/env python3
"""What `canopy profile` costs a program (docs/profile.md, issue 14's bar:
the profiled run takes at most 1.2x the normal run with the portable
mechanism).

For each program with a known sharing pattern (tests/profile/
sharing_patterns.c), runs it plainly and under `canopy profile` in each
variant asked for (--variants TIMER[:PERIOD_US], TIMER: canopy profile
--timer, auto (its default), posix (the POSIX CPU-time timer) or
task-clock (the perf_event event); no period: canopy's default), all
interleaved round after
round with the order rotated (the machine's noise hits every variant
alike), and reports per variant the median of the per-round ratios
profiled/plain of wall time and of CPU time (user + system of the whole
process tree: what the profiler costs the machine, less sensitive to the
load of a shared machine than wall time), the median wall times, the peak
resident memory (the profiled figure is the largest of canopy and the
program) and the samples of the last profiled run. Hardware address
sampling is not a variant: canopy detects it but does not read it yet
(docs/profile.md).

  python3 bench/profile/overhead.py --build build [--rounds 7] [--variants auto,task-clock,posix:4000]
      [--threads 8] [--steps 40000] [--patterns halo1d,alltoall,...]
"""
import argparse, os, re, statistics, subprocess, sys, time


def timed(cmd, env=None):
    """Wall seconds, CPU seconds (user + system of the tree) and peak RSS
    (KiB, the largest process of the tree) of cmd, and its stderr."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = p.stderr.read().decode()  # read before waiting: a full pipe would block the program
    _, status, usage = os.wait4(p.pid, 0)
    elapsed = time.perf_counter() - start
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"overhead.py: {' '.join(cmd)} failed:\n{err}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--variants", default="auto,task-clock",
                    help="TIMER[:PERIOD_US],... (TIMER: canopy profile --timer; no period: its default)")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--steps", type=int, default=40000)
    ap.add_argument("--patterns", default="halo1d,halo2d,pipeline,alltoall,permuted,pairs")
    a = ap.parse_args()
    cli = os.path.join(a.build, "bin", "canopy")
    prog = os.path.join(a.build, "bin", "profile_sharing_patterns")
    for f in (cli, prog):
        if not os.access(f, os.X_OK):
            sys.exit(f"overhead.py: {f} not found: build first (cmake --build {a.build})")
    timers = a.variants.split(",")
    for v in timers:
        if not re.fullmatch(r"(auto|posix|task-clock)(:\d+)?", v):
            sys.exit(f"overhead.py: --variants: '{v}' is not TIMER[:PERIOD_US] with TIMER auto, posix or task-clock")
    print(f"# canopy profile: {a.threads} threads, {a.steps} steps, {a.rounds} interleaved rounds, "
          f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at start")
    print(f"{'pattern':10} {'variant':10} {'plain s':>8} {'profiled s':>10} {'wall ratio':>10} {'CPU ratio':>9} "
          f"{'RSS plain MiB':>13} {'RSS profiled MiB':>16} {'samples':>8}  timer used")
    worst = {t: 0.0 for t in timers}
    for pattern in a.patterns.split(","):
        run = [prog, pattern, str(a.threads), str(a.steps)]
        variants = [None] + timers  # None: the plain run
        times = {v: [] for v in variants}
        cpu = {v: [] for v in variants}
        rss = {v: 0 for v in variants}
        summary = {}
        for r in range(a.rounds):
            k = r % len(variants)
            for v in variants[k:] + variants[:k]:  # rotate who goes first
                if v is None:
                    t, c, m, _ = timed(run)
                else:
                    timer, _, period = v.partition(":")
                    opts = ["--timer", timer] + (["--period-us", period] if period else [])
                    t, c, m, err = timed([cli, "profile"] + opts + ["-o", os.devnull, "--"] + run)
                    summary[v] = next((l for l in err.splitlines() if l.startswith("canopy: profile:")), "")
                times[v].append(t)
                cpu[v].append(c)
                rss[v] = max(rss[v], m)
        for v in timers:
            ratio = statistics.median(p / q for p, q in zip(times[v], times[None]))
            cpu_ratio = statistics.median(p / q for p, q in zip(cpu[v], cpu[None]))
            worst[v] = max(worst[v], ratio)
            # "canopy: profile: 8 thread(s) (numbered ..., 0 = initial thread), 6120 samples, ..."
            m = re.search(r"(\d+) samples", summary[v])
            how = re.search(r"portable sampling: (.*?)(?: \(perf_event task-clock: [^)]*\))?; hardware", summary[v])
            print(f"{pattern:10} {v:10} {statistics.median(times[None]):8.3f} {statistics.median(times[v]):10.3f} "
                  f"{ratio:10.3f} {cpu_ratio:9.3f} {rss[None] / 1024:13.1f} {rss[v] / 1024:16.1f} "
                  f"{m.group(1) if m else '?':>8}  "
                  f"{how.group(1) if how else '?'}", flush=True)
    for v in timers:
        print(f"# {v}: worst median wall ratio {worst[v]:.3f} (bar: 1.2): {'met' if worst[v] <= 1.2 else 'NOT met'}")


if __name__ == "__main__":
    main()
