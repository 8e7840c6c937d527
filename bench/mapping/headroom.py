#!/usr/bin/env python3
"""How much lower could canopy's geometric mean go? (docs/policies/canopy.md)

    headroom.py --canopy BUILD --from-json results.json [--max-tasks N]
                [--regime full,spread,packed] [--starts canopy,random,choicemap]
                [--moves N] [--runs N] [--exclude alltoall] [--out probe.jsonl]

Reads a run.py --json file, picks the runs where canopy is not tied with the
best of the others (cost ratio below 0.9995) and that have at most
--max-tasks tasks, runs BUILD/bin/canopy_mapping_headroom on each (annealing
from each start: canopy's placement, a random filling of the same slots,
other policies' placements), and prints per regime canopy's geometric-mean
ratio to the best of the others next to the same figure with the best
placement found (the "best known"), and the ratio the untied runs would need
for the bar (geometric mean <= 0.97, ties counted as they are). Lines already
in --out are reused, so an interrupted probe resumes.
"""
import argparse
import collections
import json
import math
import os
import subprocess
import sys

TIE = 0.9995  # below this, canopy is strictly lower than every other


def load_runs(path):
    """(case, regime) -> (canopy cost, best other cost, best other name, tasks)."""
    d = json.load(open(path))
    best = collections.defaultdict(lambda: (math.inf, ""))
    canopy, tasks = {}, {}
    for r in d["records"]:
        if r.get("status") != "ok" or not r.get("valid", True):
            continue
        k = (r["case"], r["regime"])
        tasks[k] = r.get("tasks", 0)
        c = r["cost"]["weighted"]
        if r["policy"] == "canopy":
            canopy[k] = c
        elif c < best[k][0]:
            best[k] = (c, r["policy"])
    return {k: (canopy[k], best[k][0], best[k][1], tasks[k]) for k in canopy if best[k][0] < math.inf}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--canopy", default="build", help="canopy build directory (default build)")
    ap.add_argument("--from-json", required=True, help="a run.py --json file (the standard suite)")
    ap.add_argument("--manifest", help="default BUILD/bench-mapping/manifest.json")
    ap.add_argument("--tool", help="the probe binary (default BUILD/bin/canopy_mapping_headroom)")
    ap.add_argument("--regime", default="full,spread,packed")
    ap.add_argument("--max-tasks", type=int, default=1000)
    ap.add_argument("--starts", default="canopy,random,choicemap,treematch,eagermap")
    ap.add_argument("--moves", type=int, default=2000000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--exclude", default="", help="skip cases whose name contains one of these (comma-separated), "
                    "e.g. alltoall: dense rows make every move cost O(tasks)")
    ap.add_argument("--out", default="headroom.jsonl")
    a = ap.parse_args()
    tool = a.tool or os.path.join(a.canopy, "bin", "canopy_mapping_headroom")
    manifest = a.manifest or os.path.join(a.canopy, "bench-mapping", "manifest.json")
    runs = load_runs(a.from_json)
    regimes = a.regime.split(",")
    done = {}
    if os.path.exists(a.out):
        for line in open(a.out):
            if line.startswith("{"):
                x = json.loads(line)
                done[(x["case"], x["regime"])] = x["best"]
    todo = sorted(k for k, (c, b, _, t) in runs.items()
                  if k[1] in regimes and c / b < TIE and t <= a.max_tasks and k not in done
                  and not any(x and x in k[0] for x in a.exclude.split(",")))
    for i, (case, regime) in enumerate(todo):
        print(f"headroom.py: {i + 1}/{len(todo)} {case} {regime}", file=sys.stderr)
        out = subprocess.run([tool, "--manifest", manifest, "--only", case, "--regime", regime, "--starts", a.starts,
                              "--moves", str(a.moves), "--runs", str(a.runs)], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"headroom.py: {case} {regime}: {out.stderr.strip()}")
        with open(a.out, "a") as f:
            for line in out.stdout.splitlines():
                if line.startswith("{"):
                    f.write(line + "\n")
                    x = json.loads(line)
                    done[(x["case"], x["regime"])] = x["best"]

    print("| regime | runs | untied | probed | canopy / best other | best known / best other | untied now | untied, bar needs |")
    print("|---|---|---|---|---|---|---|---|")
    for regime in regimes:
        ks = [k for k in runs if k[1] == regime]
        if not ks:
            continue
        untied = [k for k in ks if runs[k][0] / runs[k][1] < TIE]
        probed = [k for k in untied if k in done]
        g = lambda f: math.exp(sum(math.log(f(k)) for k in ks) / len(ks))
        now = g(lambda k: runs[k][0] / runs[k][1])
        known = g(lambda k: min(runs[k][0], done.get(k, math.inf)) / runs[k][1])
        # The untied runs' geometric mean that would bring the regime to 0.97.
        tied_log = sum(math.log(runs[k][0] / runs[k][1]) for k in ks if k not in untied)
        need = math.exp((len(ks) * math.log(0.97) - tied_log) / len(untied)) if untied else float("nan")
        untied_now = math.exp(sum(math.log(runs[k][0] / runs[k][1]) for k in untied) / len(untied)) if untied else 1
        print(f"| {regime} | {len(ks)} | {len(untied)} | {len(probed)} | {now:.4f} | {known:.4f} | {untied_now:.4f} | "
              f"{need:.4f} |")
    print()
    print("| case | regime | canopy / best other | best known / canopy | best other |")
    print("|---|---|---|---|---|")
    for k in sorted(done, key=lambda k: (k[1], done[k] / runs[k][0] if k in runs else 1)):
        if k in runs and k[1] in regimes and done[k] < runs[k][0] * (1 - 1e-9):
            print(f"| {k[0]} | {k[1]} | {runs[k][0] / runs[k][1]:.4f} | {done[k] / runs[k][0]:.4f} | {runs[k][2]} |")


if __name__ == "__main__":
    main()
