#!/usr/bin/env python3
"""Runs the BT-MZ-like nested benchmark of bench/apps/btmz (docs/groups-memory.md,
"BT-MZ") in its variants and prints median times, ratios and, with
--locality, the share of the bytes each task / loop chunk accessed that were
on its own NUMA node.

    python3 bench/apps/btmz/run.py --bin build/bin [--rounds 7] [--threads 2,8]
        [--configs canopy-groups,...] [--size default|small|smoke] [--locality]
        [--max-others 0.1] [--markdown] [--smoke]

Configurations:
  canopy-groups         canopy_bench_btmz_canopy --mode groups: a Bubble per
                        zone with expected work = its points and its arrays attached
  canopy-groups-nowork  --mode groups-nowork: the same split without hints
  canopy-taskgroup      --mode taskgroup: a plain TaskGroup per zone
  omp-nested            canopy_bench_btmz_omp (libgomp): outer team over bins of
                        zones packed by size, inner parallel for over rows;
                        OMP_PLACES=cores OMP_PROC_BIND=spread,close OMP_MAX_ACTIVE_LEVELS=2
Every run is one process (-w 0 -r 1), its result checked against the
sequential reference. Rounds interleave the configurations (round r runs each
once, at each thread count, before round r+1) and a run during which other
processes used more than --max-others of the CPUs is run again, as
bench/apps/run.py does (whose helpers this uses). Ratios: "taskgroup / this"
and "omp / this" are the other's median time over this one's (> 1 = faster);
"groups taken whole": the median over runs of how many times an idle subtree
took a zone's group (Bubble::times_taken, summed over the zones).
--smoke (a test): every configuration once at 2 threads on the smoke size,
then each program once with --inject-error, which must fail its check.
--size small is the size used in the NUMA VMs (bench/apps/numa.sh --runner btmz).
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import run as apps  # noqa: E402  bench/apps/run.py
from benchlib import LINE, collect_with_load_report, table  # noqa: E402

CONFIGS = ["canopy-groups", "canopy-groups-nowork", "canopy-taskgroup", "omp-nested"]
SIZES = {"default": [], "small": ["-n", "256", "-i", "5"], "smoke": ["--smoke"]}
TAKEN = re.compile(r"BTMZ impl=\S+ groups_taken=(\d+)")
OMP_ENV = {"OMP_PLACES": "cores", "OMP_PROC_BIND": "spread,close", "OMP_MAX_ACTIVE_LEVELS": "2"}


def command(args, config, threads):
    if config.startswith("canopy"):
        cmd = [os.path.join(args.bin, "canopy_bench_btmz_canopy"), "--mode", config[len("canopy-"):]]
        env = {"CANOPY_STATS": "1"}
    else:
        cmd, env = [os.path.join(args.bin, "canopy_bench_btmz_omp")], OMP_ENV
    return cmd + ["-t", str(threads), "-w", "0", "-r", "1"] + SIZES[args.size], env


def collect(args):
    """results[(config, threads)] = {"seconds", "local", "stats", "taken": [one per run]}"""
    results = {}
    args.reruns = 0
    args.failures = []
    for _ in range(1 if args.smoke else args.rounds):
        for config in args.configs:
            for t in args.threads:
                cmd, env = command(args, config, t)
                if args.locality:
                    cmd.append("--locality")
                rc, out, err = apps.run_quietly(cmd, env, args)
                lines = list(LINE.finditer(out))
                if rc != 0 or not lines:
                    args.failures.append(f"{config} -t {t}: {' '.join(cmd)} failed ({rc}): {err.strip()[-1500:]}")
                    print(f"FAILED: {args.failures[-1]}", file=sys.stderr)
                    continue
                r = results.setdefault((config, t), {"seconds": [], "local": [], "stats": [], "taken": []})
                r["seconds"] += [float(m.group(5)) for m in lines]
                for m in apps.LOCALITY.finditer(out):
                    local, remote = int(m.group(4)), int(m.group(5))
                    r["local"].append(local / (local + remote) if local + remote else None)
                r["stats"] += [float(m.group(1)) / 100 for m in apps.STATS.finditer(err)]
                r["taken"] += [int(m.group(1)) for m in TAKEN.finditer(out)]
    return results


def check_catches_errors(args):
    """Each program with --inject-error must fail (exit 1): the check works."""
    for config in ("canopy-groups", "omp-nested"):
        cmd, env = command(args, config, args.threads[0])
        rc, _, err = apps.run_capture(cmd + ["--inject-error"], env, timeout=120)
        if rc != 1 or "check failed" not in err:
            args.failures.append(f"{config}: --inject-error exited {rc}, expected 1 with 'check failed': {err.strip()[-300:]}")


def report(results, args):
    for t in args.threads:
        times = {c: apps.med(results.get((c, t), {}).get("seconds", [])) for c in args.configs}
        rows = []
        for c in args.configs:
            r = results.get((c, t))
            if not r:
                continue
            s = times[c]
            row = [c, f"{s:.4g}"]
            for base in ("canopy-taskgroup", "omp-nested"):
                b = times.get(base)
                row.append("-" if b is None else f"{b / s:.2f}")
            taken = apps.med(r["taken"])
            row.append("-" if taken is None else f"{taken:g}")
            if args.locality:
                row += [apps.pct(apps.med(r["local"])), apps.pct(apps.med(r["stats"])) if c.startswith("canopy") else "-"]
            rows.append(row)
        head = ["config", "seconds (median)", "taskgroup / this", "omp / this", "groups taken whole"]
        if args.locality:
            head += ["local bytes (log)", "local bytes (CANOPY_STATS)"]
        table(f"BT-MZ-like, {t} threads, {args.size} size, median of {1 if args.smoke else args.rounds} runs", head,
              rows, args.markdown)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="directory with canopy_bench_btmz_canopy and _omp (build/bin)")
    apps.add_runner_args(ap, rounds=7)
    ap.add_argument("--configs", default=",".join(CONFIGS), help=f"comma separated ({','.join(CONFIGS)})")
    ap.add_argument("--size", default="default", choices=list(SIZES),
                    help="-n 512 -i 30 (default), -n 256 -i 5 (small: the VMs), --smoke")
    ap.add_argument("--smoke", action="store_true", help="every configuration once on the smoke size, checked (a test)")
    args = ap.parse_args()
    apps.parse_threads(ap, args)
    args.configs = apps.parse_names(ap, "--configs", args.configs, CONFIGS)
    if args.smoke:
        args.size, args.locality, args.threads = "smoke", True, [2]
    results = collect_with_load_report(collect, args)
    report(results, args)
    if args.smoke:
        check_catches_errors(args)
    return apps.finish(args)


if __name__ == "__main__":
    sys.exit(main())
