#!/usr/bin/env python3
"""What `canopy profile` costs a program (docs/profile.md, issue 14's bar:
the profiled run takes at most 1.2x the normal run with the portable
mechanism).

For each program with a known sharing pattern (tests/profile/
sharing_patterns.c), runs it plainly and under `canopy profile` with each
timer asked for (--timers: auto = the perf_event task-clock event where the
machine allows it, posix = the POSIX CPU-time timer), all interleaved round
after round with the order rotated (the machine's noise hits every variant
alike), and reports per variant the median of the per-round ratios
profiled/plain of wall time, the median times, the peak resident memory
(the profiled figure is the largest of canopy and the program) and the
samples of the last profiled run. Hardware address sampling is not a
variant: canopy detects it but does not read it yet (docs/profile.md).

  python3 bench/profile/overhead.py --build build [--rounds 7] [--period-us N]
      [--timers auto,posix] [--threads 8] [--steps 40000] [--patterns halo1d,alltoall,...]
"""
import argparse, os, re, statistics, subprocess, sys, time


def timed(cmd, env=None):
    """Wall seconds and peak RSS (KiB, the largest process of the tree) of cmd."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    err = p.stderr.read().decode()  # read before waiting: a full pipe would block the program
    _, status, usage = os.wait4(p.pid, 0)
    elapsed = time.perf_counter() - start
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"overhead.py: {' '.join(cmd)} failed:\n{err}")
    return elapsed, usage.ru_maxrss, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--period-us", type=int, default=0,
                    help="sampling period (default: canopy profile's own default)")
    ap.add_argument("--timers", default="auto,posix", help="canopy profile --timer values to measure")
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--steps", type=int, default=40000)
    ap.add_argument("--patterns", default="halo1d,halo2d,pipeline,alltoall,permuted,pairs")
    a = ap.parse_args()
    cli = os.path.join(a.build, "bin", "canopy")
    prog = os.path.join(a.build, "bin", "profile_sharing_patterns")
    for f in (cli, prog):
        if not os.access(f, os.X_OK):
            sys.exit(f"overhead.py: {f} not found: build first (cmake --build {a.build})")
    timers = a.timers.split(",")
    period = ["--period-us", str(a.period_us)] if a.period_us else []
    print(f"# canopy profile {' '.join(period) or '(default period)'}: {a.threads} threads, {a.steps} steps, "
          f"{a.rounds} interleaved rounds, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f} at start")
    print(f"{'pattern':10} {'timer':6} {'plain s':>8} {'profiled s':>10} {'ratio':>6} {'RSS plain MiB':>13} "
          f"{'RSS profiled MiB':>16} {'samples':>8}  timer used")
    worst = {t: 0.0 for t in timers}
    for pattern in a.patterns.split(","):
        run = [prog, pattern, str(a.threads), str(a.steps)]
        variants = [None] + timers  # None: the plain run
        times = {v: [] for v in variants}
        rss = {v: 0 for v in variants}
        summary = {}
        for r in range(a.rounds):
            k = r % len(variants)
            for v in variants[k:] + variants[:k]:  # rotate who goes first
                if v is None:
                    t, m, _ = timed(run)
                else:
                    t, m, err = timed([cli, "profile", "--timer", v] + period + ["-o", os.devnull, "--"] + run)
                    summary[v] = next((l for l in err.splitlines() if l.startswith("canopy: profile:")), "")
                times[v].append(t)
                rss[v] = max(rss[v], m)
        for v in timers:
            ratio = statistics.median(p / q for p, q in zip(times[v], times[None]))
            worst[v] = max(worst[v], ratio)
            # "canopy: profile: 8 thread(s) (numbered ..., 0 = initial thread), 6120 samples, ..."
            m = re.search(r"(\d+) samples", summary[v])
            how = re.search(r"portable sampling: (.*?)(?: \(perf_event task-clock: [^)]*\))?; hardware", summary[v])
            print(f"{pattern:10} {v:6} {statistics.median(times[None]):8.3f} {statistics.median(times[v]):10.3f} "
                  f"{ratio:6.3f} {rss[None] / 1024:13.1f} {rss[v] / 1024:16.1f} {m.group(1) if m else '?':>8}  "
                  f"{how.group(1) if how else '?'}", flush=True)
    for v in timers:
        print(f"# --timer {v}: worst median ratio {worst[v]:.3f} (bar: 1.2): {'met' if worst[v] <= 1.2 else 'NOT met'}")


if __name__ == "__main__":
    main()
