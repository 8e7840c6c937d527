#!/usr/bin/env python3
"""OMPT on canopy's OpenMP runtime: tests/omp/ompt_tool.c (a tool that
counts callbacks and checks their nesting) watches tests/omp/observed.c at
3 threads, loaded through OMP_TOOL_LIBRARIES and, once, found as
ompt_start_tool in the process's global scope (LD_PRELOAD); OMP_TOOL=disabled
attaches nothing. The counts must match what the program did: every thread
begun and ended once, every parallel region, implicit and explicit task seen
once, the taskwaits, taskgroups and dependences, the inquiry functions
answering. With --reference the program runs on the system's libomp
instead (is the test itself right?).

usage: ompt_test.py PROGRAM TOOL LIBDIR [--reference]
       ompt_test.py --consistency TOOL LIBDIR PROGRAM..."""
import os
import subprocess
import sys

from sanitizer_env import with_sanitizer  # tests/omp: the script's own directory

THREADS = 3



def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run(program, env_extra, libdir, reference):
    env = dict(os.environ, OMP_NUM_THREADS=str(THREADS))
    if reference:
        env["OMP_TEST_ANY_RUNTIME"] = "1"
        env.pop("LD_LIBRARY_PATH", None)
    else:
        env["LD_LIBRARY_PATH"] = libdir
    env.update(env_extra)
    p = subprocess.run([program], env=with_sanitizer(env), capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        fail(f"{program} ({env_extra}) exited {p.returncode}: {p.stdout}{p.stderr}")
    want, got = None, None
    for line in p.stdout.splitlines():
        if line.startswith("observed: ok"):
            want = {k: int(v) for k, v in (kv.split("=") for kv in line.split()[2:])}
        elif line.startswith("ompt: FAIL"):
            fail(f"the tool saw: {line} ({env_extra})")
        elif line.startswith("ompt:"):
            got = {k: int(v) for k, v in (kv.split("=") for kv in line.split()[1:])}
    if want is None:
        fail(f"no 'observed: ok' line: {p.stdout}{p.stderr}")
    return want, got


def check(want, got, how):
    if got is None:
        fail(f"{how}: the tool was not attached (no 'ompt:' line)")
    r, t = want["regions"], want["threads"]
    expect = {
        "threads_begun": t, "threads_ended": t, "initial_threads": 1, "worker_threads": t - 1,
        "parallel": r, "parallel_threads": r * t, "implicit": r * t, "initial_tasks": 1,
        "tasks": want["tasks"], "completed": want["tasks"], "deps_tasks": want["deps_tasks"],
        "dependences": want["dependences"], "taskwaits": want["taskwaits"], "taskgroups": want["taskgroups"],
        "inquiries": want["taskwaits"] + want["taskgroups"],
        "loops": want["loops"], "sections": want["sections"], "single_executor": want["single_executor"],
        "single_other": want["single_other"], "taskloops": want["taskloops"],
    }
    for k, v in expect.items():
        if got.get(k) != v:
            fail(f"{how}: {k}={got.get(k)}, expected {v} (all: {got})")
    # The explicit barrier and the region's end, at least, on every thread.
    if got["barriers"] + got["join_barriers"] < 2 * r * t:
        fail(f"{how}: {got['barriers'] + got['join_barriers']} barriers, expected at least {2 * r * t}")
    print(f"ok ({how}): {got}")


def consistency(tool, libdir, programs):
    """Other test programs (tasks with detach, priorities, cancellation,
    taskloop, nested regions) with the tool attached: it must attach and
    see nothing inconsistent."""
    env = dict(os.environ, LD_LIBRARY_PATH=libdir, OMP_NUM_THREADS="4", OMP_CANCELLATION="true",
               OMP_MAX_TASK_PRIORITY="9", OMP_TOOL_LIBRARIES=tool)
    for program in programs:
        p = subprocess.run([program], env=with_sanitizer(dict(env)), capture_output=True, text=True, timeout=300)
        line = next((l for l in p.stdout.splitlines() if l.startswith("ompt:")), None)
        if p.returncode != 0 or line is None or line.startswith("ompt: FAIL"):
            fail(f"{program} with the tool: exit {p.returncode}, {line!r}\n{p.stderr[-2000:]}")
        print(f"ok: {program}: {line}")


def main():
    if sys.argv[1] == "--consistency":
        consistency(sys.argv[2], sys.argv[3], sys.argv[4:])
        return
    program, tool, libdir = sys.argv[1:4]
    reference = "--reference" in sys.argv[4:]
    want, got = run(program, {"OMP_TOOL_LIBRARIES": tool}, libdir, reference)
    check(want, got, "OMP_TOOL_LIBRARIES")
    if reference:
        return
    # The tool's ompt_start_tool in the global scope (preloaded).
    preload = (os.environ.get("LD_PRELOAD", "") + " " + tool).strip()
    want, got = run(program, {"LD_PRELOAD": preload}, libdir, reference)
    check(want, got, "ompt_start_tool in the process")
    # A library that does not exist, then the tool: the next one is tried.
    want, got = run(program, {"OMP_TOOL_LIBRARIES": "/nonexistent/libnothing.so:" + tool}, libdir, reference)
    check(want, got, "second of OMP_TOOL_LIBRARIES")
    _, got = run(program, {"OMP_TOOL_LIBRARIES": tool, "OMP_TOOL": "disabled"}, libdir, reference)
    if got is not None:
        fail("OMP_TOOL=disabled: the tool was attached")


if __name__ == "__main__":
    main()
