#!/usr/bin/env python3
"""What `canopy profile` costs a program (docs/profile.md, issue 14's bar:
the profiled run takes at most 1.2x the normal run with the portable
mechanism).

For each program with a known sharing pattern (tests/profile/
sharing_patterns.c), runs it plainly and under `canopy profile`, the two
interleaved round after round (the machine's noise hits both alike), and
reports the median of the per-round ratios profiled/plain of wall time,
and the peak resident memory of both (the profiled figure is the largest
of canopy and the program).

  python3 bench/profile/overhead.py --build build [--rounds 7] [--period-us 1000]
      [--threads 8] [--steps 40000] [--patterns halo1d,alltoall,...]
"""
import argparse, os, statistics, subprocess, sys, time


def timed(cmd, env=None):
    """Wall seconds and peak RSS (KiB, the largest process of the tree) of cmd."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    elapsed = time.perf_counter() - start
    err = p.stderr.read().decode()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"overhead.py: {' '.join(cmd)} failed:\n{err}")
    return elapsed, usage.ru_maxrss, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--period-us", type=int, default=1000)
    ap.add_argument("--threads", type=int, default=8)
    ap.add_argument("--steps", type=int, default=40000)
    ap.add_argument("--patterns", default="halo1d,halo2d,pipeline,alltoall,permuted,pairs")
    a = ap.parse_args()
    cli = os.path.join(a.build, "bin", "canopy")
    prog = os.path.join(a.build, "bin", "profile_sharing_patterns")
    for f in (cli, prog):
        if not os.access(f, os.X_OK):
            sys.exit(f"overhead.py: {f} not found: build first (cmake --build {a.build})")
    print(f"# canopy profile --period-us {a.period_us}: {a.threads} threads, {a.steps} steps, "
          f"{a.rounds} interleaved rounds, {os.cpu_count()} CPUs")
    print(f"{'pattern':10} {'plain s':>8} {'profiled s':>10} {'ratio':>6} {'RSS plain MiB':>13} "
          f"{'RSS profiled MiB':>16}  samples")
    worst = 0
    for pattern in a.patterns.split(","):
        run = [prog, pattern, str(a.threads), str(a.steps)]
        plain, profiled, ratios, rss_plain, rss_prof = [], [], [], 0, 0
        summary = ""
        for r in range(a.rounds):
            order = [False, True] if r % 2 == 0 else [True, False]  # alternate who goes first
            times = {}
            for with_profile in order:
                if with_profile:
                    t, rss, err = timed([cli, "profile", "--period-us", str(a.period_us), "-o", os.devnull, "--"] + run)
                    rss_prof = max(rss_prof, rss)
                    summary = next((l for l in err.splitlines() if l.startswith("canopy: profile:")), "")
                else:
                    t, rss, _ = timed(run)
                    rss_plain = max(rss_plain, rss)
                times[with_profile] = t
            plain.append(times[False])
            profiled.append(times[True])
            ratios.append(times[True] / times[False])
        ratio = statistics.median(ratios)
        worst = max(worst, ratio)
        samples = summary.split(", ")[1] if ", " in summary else "?"
        print(f"{pattern:10} {statistics.median(plain):8.3f} {statistics.median(profiled):10.3f} {ratio:6.3f} "
              f"{rss_plain / 1024:13.1f} {rss_prof / 1024:16.1f}  {samples}")
    print(f"# worst median ratio {worst:.3f} (bar: 1.2): {'met' if worst <= 1.2 else 'NOT met'}")


if __name__ == "__main__":
    main()
