#!/usr/bin/env python3
"""Smoke test of bench/mapping (ctest bench_mapping_smoke, label "bench").

Runs canopy_mapping_bench on tiny cases (16 tasks: full subscription, under
with both regimes, oversubscription by an integer and a non-integer factor,
an unbalanced XML machine) and checks that every registered policy and
Scotch report a valid, deterministic placement with a cost; that Scotch's
packed regime stays in one NUMA node; that bad input is refused with exit
status 2 and a message naming it; that the --timeout watchdog stops a slow
mapper; and that run.py resumes after it and prints its tables.
"""
import argparse
import json
import os
import subprocess
import sys

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


def lines(text):
    return [json.loads(l) for l in text.splitlines() if l.startswith("{")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    a.bench, a.source, a.work = (os.path.abspath(x) for x in (a.bench, a.source, a.work))
    os.makedirs(a.work, exist_ok=True)
    data = os.path.join(a.source, "data", "matrices")
    here = os.path.join(a.source, "bench", "mapping")

    out = run([a.bench, "--list"])
    check(out.returncode == 0, f"--list exit status {out.returncode}: {out.stderr}")
    policies = [l.split(" ", 1)[1] for l in out.stdout.splitlines() if l.startswith("policy ")]
    check("scotch" in policies and len(policies) >= 2, f"policies listed: {policies}")

    cases = [
        ("a2a16-full", "alltoall_16.mtx", "pack:2 numa:1 core:4 pu:2", ["full"]),
        ("rln16-under", "random_lognormal_16.mtx", "pack:2 numa:1 core:8 pu:2", ["spread", "packed"]),
        ("pipe28-under", "pipeline_28.mtx", "pack:4 numa:2 core:2 pu:2", ["spread", "packed"]),
        ("a2a16-over2", "alltoall_16.mtx", "pack:2 numa:1 core:2 pu:2", ["over"]),
        ("rln16-over2.67", "random_lognormal_16.mtx", "pack:2 numa:1 core:3 pu:1", ["over"]),
        ("a2a16-unbalanced", "alltoall_16.mtx", os.path.join(here, "testdata", "unbalanced_14pu.xml"), ["over"]),
    ]
    manifest = {"format": 1, "cases": [
        {"name": n, "matrix": os.path.join(data, m), "topology": t, "regimes": r}
        for n, m, t, r in cases]}
    mpath = os.path.join(a.work, "manifest.json")
    with open(mpath, "w") as f:
        json.dump(manifest, f)

    out = run([a.bench, "--manifest", mpath, "--repeat", "2"])
    check(out.returncode == 0, f"bench exit status {out.returncode}: {out.stderr}")
    recs = lines(out.stdout)
    got = {(r["case"], r["regime"], r["policy"]): r for r in recs}
    for name, _, _, regimes in cases:
        for regime in regimes:
            for p in policies:
                r = got.get((name, regime, p))
                check(r is not None, f"no line for {name} {regime} {p}")
                if r is None:
                    continue
                where = f"{name} {regime} {p}"
                check(r["status"] == "ok" and r["valid"], f"{where}: status {r['status']} {r.get('error', '')}")
                check(r.get("cost", {}).get("weighted", -1) >= 0, f"{where}: no cost")
                check(r.get("deterministic") is True, f"{where}: two runs gave different placements")
                check(len(r.get("times", [])) == 2 and r["time_s"] >= 0, f"{where}: times {r.get('times')}")
                check(r["max_load"] <= -(-r["tasks"] // r["pus"]), f"{where}: max load {r['max_load']}")
    s = got.get(("rln16-under", "packed", "scotch"))
    check(s is not None and s.get("numa_used") == 1, f"scotch packed should use one NUMA node: {s}")
    s = got.get(("rln16-under", "spread", "scotch"))
    check(s is not None and s.get("numa_used") == 2, f"scotch spread should use both NUMA nodes: {s}")

    # Packed: Scotch's region is the NUMA nodes canopy's --pack fills (28
    # tasks, NUMA nodes of 4 PUs, packages of 8: three packages and a node).
    for p in policies:
        r = got.get(("pipe28-under", "packed", p))
        check(r is not None and r.get("numa_used") == 7, f"pipe28-under packed {p}: NUMA nodes used {r and r.get('numa_used')}")

    # Bad input: exit 2 and the message names what is wrong.
    out = run([a.bench, "--matrix", os.path.join(a.work, "missing.mtx"), "--topology", "pack:2 pu:2"])
    check(out.returncode == 2 and "missing.mtx" in out.stderr, f"missing matrix: {out.returncode} {out.stderr}")
    out = run([a.bench, "--manifest", mpath, "--policy", "nosuch"])
    check(out.returncode == 2 and "nosuch" in out.stderr, f"unknown policy: {out.returncode} {out.stderr}")
    bad = os.path.join(a.work, "bad.json")
    with open(bad, "w") as f:
        json.dump({"cases": [{"name": "x", "matrix": "m.mtx", "topology": "pu:2", "regimes": ["sideways"]}]}, f)
    out = run([a.bench, "--manifest", bad])
    check(out.returncode == 2 and "sideways" in out.stderr and "bad.json" in out.stderr,
          f"bad regime: {out.returncode} {out.stderr}")

    # The watchdog stops a mapper that takes too long, with a line saying so.
    out = run([a.bench, "--manifest", mpath, "--only", "a2a16-full", "--policy", "sleep", "--self-test-sleep", "30",
               "--timeout", "0.3", "--repeat", "1"])
    recs = lines(out.stdout)
    check(out.returncode == 3 and recs and recs[0]["status"] == "timeout",
          f"watchdog: exit {out.returncode}, lines {recs}")

    # run.py: resumes after the timeout, tables in markdown, JSON out.
    jpath = os.path.join(a.work, "results.json")
    first = policies[0]
    out = run([sys.executable, os.path.join(here, "run.py"), "--bench", a.bench, "--manifest", mpath,
               "--policies", f"{first},sleep,scotch", "--bench-arg=--self-test-sleep=30", "--timeout", "0.3",
               "--repeat", "1", "--filter", "a2a16", "--markdown", "--json", jpath])
    check(out.returncode == 0, f"run.py exit status {out.returncode}: {out.stderr}")
    check("| case | regime |" in out.stdout and "Summary per regime" in out.stdout, "run.py tables missing")
    res = []
    if os.path.exists(jpath):
        with open(jpath) as f:
            res = json.load(f)["records"]
    status = {(r["case"], r["policy"]): r["status"] for r in res}
    for c in ("a2a16-full", "a2a16-over2", "a2a16-unbalanced"):
        check(status.get((c, "sleep")) == "timeout", f"run.py: {c} sleep -> {status.get((c, 'sleep'))}")
        check(status.get((c, "scotch")) == "ok", f"run.py did not resume after the timeout on {c}")
        check(status.get((c, first)) == "ok", f"run.py: {c} {first} -> {status.get((c, first))}")

    # The headroom probe (built beside the driver): annealing never returns a
    # placement dearer than its start, the same lines twice, bad input -> 2;
    # headroom.py turns a run.py JSON file into its table.
    probe = os.path.join(os.path.dirname(a.bench), "canopy_mapping_headroom")
    check(os.path.exists(probe), f"{probe} not built")
    if os.path.exists(probe):
        cmd = [probe, "--manifest", mpath, "--only", "rln16-under", "--starts", "canopy,random,compact",
               "--moves", "20000", "--runs", "2"]
        outs = [run(cmd) for _ in range(2)]
        recs = [lines(o.stdout) for o in outs]
        check(outs[0].returncode == 0 and len(recs[0]) == 2, f"headroom: exit {outs[0].returncode} {outs[0].stderr}")
        for r in recs[0]:
            check(r["best"] <= r["reference_cost"], f"headroom: best {r['best']} above canopy's {r['reference_cost']}")
            for name, st in r["starts"].items():
                check(st["best"] <= st["start_cost"], f"headroom: start {name} got dearer: {st}")
        strip = lambda rs: [{k: v for k, v in r.items() if k != "cpu_s"} for r in rs]
        check(strip(recs[0]) == strip(recs[1]), "headroom: two runs differ")
        out = run([probe, "--manifest", mpath, "--starts", "nosuch"])
        check(out.returncode == 2 and "nosuch" in out.stderr, f"headroom bad start: {out.returncode} {out.stderr}")
        cj = os.path.join(a.work, "canopy_results.json")
        out = run([sys.executable, os.path.join(here, "run.py"), "--bench", a.bench, "--manifest", mpath,
                   "--policies", "canopy,compact,scotch", "--repeat", "1", "--filter", "rln16", "--json", cj])
        hp = os.path.join(a.work, "probe.jsonl")
        if os.path.exists(hp):
            os.remove(hp)
        out = run([sys.executable, os.path.join(here, "headroom.py"), "--from-json", cj, "--manifest", mpath,
                   "--tool", probe, "--moves", "20000", "--runs", "1", "--max-tasks", "100", "--out", hp])
        check(out.returncode == 0 and "| spread |" in out.stdout and "| packed |" in out.stdout,
              f"headroom.py: exit {out.returncode} {out.stdout} {out.stderr}")

    print(f"bench/mapping smoke test: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
