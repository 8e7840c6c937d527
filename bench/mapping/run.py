#!/usr/bin/env python3
"""Runs the mapping-quality benchmark and prints its tables.

    run.py [--canopy BUILD] [--policies a,b] [--filter s1,s2] [--regime r]
           [--repeat N] [--jobs N] [--timeout S] [--json out.json] [--markdown]
    run.py --scale [--timeout S] [--one-process] ...  # 5,000 and 131,072 tasks, a process per policy
    run.py --from-json out.json [--markdown] # the tables again, without running

Generates the cases (gen_cases.py) into BUILD/bench-mapping when they are
missing or older than the generator, runs BUILD/bin/canopy_mapping_bench on
each case (one process per case, --jobs 1 by default so that times are fair),
and prints, per case and regime, each policy's distance-weighted cost as a
ratio to the best of all (policies and Scotch), with its time; then the
geometric-mean ratio per policy and regime. When a policy named "canopy" is
present (or --reference NAME), it also compares it with the best of the
others, case by case. See docs/bench-mapping.md.
"""
import argparse
import concurrent.futures
import json
import math
import os
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
GEN = os.path.join(HERE, "gen_cases.py")
REGIME_ORDER = ["full", "over", "spread", "packed"]
TIE = 1.005  # within 0.5% counts as a tie (issue 3)


def die(msg, code=2):
    print(f"run.py: {msg}", file=sys.stderr)
    sys.exit(code)


def ensure_cases(cases_dir, suite):
    manifest = os.path.join(cases_dir, "manifest.json" if suite == "standard" else "scale.json")
    if not os.path.exists(manifest) or os.path.getmtime(manifest) < os.path.getmtime(GEN):
        print(f"run.py: generating the {suite} cases into {cases_dir}", file=sys.stderr)
        subprocess.run([sys.executable, GEN, "--out", cases_dir, "--suite", suite], check=True,
                       stdout=sys.stderr)
    return manifest


def load_manifest(path):
    with open(path) as f:
        return json.load(f)["cases"]


def bench_args(args):
    out = ["--repeat", str(args.repeat), "--scotch-strategy", args.scotch_strategy]
    if args.timeout:
        out += ["--timeout", str(args.timeout)]
    if args.weights:
        out += ["--weights", args.weights]
    if args.regime:
        out += ["--regime", args.regime]
    return out + args.bench_arg


def list_policies(bench, selected, extra=()):
    out = subprocess.run([bench, "--list"] + list(extra) +
                         (["--policy", selected] if selected else []),
                         capture_output=True, text=True)
    if out.returncode != 0:
        die(out.stderr.strip() or f"{bench} --list failed")
    return [l.split(" ", 1)[1] for l in out.stdout.splitlines() if l.startswith("policy ")]


def parse_lines(text):
    recs = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                recs.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return recs


def run_case(bench, manifest, case, policies, extra, wall_limit):
    """All (regime, policy) lines of one case. A process that stops early (a
    run over --timeout, or a crash) is resumed with the policies not yet
    reported; a crash is charged to the first of them."""
    regimes = [r for r in case["regimes"] if not extra_regime(extra) or r in extra_regime(extra)]
    want = [(r, p) for r in regimes for p in policies]
    got = {}
    todo = list(want)
    while todo:
        pols = [p for p in policies if any(q == p for _, q in todo)]
        regs = [r for r in regimes if any(q == r for q, _ in todo)]
        cmd = [bench, "--manifest", manifest, "--only", case["name"], "--policy", ",".join(pols),
               "--regime", ",".join(regs)] + strip_regime(extra)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=wall_limit)
            rc, out, err = proc.returncode, proc.stdout, proc.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
            rc, err = -9, "killed: over the process wall-clock limit"
        before = len(todo)
        for rec in parse_lines(out):
            key = (rec.get("regime"), rec.get("policy"))
            if key in todo:
                got[key] = rec
        todo = [k for k in todo if k not in got]
        if rc == 2:
            die(f"{case['name']}: {err.strip()}")
        if rc == 0 or not todo:
            break  # done; anything left was not asked for
        if rc == 3 and len(todo) < before:
            continue  # a run timed out and said so: go on with the rest
        first = todo.pop(0)  # crashed or killed: charge the first run not reported
        got[first] = {"case": case["name"], "regime": first[0], "policy": first[1],
                      "status": "timeout" if rc in (3, -9) else "crashed", "valid": False,
                      "machine": case.get("machine", ""), "family": case.get("family", ""),
                      "tasks": case["tasks"], "pus": case["pus"],
                      "error": f"exit status {rc}: {err.strip()[-300:]}"}
    return [got[k] for k in want if k in got]


def extra_regime(extra):
    if "--regime" in extra:
        return extra[extra.index("--regime") + 1].split(",")
    return None


def strip_regime(extra):
    out, skip = [], False
    for a in extra:
        if skip:
            skip = False
            continue
        if a == "--regime":
            skip = True
            continue
        out.append(a)
    return out


# ---------------------------------------------------------------- tables

def fmt_time(s):
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.0f}us"
    if s < 1:
        return f"{s * 1e3:.1f}ms"
    return f"{s:.2f}s"


def fmt_mem(kb):
    if kb is None or kb < 0:
        return "-"
    return f"{kb / 1024:.1f}MB"


def geomean(xs):
    xs = [x for x in xs if x and x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def cost_of(rec):
    if rec.get("status") != "ok":
        return None
    return rec["cost"]["weighted"]


def time_of(rec, clock):
    return rec.get("cpu_s") if clock == "cpu" else rec.get("time_s")


def analyse(records, reference, clock="wall"):
    groups = {}
    for r in records:
        groups.setdefault((r["case"], r["regime"]), {})[r["policy"]] = r
    policies = []
    for r in records:
        if r["policy"] not in policies:
            policies.append(r["policy"])
    rows = []
    for (case, regime), by in groups.items():
        costs = {p: cost_of(r) for p, r in by.items()}
        valid = [c for c in costs.values() if c is not None]
        best = min(valid) if valid else None
        row = {"case": case, "regime": regime, "best": best, "cells": {}}
        for p, r in by.items():
            c = costs[p]
            if best is not None and c is not None:
                ratio = c / best if best > 0 else (1.0 if c == 0 else math.inf)
            else:
                ratio = None
            row["cells"][p] = {"ratio": ratio, "status": r.get("status"), "time_s": time_of(r, clock),
                               "rss_kb": r.get("peak_rss_delta_kb"), "cost": c}
        if reference in by and costs.get(reference) is not None:
            others = [c for p, c in costs.items() if p != reference and c is not None]
            if others:
                bo = min(others)
                row["ref_vs_best_other"] = costs[reference] / bo if bo > 0 else (1.0 if costs[reference] == 0
                                                                                  else math.inf)
        rows.append(row)
    regime_rank = {r: i for i, r in enumerate(REGIME_ORDER)}
    rows.sort(key=lambda r: (regime_rank.get(r["regime"], 9), r["case"]))
    summary = {}
    for regime in sorted({r["regime"] for r in rows}, key=lambda x: regime_rank.get(x, 9)):
        rr = [r for r in rows if r["regime"] == regime]
        s = {"cases": len(rr), "policies": {}}
        for p in policies:
            cells = [r["cells"][p] for r in rr if p in r["cells"]]
            ratios = [c["ratio"] for c in cells if c["ratio"] is not None]
            s["policies"][p] = {
                "geomean_ratio": geomean(ratios), "worst_ratio": max(ratios) if ratios else None,
                "best_or_tied": sum(1 for x in ratios if x <= TIE), "runs": len(cells),
                "failed": sum(1 for c in cells if c["status"] != "ok"),
                "total_time_s": sum(c["time_s"] or 0 for c in cells),
            }
        ref = [r["ref_vs_best_other"] for r in rr if "ref_vs_best_other" in r]
        if ref:
            s["reference"] = {"name": reference, "geomean_vs_best_other": geomean(ref),
                              "worst_vs_best_other": max(ref),
                              "lowest_or_tied": sum(1 for x in ref if x <= TIE), "cases": len(ref)}
        summary[regime] = s
    return policies, rows, summary


def render(table, markdown):
    """table: list of rows (lists of strings), first row is the header."""
    if markdown:
        out = ["| " + " | ".join(table[0]) + " |", "|" + "|".join("---" for _ in table[0]) + "|"]
        out += ["| " + " | ".join(r) + " |" for r in table[1:]]
        return "\n".join(out)
    widths = [max(len(r[i]) for r in table) for i in range(len(table[0]))]
    lines = []
    for k, r in enumerate(table):
        lines.append("  ".join(c.ljust(widths[i]) if i < 2 else c.rjust(widths[i]) for i, c in enumerate(r)))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def cell_text(c):
    if c["status"] != "ok":
        return c["status"]
    r = c["ratio"]
    return f"{r:.3f} {fmt_time(c['time_s'])}" if r is not None else "-"


def print_tables(policies, rows, summary, reference, markdown, clock="wall", out=sys.stdout):
    has_ref = any("ref_vs_best_other" in r for r in rows)
    head = ["case", "regime", "best cost"] + policies + ([f"{reference}/best other"] if has_ref else [])
    table = [head]
    for r in rows:
        line = [r["case"], r["regime"], f"{r['best']:.4g}" if r["best"] is not None else "-"]
        line += [cell_text(r["cells"][p]) if p in r["cells"] else "" for p in policies]
        if has_ref:
            line.append(f"{r['ref_vs_best_other']:.3f}" if "ref_vs_best_other" in r else "-")
        table.append(line)
    print("Weighted cost / best of all policies and Scotch (lower is better), with each policy's "
          f"{'CPU' if clock == 'cpu' else 'wall'} time (median)\n", file=out)
    print(render(table, markdown), file=out)

    print("\nSummary per regime: geometric mean of cost / best (cases where the policy is best or tied within "
          "0.5%, worst ratio, failed runs, total time)\n", file=out)
    table = [["regime", "cases"] + policies]
    for regime, s in summary.items():
        line = [regime, str(s["cases"])]
        for p in policies:
            ps = s["policies"][p]
            g = ps["geomean_ratio"]
            txt = (f"{g:.3f} ({ps['best_or_tied']} best, worst {ps['worst_ratio']:.2f}"
                   if g is not None else "- (")
            if ps["failed"]:
                txt += f", {ps['failed']} failed"
            txt += f", {fmt_time(ps['total_time_s'])})"
            line.append(txt)
        table.append(line)
    line = ["all", str(len(rows))]
    for p in policies:
        ratios = [r["cells"][p]["ratio"] for r in rows if p in r["cells"] and r["cells"][p]["ratio"] is not None]
        g = geomean(ratios)
        line.append(f"{g:.3f}" if g else "-")
    table.append(line)
    print(render(table, markdown), file=out)
    if has_ref:
        print(f"\n'{reference}' against the best of all the others, per regime\n", file=out)
        table = [["regime", "cases", "geomean", "worst", "lowest or tied (0.5%)"]]
        for regime, s in summary.items():
            if "reference" in s:
                x = s["reference"]
                table.append([regime, str(x["cases"]), f"{x['geomean_vs_best_other']:.3f}",
                              f"{x['worst_vs_best_other']:.3f}", f"{x['lowest_or_tied']}/{x['cases']}"])
        print(render(table, markdown), file=out)


# ---------------------------------------------------------------- scale

def run_scale_one(bench, manifest, case, policy, args):
    """One policy on one case in its own process; returns its record with the
    process's peak RSS (from wait4) added."""
    cmd = [bench, "--manifest", manifest, "--only", case["name"], "--policy", policy, "--repeat", "1",
           "--scotch-strategy", args.scotch_strategy]
    if args.timeout:
        cmd += ["--timeout", str(args.timeout)]
    if args.weights:
        cmd += ["--weights", args.weights]
    cmd += args.bench_arg
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err)
        limit = (args.timeout or 3600) + args.load_allowance
        status, usage = None, None
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > limit:
                proc.kill()
                pid, status, usage = os.wait4(proc.pid, 0)
                status = -9
                break
            time.sleep(0.05)
        proc.returncode = 0  # reaped by wait4 above; keep Popen from waiting again
        out.seek(0)
        err.seek(0)
        recs = [r for r in parse_lines(out.read()) if r["policy"] == policy]
        errtext = err.read().strip()
    rec = recs[-1] if recs else {"case": case["name"], "regime": case["regimes"][0], "policy": policy,
                                 "status": "timeout" if status == -9 else "crashed", "valid": False,
                                 "error": errtext[-300:] or f"wait status {status}"}
    rec["process_max_rss_kb"] = usage.ru_maxrss if usage else None
    rec["process_wall_s"] = time.monotonic() - start
    return rec


def scale(args, bench):
    manifest = ensure_cases(args.cases, "scale")
    cases = [c for c in load_manifest(manifest) if not args.filter or any(f in c["name"] for f in
                                                                           args.filter.split(","))]
    policies = list_policies(bench, args.policies, args.bench_arg)
    records = []
    for case in cases:
        if args.one_process:
            # Load the machine once for all policies (hwloc needs minutes for
            # 131,072 PUs); memory is then only the in-process figure.
            print(f"run.py: {case['name']} ...", file=sys.stderr, flush=True)
            extra = ["--repeat", "1", "--scotch-strategy", args.scotch_strategy] + args.bench_arg
            if args.timeout:
                extra += ["--timeout", str(args.timeout)]
            if args.weights:
                extra += ["--weights", args.weights]
            records += run_case(bench, manifest, case, policies, extra, None)
            continue
        for p in policies:
            print(f"run.py: {case['name']} {p} ...", file=sys.stderr, flush=True)
            rec = run_scale_one(bench, manifest, case, p, args)
            records.append(rec)
    print_scale_table(records, args.markdown, args.clock)
    return records


def print_scale_table(records, markdown, clock="wall"):
    best = {}
    for r in records:
        c = cost_of(r)
        if c is not None:
            best[r["case"]] = min(best.get(r["case"], c), c)
    table = [["case", "policy", "status", "cost / best", "time", "policy peak RSS", "process max RSS"]]
    for r in records:
        c = cost_of(r)
        ratio = f"{c / best[r['case']]:.3f}" if c is not None and best.get(r["case"]) else "-"
        table.append([r["case"], r["policy"], r.get("status", "?"), ratio,
                      fmt_time(time_of(r, clock)) if r.get("status") == "ok" else "-",
                      fmt_mem(r.get("peak_rss_delta_kb")), fmt_mem(r.get("process_max_rss_kb"))])
    print("Scale: time is the mapping alone; policy peak RSS is the memory the mapping added; process max RSS "
          "(one process per policy) also counts loading the topology and the matrix\n")
    print(render(table, markdown))


# ---------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--canopy", default="build", metavar="BUILD", help="canopy build directory (default %(default)s)")
    ap.add_argument("--bench", help="the canopy_mapping_bench binary (default BUILD/bin/canopy_mapping_bench)")
    ap.add_argument("--cases", help="where the cases are generated (default BUILD/bench-mapping)")
    ap.add_argument("--manifest", help="run this manifest instead of the generated suite")
    ap.add_argument("--policies", "--policy", default="", help="only these policies (comma-separated; 'scotch' too)")
    ap.add_argument("--filter", default="", help="only cases whose name contains one of these (comma-separated)")
    ap.add_argument("--regime", default="", help="only these regimes: full, over, spread, packed")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement, median time (default %(default)s)")
    ap.add_argument("--jobs", type=int, default=1, help="cases run at once (default 1: fair times)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds one mapping may take (default %(default)s)")
    ap.add_argument("--load-allowance", type=float, default=600,
                    help="--scale: extra seconds per process for loading the topology (default %(default)s)")
    ap.add_argument("--weights", default="", help="cost weights per level, root first (default canopy's)")
    ap.add_argument("--scotch-strategy", default="quality", choices=["quality", "default", "speed", "balance"])
    ap.add_argument("--reference", default="canopy", help="policy compared with the best of the others")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="time shown: wall (default) or the process's CPU time (steadier on a shared machine)")
    ap.add_argument("--json", metavar="FILE", help="write every result and the summary as JSON")
    ap.add_argument("--markdown", action="store_true", help="print markdown tables")
    ap.add_argument("--bench-arg", action="append", default=[], metavar="ARG",
                    help="pass ARG to canopy_mapping_bench (repeatable), e.g. --bench-arg=--self-test-sleep=5")
    ap.add_argument("--scale", action="store_true", help="the scale cases: 5,000 and 131,072 tasks")
    ap.add_argument("--one-process", action="store_true",
                    help="--scale: all policies of a case in one process (faster; no per-process max RSS)")
    ap.add_argument("--from-json", metavar="FILE", help="print the tables of an earlier --json file")
    args = ap.parse_args(argv)

    if args.from_json:
        with open(args.from_json) as f:
            data = json.load(f)
        if data.get("scale"):
            print_scale_table(data["records"], args.markdown, args.clock)
            return 0
        policies, rows, summary = analyse(data["records"], args.reference, args.clock)
        print_tables(policies, rows, summary, args.reference, args.markdown, args.clock)
        return 0

    build = args.canopy if os.path.isabs(args.canopy) else os.path.join(os.getcwd(), args.canopy)
    bench = args.bench or os.path.join(build, "bin", "canopy_mapping_bench")
    if not os.access(bench, os.X_OK):
        die(f"{bench} not found: build it first (cmake --build {args.canopy} --target canopy_mapping_bench)")
    args.cases = args.cases or os.path.join(build, "bench-mapping")
    command = "python3 bench/mapping/run.py " + " ".join(shlex.quote(a) for a in (argv or sys.argv[1:]))

    if args.scale:
        records = scale(args, bench)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"command": command, "scale": True, "records": records}, f, indent=1)
        return 0

    manifest = args.manifest or ensure_cases(args.cases, "standard")
    cases = load_manifest(manifest)
    if args.filter:
        cases = [c for c in cases if any(f in c["name"] for f in args.filter.split(","))]
    if not cases:
        die("no case matches --filter")
    policies = list_policies(bench, args.policies, args.bench_arg)
    extra = bench_args(args)
    wall_limit = (args.timeout * args.repeat + 60) * len(policies) * 2 if args.timeout else None

    records = []
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run_case, bench, manifest, c, policies, extra, wall_limit) for c in cases]
        for k, fut in enumerate(futures):
            records += fut.result()
            print(f"\rrun.py: {k + 1}/{len(cases)} cases, {time.monotonic() - t0:.0f} s", end="",
                  file=sys.stderr, flush=True)
    print(file=sys.stderr)

    policies_seen, rows, summary = analyse(records, args.reference, args.clock)
    print_tables(policies_seen, rows, summary, args.reference, args.markdown, args.clock)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": command, "manifest": manifest, "records": records, "summary": summary}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
