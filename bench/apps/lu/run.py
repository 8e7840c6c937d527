#!/usr/bin/env python3
"""Runs the blocked LU of bench/apps/lu (docs/groups-memory.md, "Blocked LU")
in its placement variants and prints median times and, with --locality, the
share of the bytes each task accessed that were on its own NUMA node and
what next-touch / next-write migrated, and the share of the tasks that ran
on the busiest node (CANOPY_STATS's per-worker table: a high local share
bought by running everything on one node shows there).

    python3 bench/apps/lu/run.py --bin build/bin [--rounds 7] [--threads 2]
        [--variants first-touch,interleave,next-write,next-touch]
        [--size default|small|smoke] [--locality] [--markdown] [--smoke]

Variants (canopy_bench_lu_canopy --placement VARIANT; the main thread fills
the matrix, then the factorisation runs as data-flow tasks):
  first-touch   every page where the main thread first wrote it
  interleave    pages round robin over the nodes (DataPlacement::interleaved)
  next-write    first touch, then every tile marked next-write
  next-touch    first touch, then every tile marked next-touch
Every run is one process, CANOPY_STATS=1, its result checked. Rounds
interleave the variants (round r runs each once before round r+1) and a run
during which other processes used more than --max-others of the CPUs is run
again, as bench/apps/run.py does (whose helpers this uses).
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "common"))
import run as apps  # noqa: E402  bench/apps/run.py
from benchlib import LINE, collect_with_load_report, table  # noqa: E402

VARIANTS = ["first-touch", "interleave", "next-write", "next-touch"]
SIZES = {"default": [], "small": ["-n", "512"], "smoke": ["--smoke"]}
# A row of CANOPY_STATS's per-worker table: worker, numa node, tasks, ...
WORKER_ROW = re.compile(r"(?m)^\s*\d+\s+(-?\d+)\s+(\d+)\s+\d+\s+\d+\s+\d+\s+\d+\s+[\d.]+\s")
MIGRATED = re.compile(r"canopy stats: data: next-touch/next-write: (\d+) marks claimed, ([\d.]+) MB migrated")


def collect(args):
    """results[(variant, threads)] = {"seconds", "local", "stats", "migrated_mb": [one per run]}"""
    results = {}
    args.reruns = 0
    args.failures = []
    exe = os.path.join(args.bin, "canopy_bench_lu_canopy")
    for _ in range(1 if args.smoke else args.rounds):
        for v in args.variants:
            for t in args.threads:
                cmd = [exe, "-t", str(t), "-w", "0", "-r", "1", "--placement", v] + SIZES[args.size]
                if args.locality:
                    cmd.append("--locality")
                rc, out, err = apps.run_quietly(cmd, {"CANOPY_STATS": "1"}, args)
                if rc != 0:
                    args.failures.append(f"{v} -t {t}: {' '.join(cmd)} failed ({rc}): {err.strip()[-1500:]}")
                    print(f"FAILED: {args.failures[-1]}", file=sys.stderr)
                    continue
                r = results.setdefault((v, t), {"seconds": [], "local": [], "stats": [], "migrated_mb": [], "busiest": []})
                r["seconds"] += [float(m.group(5)) for m in LINE.finditer(out)]
                for m in apps.LOCALITY.finditer(out):
                    local, remote = int(m.group(4)), int(m.group(5))
                    r["local"].append(local / (local + remote) if local + remote else None)
                r["stats"] += [float(m.group(1)) / 100 for m in apps.STATS.finditer(err)]
                per_node = {}
                for m in WORKER_ROW.finditer(err):
                    per_node[m.group(1)] = per_node.get(m.group(1), 0) + int(m.group(2))
                if sum(per_node.values()):
                    r["busiest"].append(max(per_node.values()) / sum(per_node.values()))
                r["migrated_mb"].append(sum(float(m.group(2)) for m in MIGRATED.finditer(err)))
    return results


def report(results, args):
    for t in args.threads:
        base = apps.med(results.get(("first-touch", t), {}).get("seconds", []))
        rows = []
        for v in args.variants:
            r = results.get((v, t))
            if not r:
                continue
            s = apps.med(r["seconds"])
            row = [v, "-" if s is None else f"{s:.4g}", "-" if s is None or base is None else f"{base / s:.2f}"]
            if args.locality:
                row += [apps.pct(apps.med(r["local"])), apps.pct(apps.med(r["stats"])),
                        f"{apps.med(r['migrated_mb']):.1f}", apps.pct(apps.med(r["busiest"]))]
            rows.append(row)
        head = ["variant", "seconds (median)", "first-touch / this"]
        if args.locality:
            head += ["local bytes (log)", "local bytes (CANOPY_STATS)", "MB migrated by marks", "tasks on busiest node"]
        table(f"LU, {t} threads, {args.size} size, median of {1 if args.smoke else args.rounds} runs", head, rows,
              args.markdown)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="directory with canopy_bench_lu_canopy (build/bin)")
    apps.add_runner_args(ap, rounds=7)
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"comma separated ({','.join(VARIANTS)})")
    ap.add_argument("--size", default="default", choices=list(SIZES), help="n = 1024 (default), 512 (small), 128")
    ap.add_argument("--smoke", action="store_true", help="every variant once on the smoke size, checked (a test)")
    args = ap.parse_args()
    apps.parse_threads(ap, args)
    args.variants = apps.parse_names(ap, "--variants", args.variants, VARIANTS)
    if args.smoke:
        args.size = "smoke"
        args.locality = True
    results = collect_with_load_report(collect, args)
    report(results, args)
    return apps.finish(args)


if __name__ == "__main__":
    sys.exit(main())
