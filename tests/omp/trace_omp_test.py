#!/usr/bin/env python3
"""OpenMP constructs in canopy's traces: tests/omp/observed.c (built by GCC
or clang) runs on canopy's runtime with CANOPY_TRACE, at 3 threads; the JSON
is checked against the trace-event format's rules, then for the constructs
of the program: one parallel span per region on the initial thread, one
implicit task per thread and region, every explicit task once (labelled by
its function), the barriers, taskwaits and taskgroups, all properly nested
on each row; `canopy trace` summarises the file; OTF2 opens in otf2-print;
CANOPY_TRACE_EVENTS without omp records none of them.

usage: trace_omp_test.py PROGRAM COMPILER(gcc|clang) CANOPY_CLI LIBDIR WORKDIR"""
import json
import os
import shutil
import subprocess
import sys

from sanitizer_env import with_sanitizer  # tests/omp: the script's own directory

THREADS = 3



def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def format_violation(doc):
    """The Trace Event Format's rules for the phases canopy writes."""
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return "no traceEvents array"
    for e in doc["traceEvents"]:
        for key, kind in (("name", str), ("ph", str), ("pid", int), ("tid", int)):
            if not isinstance(e.get(key), kind):
                return f"no {key}: {e}"
        ph = e["ph"]
        if ph == "M":
            if e["name"] not in ("process_name", "thread_name", "thread_sort_index") or "args" not in e:
                return f"bad metadata: {e}"
            continue
        if not isinstance(e.get("ts"), (int, float)) or e["ts"] < 0:
            return f"bad ts: {e}"
        if ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                return f"bad dur: {e}"
        elif ph == "i":
            if e.get("s") not in ("t", "p", "g"):
                return f"bad instant scope: {e}"
        elif ph in ("s", "f"):
            if "id" not in e or (ph == "f" and e.get("bp") != "e"):
                return f"bad flow event: {e}"
        elif ph == "C":
            # Counter events (workers' counters, energy): numeric series values.
            args = e.get("args")
            if not isinstance(args, dict) or not args or not all(isinstance(v, (int, float)) for v in args.values()):
                return f"bad counter event: {e}"
        else:
            return f"phase canopy does not write: {e}"
    return ""


def run(program, env_extra, libdir):
    env = dict(os.environ, LD_LIBRARY_PATH=libdir, OMP_NUM_THREADS=str(THREADS))
    env.update(env_extra)
    p = subprocess.run([program], env=with_sanitizer(env), capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail(f"{program} exited {p.returncode}: {p.stdout}{p.stderr}")
    counts = dict(kv.split("=") for kv in p.stdout.split()[2:])
    return {k: int(v) for k, v in counts.items()}


def main():
    program, compiler, cli, libdir, work = sys.argv[1:6]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    path = os.path.join(work, "t.json")
    want = run(program, {"CANOPY_TRACE": path}, libdir)
    if want["threads"] != THREADS:
        fail(f"the program ran on {want['threads']} threads, not {THREADS}")
    doc = json.load(open(path))
    v = format_violation(doc)
    if v:
        fail("trace-event format: " + v)
    procs = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "process_name"}
    omp_pids = [p for p, n in procs.items() if n == "canopy OpenMP runtime"]
    if len(omp_pids) != 1:
        fail(f"processes {procs}: expected one 'canopy OpenMP runtime'")
    pid = omp_pids[0]
    names = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == pid}
    spans = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == pid]
    rows = {}
    for e in spans:
        if "construct" not in e.get("args", {}):
            fail(f"an OpenMP span without its construct: {e}")
        rows.setdefault(e["tid"], []).append(e)
    if len(rows) != THREADS:
        fail(f"{len(rows)} rows with events ({sorted(rows)}), expected {THREADS}: {names}")
    initial = [t for t, n in names.items() if n.endswith("(initial)")]
    if len(initial) != 1 or initial[0] not in rows:
        fail(f"no row of the initial thread: {names}")

    def of(construct, row=None):
        return [e for e in spans if e["args"]["construct"] == construct and (row is None or e["tid"] == row)]

    regions = want["regions"]
    checks = [
        ("parallel", of("parallel", initial[0]), regions),
        ("parallel (all rows)", of("parallel"), regions),
        ("implicit task", of("implicit task"), regions * THREADS),
        ("barrier (end of parallel)", of("barrier (end of parallel)"), regions * THREADS),
        ("task", of("task"), want["tasks"]),
        ("taskwait", of("taskwait"), want["taskwaits"]),
        ("taskgroup", of("taskgroup"), want["taskgroups"]),
    ]
    for what, got, n in checks:
        if len(got) != n:
            fail(f"{len(got)} '{what}' spans, expected {n}")
    # The explicit barrier and the loop's: at least two per thread and region.
    if len(of("barrier")) < 2 * regions * THREADS:
        fail(f"{len(of('barrier'))} barrier spans, expected at least {2 * regions * THREADS}")
    for e in of("parallel"):
        if e["args"].get("threads") != THREADS:
            fail(f"parallel span without its team size {THREADS}: {e}")
        if not e["args"].get("fn"):
            fail(f"parallel span without its outlined function: {e}")
    # Explicit tasks are named by their function.
    for e in of("task"):
        label = e["name"]
        ok = (label.startswith(("make_tasks._omp_fn.", "make_dep_tasks._omp_fn.", "make_taskloop._omp_fn."))
              if compiler == "gcc" else "omp_task_entry" in label)
        if not ok or e["cat"] != "task,omp":
            fail(f"task labelled '{label}' ({e['cat']}), expected its {compiler} function")
    # Nesting per row: spans never overlap partially; implicit tasks inside
    # a parallel region's time; tasks, barriers and waits inside an
    # implicit task of their row.
    eps = 0.002  # µs: the writer rounds to ns
    for tid, row in rows.items():
        row.sort(key=lambda e: (e["ts"], -e["dur"]))
        stack = []
        for e in row:
            end = e["ts"] + e["dur"]
            while stack and stack[-1]["ts"] + stack[-1]["dur"] <= e["ts"] + eps:
                stack.pop()
            if stack and end > stack[-1]["ts"] + stack[-1]["dur"] + eps:
                fail(f"row {tid}: {e} overlaps {stack[-1]} without nesting")
            c = e["args"]["construct"]
            if c in ("task", "barrier", "barrier (end of parallel)", "taskwait", "taskgroup"):
                if not any(s["args"]["construct"] == "implicit task" for s in stack):
                    fail(f"row {tid}: {c} outside an implicit task: {e}")
            if c == "implicit task":
                if not any(p["ts"] <= e["ts"] + eps and e["ts"] + e["dur"] <= p["ts"] + p["dur"] + eps
                           for p in of("parallel")):
                    fail(f"row {tid}: implicit task outside every parallel span: {e}")
            if c == "parallel" and stack:
                fail(f"row {tid}: a parallel span nested in {stack[-1]} (the regions are not nested)")
            stack.append(e)
    # Every implicit task of the initial thread holds one join barrier.
    for e in of("implicit task"):
        joins = [b for b in of("barrier (end of parallel)", e["tid"])
                 if e["ts"] - eps <= b["ts"] and b["ts"] + b["dur"] <= e["ts"] + e["dur"] + eps]
        if len(joins) != 1:
            fail(f"implicit task {e} holds {len(joins)} join barriers")
    # The summary reads the file.
    p = subprocess.run([cli, "trace", path], capture_output=True, text=True)
    if p.returncode != 0 or "tasks:" not in p.stdout:
        fail(f"canopy trace: {p.returncode} {p.stdout} {p.stderr}")
    # OTF2, read back by otf2-print when it is there.
    if shutil.which("otf2-print"):
        otf2 = os.path.join(work, "t.otf2")
        run(program, {"CANOPY_TRACE": otf2}, libdir)
        p = subprocess.run(["otf2-print", otf2], capture_output=True, text=True)
        if p.returncode != 0 or "barrier" not in p.stdout or "parallel" not in p.stdout:
            fail(f"otf2-print: {p.returncode} {p.stderr}")
    # Filtered out: no OpenMP spans.
    path2 = os.path.join(work, "f.json")
    run(program, {"CANOPY_TRACE": path2, "CANOPY_TRACE_EVENTS": "park"}, libdir)
    doc2 = json.load(open(path2))
    if any(e["ph"] == "X" and "construct" in e.get("args", {}) for e in doc2["traceEvents"]):
        fail("CANOPY_TRACE_EVENTS=park recorded OpenMP spans")
    # A bad variable stops the program with a message naming it.
    env = dict(os.environ, LD_LIBRARY_PATH=libdir, CANOPY_TRACE=path2, CANOPY_TRACE_FORMAT="xml")
    p = subprocess.run([program], env=with_sanitizer(env), capture_output=True, text=True, timeout=60)
    if p.returncode == 0 or "CANOPY_TRACE_FORMAT='xml'" not in p.stderr:
        fail(f"CANOPY_TRACE_FORMAT=xml: exit {p.returncode}, stderr {p.stderr!r}")
    shutil.rmtree(work, ignore_errors=True)
    print(f"ok: {len(spans)} OpenMP spans on {len(rows)} rows ({compiler})")


if __name__ == "__main__":
    main()
