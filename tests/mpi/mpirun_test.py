#!/usr/bin/env python3
"""`canopy mpirun` with Open MPI's real mpirun on this machine (oversubscribed
when it has fewer cores than ranks): a ring profiled with --matrix auto (the
profile is cached and reused), every rank checking its binding (--report);
a hybrid MPI+OpenMP job checked from each rank and thread; the mpirun
command of --dry-run with its rankfile; a matrix of the wrong size.

usage: mpirun_test.py --canopy CANOPY --programs DIR (Open MPI builds of
tests/mpi/programs). Exit status 0 when every check passes."""
import argparse
import os
import re
import subprocess
import sys
import tempfile

failures = 0


def check(ok, what, r=None):
    global failures
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures += 1
        if r is not None:
            print(f"  exit {r.returncode}\n  stdout: {r.stdout}\n  stderr: {r.stderr}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--canopy", required=True)
    ap.add_argument("--programs", required=True)
    a = ap.parse_args()
    ring = os.path.join(a.programs, "ring")
    hybrid = os.path.join(a.programs, "hybrid")
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ)
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", XDG_CACHE_HOME=tmp,
                   CANOPY_MPIRUN="mpirun.openmpi")

        def run(args):
            return subprocess.run([a.canopy, "mpirun"] + args, env=env, capture_output=True, text=True, timeout=240)

        # 1. --matrix auto: the first run profiles, the second uses the profile.
        r = run(["-np", "4", "--matrix", "auto", "--report", "--", ring])
        check(r.returncode == 0 and "profiling the communication" in r.stderr
              and "every rank (and thread) ran where placed" in r.stderr, "ring -np 4 --matrix auto --report", r)
        rows = [l for l in r.stderr.splitlines() if re.match(r"^\s+\d+\s+-\s+\S+\s+[\d,-]+\s+[\d,-]+\s+ok$", l)]
        check(len(rows) == 4, f"4 ranks reported ok ({len(rows)})", r)
        cache = os.path.join(tmp, "canopy", "mpi")
        profiles = [f for f in os.listdir(cache) if f.endswith(".mtx")] if os.path.isdir(cache) else []
        check(len(profiles) == 1, f"one cached profile in {cache}: {profiles}")
        if profiles:
            text = open(os.path.join(cache, profiles[0])).read()
            check("4 4 4" in text and "1 2 12000" in text and "4 1 12000" in text, "the profile is the ring's")
        r2 = run(["-np", "4", "--matrix", "auto", "--report", "--", ring])
        check(r2.returncode == 0 and "using the profile of an earlier run" in r2.stderr
              and "profiling" not in r2.stderr, "second run uses the cached profile", r2)

        # 2. Hybrid: 2 threads per rank, each rank and thread where placed.
        r = run(["-np", "2", "--threads-per-rank", "2", "--report", "--", hybrid])
        thread_rows = [l for l in r.stderr.splitlines() if re.match(r"^\s+\d+\s+\d+\s+\S+\s+[\d,-]+\s+[\d,-]+\s+ok$", l)]
        check(r.returncode == 0 and "every rank (and thread) ran where placed" in r.stderr and len(thread_rows) == 4,
              f"hybrid -np 2 --threads-per-rank 2 --report ({len(thread_rows)} threads ok)", r)

        # 3. --dry-run: the Open MPI command with the rankfile, which is kept.
        keep = os.path.join(tmp, "keep")
        r = run(["--np", "3", "--dry-run", "--keep", keep, "--", ring, "arg with space"])
        rankfile = os.path.join(keep, "rankfile")
        check(r.returncode == 0 and f"--rankfile {rankfile}" in r.stdout and "'arg with space'" in r.stdout,
              "--dry-run prints the mpirun command", r)
        lines = [l for l in open(rankfile).read().splitlines() if l.startswith("rank ")] if os.path.exists(rankfile) else []
        check(len(lines) == 3 and all(re.match(r"rank \d=localhost slot=\d+$", l) for l in lines),
              f"the rankfile has 3 ranks on localhost: {lines}")

        # 4. A matrix whose size is not the rank count: exit 2, naming it.
        if profiles:
            m = os.path.join(cache, profiles[0])
            r = run(["-np", "2", "--matrix", m, "--", ring])
            check(r.returncode == 2 and "has 4 ranks but --np is 2" in r.stderr and m in r.stderr,
                  "wrong matrix size is bad input", r)
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
