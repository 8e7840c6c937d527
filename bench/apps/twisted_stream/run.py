#!/usr/bin/env python3
"""Twisted-STREAM (bench/apps/twisted_stream, docs/groups-memory.md): runs
canopy with first touch alone, canopy with the memory scheduler and the
OpenMP nested-teams baseline on Twisted-100 and Twisted-66, and prints per
phase the time, the share of the accessed bytes that were on the accessing
thread's node (the kernel's answer at the end of the phase), the bytes the
memory scheduler migrated and the groups it moved.

    python3 bench/apps/twisted_stream/run.py --bin build/bin [--threads T] [-n DOUBLES] [-i ITERATIONS]
        [--rounds R] [--bar] [--smoke]

--bar (meant for machines of several NUMA nodes): exits 1 unless, in phase
2, the memory scheduler keeps >= 95% of the accessed bytes local while
migrating no more than must move (Twisted-100: 0 bytes, Twisted-66: one
vector per group). Every program checks its result; a failed check exits 1.
Times inside a TCG VM mean nothing; the shares and bytes do.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

PHASE = re.compile(r"PHASE bench=twisted_stream variant=(\d+) impl=(\S+) groups=(\d+) phase=(\d) seconds=([\d.]+) "
                   r"local_share=([\d.]+) migrated_bytes=(\d+) groups_moved=(\d+)")
CONFIGS = [("canopy-first-touch", "canopy", ["--mode", "first-touch"]),
           ("canopy-memsched", "canopy", ["--mode", "memsched"]),
           ("omp-nested", "omp", [])]


def run(args, config, variant):
    _, prog, extra = config
    cmd = [os.path.join(args.bin, f"canopy_bench_twisted_stream_{prog}"), "-t", str(args.threads), "--locality",
           "--variant", str(variant)] + extra
    cmd += ["--smoke"] if args.smoke else ["-n", str(args.n), "-i", str(args.iterations)]
    env = dict(os.environ, OMP_PLACES="cores", OMP_PROC_BIND="spread,close", CANOPY_STATS="1")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=1800)
    if p.returncode != 0:
        sys.exit(f"twisted_stream/run.py: {' '.join(cmd)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    phases = {int(m.group(4)): m for m in PHASE.finditer(p.stdout)}
    if set(phases) != {1, 2}:
        sys.exit(f"twisted_stream/run.py: no PHASE lines from {' '.join(cmd)}:\n{p.stdout}{p.stderr}")
    return phases


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default="build/bin")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("-n", type=int, default=1 << 22, help="doubles per vector")
    ap.add_argument("-i", "--iterations", type=int, default=20, help="triads per phase")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--bar", action="store_true")
    ap.add_argument("--smoke", action="store_true")
    args = ap.parse_args()
    vector_bytes = (args.n * 8 + 4095) // 4096 * 4096
    rows, failures = [], []
    for variant in (100, 66):
        results = {c[0]: [] for c in CONFIGS}
        for _ in range(args.rounds):  # interleaved: each round runs every configuration
            for c in CONFIGS:
                results[c[0]].append(run(args, c, variant))
        for name, runs in results.items():
            for phase in (1, 2):
                ms = [r[phase] for r in runs]
                secs = statistics.median(float(m.group(5)) for m in ms)
                share = min(float(m.group(6)) for m in ms)
                migrated = max(int(m.group(7)) for m in ms)
                moved = max(int(m.group(8)) for m in ms)
                groups = int(ms[0].group(3))
                rows.append([f"Twisted-{variant}", name, str(phase), f"{secs:.3f}", f"{100 * share:.1f}%",
                             f"{migrated / 2**20:.1f}", str(moved)])
                if args.bar and name == "canopy-memsched" and phase == 2:
                    must = 0 if variant == 100 else groups * vector_bytes
                    if share < 0.95:
                        failures.append(f"Twisted-{variant}: phase 2 local share {100 * share:.1f}% < 95%")
                    if migrated > must:
                        failures.append(f"Twisted-{variant}: {migrated} bytes migrated, more than the {must} that must move")
    head = ["variant", "config", "phase", "seconds", "local", "migrated MiB", "groups moved"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
    print(f"Twisted-STREAM, {args.threads} threads, {'smoke' if args.smoke else f'{args.n} doubles x {args.iterations} iterations'}"
          f", {args.rounds} round(s) (time: median; local: lowest; migrated: highest)")
    for r in [head] + rows:
        print("  ".join(x.rjust(w) for x, w in zip(r, widths)))
    for f in failures:
        print(f"BAR FAILED: {f}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
