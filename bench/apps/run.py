#!/usr/bin/env python3
"""Runs the applications of bench/apps (docs/bench-apps.md) in four
configurations and prints medians, ratios and, with --locality, the share
of the bytes each task accessed that were on its own NUMA node.

    python3 bench/apps/run.py --bin build/bin [--rounds 5] [--threads 2]
        [--only lk23,matmul,video] [--size default|small|smoke] [--locality]
        [--no-check] [--submit] [--markdown] [--smoke]

Configurations (columns):
  canopy        canopy_bench_<app>_canopy, CANOPY_AFFINITY=none
  canopy-auto   the same program, CANOPY_AFFINITY=auto (automatic affinity);
                left out, with the reason, when this canopy refuses the value
                or does not read the variable at all (a bad value accepted)
  omp-close     canopy_bench_<app>_omp, OMP_PLACES=cores OMP_PROC_BIND=close
  omp-spread    the same, OMP_PROC_BIND=spread
Both canopy configurations run with CANOPY_STATS=1: its "accessed on the
worker's own NUMA node" line is reported beside the programs' own locality
log, and any line of canopy's stderr that names the affinity mapping's cost
(a line with "affinity" or "mapping" and a time in ms or us) is shown.

Each program run is one process that runs all its iterations once (-w 0 -r
1), timed from the first iteration to the last: what a runtime learns during
the run (automatic affinity observes the first iterations) is paid for in
the time. Rounds interleave the configurations (round r runs every
configuration of every application before round r+1), so that a change in
the machine's load hits them alike; a run during which other processes used
more than --max-others of the CPUs is run again (up to 20 times), as the
other runners do. Every run checks its result (unless --no-check): a wrong
result is a failure, reported, and the runner exits 1.

--size: default (the programs' defaults, ~1-3 s each on 2 threads), small
(sizes for the NUMA VMs, where the CPU is emulated: blocks of whole pages,
seconds under TCG), smoke (the programs' --smoke sizes, a test).
"""
import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from benchlib import LINE, collect_with_load_report, cpu_times, table  # noqa: E402

APPS = ["lk23", "matmul", "video"]
CONFIGS = ["canopy", "canopy-auto", "omp-close", "omp-spread"]
# Extra program arguments per size. small: blocks / strips of whole pages
# (the video at 1024 x 576: strips of 36 rows, 9 pages; at 480 x 270 a strip
# was 8,160 bytes and each handle shared its edge pages with the next one,
# which can sit on one node only: ~5% of its bytes, docs/bench-apps.md).
SIZES = {
    "default": {},
    "small": {"lk23": ["-n", "512", "-i", "10"], "matmul": ["-n", "512", "-i", "3"], "video": ["-n", "1024", "-i", "10"]},
    "smoke": {app: ["--smoke"] for app in APPS},
}
LOCALITY = re.compile(r"LOCALITY bench=(\S+) impl=(\S+) threads=(\d+) local_bytes=(\d+) remote_bytes=(\d+)")
STATS = re.compile(r"canopy stats: ([\d.]+)% of ([\d.]+) MB accessed on the worker's own NUMA node")
# The automatic mapping's own line (CANOPY_DISPLAY_AFFINITY=1), e.g. "canopy affinity: task graph 1: 128 tasks
# on 2 workers, policy canopy, mapped in 0.41 ms, 0 pages moved"; any line saying mapped/mapping with a time.
MAPPING_COST = re.compile(r"(?im)^.*\bmapp(?:ed|ing)\b.*?\d(?:\.\d+)?\s*(?:ms|us|µs)\b.*$")
MAPPED_MS = re.compile(r"mapped in ([\d.]+) ms")
# The automatic placement's own before/after locality line, when it prints one.
BEFORE_AFTER = re.compile(r"(?m)^canopy affinity:.*\bbefore the placement\b.*$")


def program(args, app, config):
    return os.path.join(args.bin, f"canopy_bench_{app}_{'canopy' if config.startswith('canopy') else 'omp'}")


def env_for(config):
    env = {"OPENBLAS_NUM_THREADS": "1"}
    if config.startswith("canopy"):
        env.update({"CANOPY_AFFINITY": "auto" if config == "canopy-auto" else "none", "CANOPY_STATS": "1",
                    "CANOPY_DISPLAY_AFFINITY": "1"})
    else:
        env.update({"OMP_PLACES": "cores", "OMP_PROC_BIND": config.split("-")[1]})
    return env


def run_capture(cmd, env_extra, timeout=1800):
    """(returncode, stdout, stderr) of one run."""
    env = dict(os.environ)
    env.update(env_extra)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def run_quietly(cmd, env, args):
    """run_capture, again while other processes used more than --max-others of the CPUs (at most 20 times)."""
    for _ in range(20):
        busy0, total0 = cpu_times()
        ours0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        rc, out, err = run_capture(cmd, env)
        busy1, total1 = cpu_times()
        ours1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        ours = (ours1.ru_utime + ours1.ru_stime - ours0.ru_utime - ours0.ru_stime) * os.sysconf("SC_CLK_TCK")
        others = max(0.0, (busy1 - busy0) - ours) / max(1, total1 - total0)
        if rc != 0 or args.smoke or others <= args.max_others:
            return rc, out, err
        args.reruns += 1
        time.sleep(2)
    return rc, out, err


def auto_supported(args):
    """(True, "") when this canopy takes CANOPY_AFFINITY=auto, else (False, why)."""
    app = next((a for a in args.only if os.path.exists(program(args, a, "canopy"))), None)
    if app is None:
        return False, "no canopy program built"
    exe = program(args, app, "canopy")
    rc, _, err = run_capture([exe, "--smoke", "--no-check"], {"CANOPY_AFFINITY": "auto"})
    if rc != 0:
        last = err.strip().splitlines()[-1] if err.strip() else f"exit {rc}"
        return False, f"this canopy refuses CANOPY_AFFINITY=auto ({last})"
    rc, _, _ = run_capture([exe, "--smoke", "--no-check"], {"CANOPY_AFFINITY": "no-such-value"})
    if rc == 0:
        return False, ("this canopy does not read CANOPY_AFFINITY (CANOPY_AFFINITY=no-such-value was accepted), "
                       "so 'auto' would measure canopy without it")
    return True, ""


def jobs_for(args):
    jobs = []
    for app in args.only:
        for config in args.configs:
            exe = program(args, app, config)
            if not os.path.exists(exe):
                print(f"(skipping {app} {config}: {os.path.basename(exe)} not built)", file=sys.stderr)
                continue
            for t in args.threads:
                cmd = [exe, "-t", str(t), "-w", "0", "-r", "1"] + SIZES[args.size].get(app, [])
                if args.locality:
                    cmd.append("--locality")
                if not args.check:
                    cmd.append("--no-check")
                if args.submit and config.startswith("canopy") and app in ("lk23", "matmul"):
                    cmd.append("--submit")
                jobs.append((app, config, t, cmd, env_for(config)))
    return jobs


def collect(args):
    """results[(app, config, threads)] = {"seconds", "local", "stats", "map_ms": [one per run], "cost": [lines]}"""
    results = {}
    args.reruns = 0
    args.failures = []
    jobs = jobs_for(args)
    for _ in range(1 if args.smoke else args.rounds):
        for app, config, t, cmd, env in jobs:
            rc, out, err = run_quietly(cmd, env, args)
            if rc != 0:
                msg = f"{app} {config} -t {t}: {' '.join(cmd)} failed ({rc}): {err.strip()[-1500:]}"
                args.failures.append(msg)
                print(f"FAILED: {msg}", file=sys.stderr)
                continue
            r = results.setdefault((app, config, t), {"seconds": [], "local": [], "stats": [], "map_ms": [],
                                                       "cost": []})
            lines = list(LINE.finditer(out))
            if not lines:
                args.failures.append(f"{app} {config}: no RESULT line")
                continue
            r["seconds"] += [float(m.group(5)) for m in lines]
            for m in LOCALITY.finditer(out):
                local, remote = int(m.group(4)), int(m.group(5))
                r["local"].append(local / (local + remote) if local + remote else None)
            for m in STATS.finditer(err):
                r["stats"].append(float(m.group(1)) / 100)
            r["cost"] += [m.group(0).strip() for m in MAPPING_COST.finditer(err)]
            r["cost"] += [m.group(0).strip() for m in BEFORE_AFTER.finditer(err)]
            mapped = [float(m.group(1)) for m in MAPPED_MS.finditer(err)]
            if mapped:
                r["map_ms"].append(sum(mapped))
    return results


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def pct(v):
    return "-" if v is None else f"{v * 100:.1f}%"


def report(results, args):
    for t in args.threads:
        rows = []
        for app in args.only:
            times = {c: med(results.get((app, c, t), {}).get("seconds", [])) for c in args.configs}
            omp_best = min((v for c, v in times.items() if c.startswith("omp") and v is not None), default=None)
            base = times.get("canopy")
            for c in args.configs:
                r = results.get((app, c, t))
                if not r:
                    continue
                v = times[c]
                row = [app, c, "-" if v is None else f"{v:.4g}",
                       "-" if v is None or base is None else f"{base / v:.2f}",
                       "-" if v is None or omp_best is None else f"{omp_best / v:.2f}"]
                ms = med(r["map_ms"])
                row.append("-" if ms is None else f"{ms:.2f}")
                if args.locality:
                    row += [pct(med(r["local"])), pct(med(r["stats"])) if c.startswith("canopy") else "-"]
                rows.append(row)
        head = ["app", "config", "seconds (median)", "vs canopy", "vs best OpenMP", "mapping ms"]
        if args.locality:
            head += ["local bytes (log)", "local bytes (CANOPY_STATS)"]
        table(f"{t} threads, {args.size} sizes, median of {1 if args.smoke else args.rounds} runs "
              f"(vs: the other's time / this one's, > 1 = faster)", head, rows, args.markdown)
    costs = [(app, c, x) for (app, c, t), r in sorted(results.items()) for x in dict.fromkeys(r["cost"])][:40]
    if costs:
        print("\nmapping lines (canopy's stderr, each different line once):")
        for app, c, line in costs:
            print(f"  {app} {c}: {line}")


def add_runner_args(ap, rounds):
    """The flags of every runner of bench/apps (this one, lu/run.py, btmz/run.py)."""
    ap.add_argument("--rounds", type=int, default=rounds, help="runs of each configuration (the median is reported)")
    ap.add_argument("--threads", default=str(os.cpu_count() or 1),
                    help="thread counts, comma separated (default: all CPUs)")
    ap.add_argument("--locality", action="store_true", help="log and report the local share of the bytes accessed")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")
    ap.add_argument("--max-others", type=float, default=0.10,
                    help="run a program again when other processes used more than this share of the CPUs")


def parse_threads(ap, args):
    """args.threads "2,8" -> [2, 8]; a usage error otherwise."""
    try:
        args.threads = [int(t) for t in args.threads.split(",")]
    except ValueError:
        ap.error(f"--threads {args.threads!r}: expected thread counts separated by commas")
    if any(t < 1 for t in args.threads):
        ap.error(f"--threads: expected positive thread counts, got {args.threads}")


def parse_names(ap, flag, value, allowed):
    """A comma separated list of names out of `allowed`; a usage error naming
    the flag and the unknown names otherwise."""
    names = [n for n in value.split(",") if n]
    bad = [n for n in names if n not in allowed]
    if bad:
        ap.error(f"{flag}: unknown {', '.join(bad)}; expected some of {', '.join(allowed)}")
    return names


def finish(args):
    """Prints args.failures; the runner's exit status (1 when any)."""
    if args.failures:
        print(f"\n{len(args.failures)} run(s) FAILED:")
        for f in args.failures:
            print(f"  {f}")
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True, help="directory with the canopy_bench_* binaries (build/bin)")
    add_runner_args(ap, rounds=5)
    ap.add_argument("--only", default="", help=f"applications, comma separated ({','.join(APPS)})")
    ap.add_argument("--configs", default=",".join(CONFIGS),
                    help=f"configurations, comma separated ({','.join(CONFIGS)})")
    ap.add_argument("--size", default="default", choices=list(SIZES), help="problem sizes (see above)")
    ap.add_argument("--no-check", dest="check", action="store_false", help="do not check the results")
    ap.add_argument("--submit", action="store_true",
                    help="canopy lk23 and matmul through submit instead of a TaskGraph (their --submit)")
    ap.add_argument("--smoke", action="store_true",
                    help="every configuration once on the smoke sizes, checked (a test)")
    args = ap.parse_args()
    parse_threads(ap, args)
    args.only = [a for a in args.only.split(",") if a] or list(APPS)
    bad = [a for a in args.only if a not in APPS]
    if bad:
        ap.error(f"--only: unknown application(s) {', '.join(bad)}; expected some of {', '.join(APPS)}")
    args.configs = [c for c in args.configs.split(",") if c]
    bad = [c for c in args.configs if c not in CONFIGS]
    if bad:
        ap.error(f"--configs: unknown configuration(s) {', '.join(bad)}; expected some of {', '.join(CONFIGS)}")
    if args.smoke:
        args.size = "smoke"
        args.locality = True
    if "canopy-auto" in args.configs:
        ok, why = auto_supported(args)
        if not ok:
            print(f"canopy-auto left out: {why}")
            args.configs.remove("canopy-auto")
    results = collect_with_load_report(collect, args)
    report(results, args)
    if args.smoke:
        missing = [(a, c) for a in args.only for c in args.configs
                   if os.path.exists(program(args, a, c)) and not results.get((a, c, args.threads[0]), {}).get("local")]
        if missing:
            args.failures.append(f"no LOCALITY line from {missing}")
    return finish(args)


if __name__ == "__main__":
    sys.exit(main())
