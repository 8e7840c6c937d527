"""What bench/runtime/run.py and bench/dataflow/run.py share: running one
competitor's program (again, when other processes loaded the machine during
the run), reading its RESULT lines, medians and tables.

Every benchmark program prints lines
    RESULT bench=<b> impl=<i> threads=<t> rep=<r> seconds=<s> count=<n> unit=<u>
and a runner keeps seconds / count per (bench, impl, threads).
"""
import os
import re
import resource
import statistics
import subprocess
import sys
import time

OMP_ENV = {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores"}
LINE = re.compile(r"RESULT bench=(\S+) impl=(\S+) threads=(\d+) rep=(\d+) seconds=(\S+) count=(\S+) unit=(\S+)")


def binary(bindir, problem, impl):
    # Result names use '-', binary names '_' (canopy-invoke: ..._canopy_invoke).
    return os.path.join(bindir, f"canopy_bench_{problem}_{impl.replace('-', '_')}")


def built_programs(bindir, problem, impls):
    """(impl, path) of each competitor of `problem` that was built; the others
    are named on stderr and left out."""
    for impl in impls:
        exe = binary(bindir, problem, impl)
        if os.path.exists(exe):
            yield impl, exe
        else:
            print(f"(skipping {os.path.basename(exe)}: not built)", file=sys.stderr)


def run(cmd, env_extra=None, timeout=900):
    """The program's stdout; RuntimeError (with the end of its stderr) when it fails."""
    env = dict(os.environ)
    if env_extra:
        env.update(env_extra)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    return p.stdout


def cpu_times():
    """(busy, total) jiffies of the whole machine, from /proc/stat."""
    try:
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        idle = v[3] + v[4]
        return sum(v) - idle, sum(v)
    except OSError:
        return 0, 0


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def run_quietly(cmd, env, max_others, retry=True, on_failure=None):
    """Runs cmd; while other processes used more than `max_others` of the
    CPUs during the run (and `retry`), waits 2 s and runs it again (at most
    20 times). Returns (stdout, reruns). A failing program raises, unless
    `on_failure(error)` is given: its run then counts as "" (no results)."""
    reruns = 0
    out = ""
    for _attempt in range(20):
        busy0, total0 = cpu_times()
        ours0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            out = run(cmd, env)
        except RuntimeError as e:
            if on_failure is None:
                raise
            on_failure(e)
            out = ""
        busy1, total1 = cpu_times()
        ours1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        ours = (ours1.ru_utime + ours1.ru_stime - ours0.ru_utime - ours0.ru_stime) * os.sysconf("SC_CLK_TCK")
        others = max(0.0, (busy1 - busy0) - ours) / max(1, total1 - total0)
        if not retry or others <= max_others:
            break
        reruns += 1
        time.sleep(2)
    return out, reruns


def add_results(results, out, cmd):
    """Adds the RESULT lines of `out` to results[(bench, impl, threads)] (seconds per unit)."""
    found = False
    for m in LINE.finditer(out):
        bench, impl, threads, _, secs, count, _unit = m.groups()
        results.setdefault((bench, impl, int(threads)), []).append(float(secs) / float(count))
        found = True
    if not found:
        raise RuntimeError(f"{' '.join(cmd)} printed no RESULT line")


def median(results, bench, impl, t):
    v = results.get((bench, impl, t))
    return statistics.median(v) if v else None


def table(title, header, rows, markdown):
    if not rows:
        return
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    print()
    print(title)
    if markdown:
        print("| " + " | ".join(str(h) for h in header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
        for r in rows:
            print("| " + " | ".join(str(c) for c in r) + " |")
    else:
        print("  ".join(str(h).rjust(w) for h, w in zip(header, widths)))
        for r in rows:
            print("  ".join(str(c).rjust(w) for c, w in zip(r, widths)))
    sys.stdout.flush()


def add_common_arguments(ap, problems):
    """The flags every runner has: --bin, --rounds, --threads, --only (one of `problems`), --markdown, --max-others."""
    ap.add_argument("--bin", required=True, help="directory with the canopy_bench_* binaries (build/bin)")
    ap.add_argument("--rounds", type=int, default=5, help="runs of each program (the median is reported)")
    ap.add_argument("--threads", default="1,2", help="thread counts, comma separated")
    ap.add_argument("--only", default="", help=f"problems to run, comma separated ({','.join(problems)})")
    ap.add_argument("--markdown", action="store_true", help="print Markdown tables")
    ap.add_argument("--max-others", type=float, default=0.10,
                    help="run a program again when other processes used more than this share of the CPUs")


def collect_with_load_report(collect, args):
    """Calls collect(args) between two looks at the machine and prints how
    busy it was meanwhile (ours vs other processes) and how many program
    runs were redone (args.reruns, set by collect)."""
    print(f"load average before: {loadavg()}  (cores: {os.cpu_count()})")
    busy0, total0 = cpu_times()
    ours0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    results = collect(args)
    busy1, total1 = cpu_times()
    ours1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"load average after: {loadavg()}")
    if total1 > total0:
        hz = os.sysconf("SC_CLK_TCK")
        ours = (ours1.ru_utime + ours1.ru_stime - ours0.ru_utime - ours0.ru_stime) * hz
        others = max(0.0, (busy1 - busy0) - ours) / (total1 - total0) * 100
        print(f"machine busy during the run: {(busy1 - busy0) / (total1 - total0) * 100:.0f}% of all CPUs, "
              f"of which other processes: {others:.0f}%; program runs redone because other processes used "
              f"more than {args.max_others * 100:.0f}% of the CPUs: {args.reruns}")
    return results
