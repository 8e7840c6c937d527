#!/usr/bin/env python3
"""CANOPY_AFFINITY_DUMP and CANOPY_STATS for OpenMP tasks with depend
clauses (CANOPY_AFFINITY=auto): tests/omp/depend_affinity.c (two 1-D
stencils of depend tasks, built by GCC) on a pretend 4-node machine, 8
threads. Each mapping writes omp-tasks-map-<n>.edges and .placement (two
mappings, never a third); the files are read back with the CLI: `canopy
matrix` finds the stencil's matrix (64 tasks, 94 pairs of weight 2: the 96
blocks a sweep reads, less the two constant halos, each written by the
other sweep; GCC counts 1 per depend address), `canopy eval` the placement
(its NUMA-crossing volume under half scatter's) and the thread of each task
in the placement file is the one the CANOPY_DISPLAY_AFFINITY lines give;
`canopy matrix --svg` draws it. CANOPY_STATS says why no page moved (pretend
nodes); an unwritable dump directory stops the program naming the variable.

usage: depend_affinity_dump_test.py PROGRAM CANOPY_CLI LIBDIR WORKDIR"""
import json
import os
import re
import shutil
import subprocess
import sys

MACHINE = "numa:4 core:2 pu:1"


def fail(msg):
    print("FAIL:", msg)
    sys.exit(1)


def run_program(program, libdir, dump):
    env = dict(os.environ, LD_LIBRARY_PATH=libdir, OMP_NUM_THREADS="8", CANOPY_OMP_TEST_NUMA="4",
               CANOPY_AFFINITY="auto", CANOPY_DISPLAY_AFFINITY="1", CANOPY_STATS="1", CANOPY_AFFINITY_DUMP=dump)
    return subprocess.run([program], env=env, capture_output=True, text=True, timeout=120)


def cli(canopy, *args):
    r = subprocess.run([canopy, *args], capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        fail(f"canopy {' '.join(args)}: exit {r.returncode}: {r.stderr}")
    return r.stdout


def ranges(text):
    """'0-3,8,10-11' -> [0, 1, 2, 3, 8, 10, 11]"""
    out = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def main():
    program, canopy, libdir, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    dump = os.path.join(work, "dump")
    r = run_program(program, libdir, dump)
    if r.returncode != 0 or "depend affinity (auto): passed" not in r.stdout:
        fail(f"the program failed (exit {r.returncode}): {r.stdout}{r.stderr}")
    for n in (1, 2):
        if f"canopy affinity: OpenMP tasks: mapping {n}: pages not placed (machine '{MACHINE}': pretend NUMA nodes)" \
                not in r.stderr:
            fail(f"no CANOPY_STATS line for mapping {n}: {r.stderr}")
    names = sorted(os.listdir(dump))
    want = [f"omp-tasks-map-{n}.{ext}" for n in (1, 2) for ext in ("edges", "placement")]
    if names != want:
        fail(f"dump directory holds {names}, expected {want}")

    # Mapping 1's display lines: thread -> its tasks.
    lines = r.stderr[r.stderr.find("(mapping 1,"):r.stderr.find("(mapping 2,")]
    thread_of = {}
    for m in re.finditer(r"^canopy affinity: thread (\d+) \([^)]*\): \d+ tasks (\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*)",
                         lines, re.M):
        for t in ranges(m.group(2)):
            thread_of[t] = int(m.group(1))
    edges = os.path.join(dump, "omp-tasks-map-1.edges")
    placement = os.path.join(dump, "omp-tasks-map-1.placement")
    with open(placement) as f:
        rows = [re.match(r"^(\d+)\s+# task (\d+) thread (\d+)$", line) for line in f if not line.startswith("#")]
    if len(rows) != 64 or not all(rows):
        fail(f"placement file: expected 64 lines 'cpu  # task t thread w', got {len(rows)}")
    for m in rows:
        if thread_of.get(int(m.group(2))) != int(m.group(3)):
            fail(f"task {m.group(2)} on thread {m.group(3)} in the file, {thread_of.get(int(m.group(2)))} displayed")
    with open(edges) as f:
        labels = [line for line in f if re.match(r"^# o\d+: ", line)]
    if len(labels) != 64:
        fail(f"{len(labels)} task labels in {edges}, expected 64")

    info = cli(canopy, "matrix", "--matrix", edges)
    for key, value in (("tasks", "64"), ("edges", "94"), ("total volume", "188")):
        if not re.search(rf"^{key}\s+{value}\b", info, re.M):
            fail(f"canopy matrix: expected {key} {value}:\n{info}")
    info2 = cli(canopy, "matrix", "--matrix", os.path.join(dump, "omp-tasks-map-2.edges"))
    if not re.search(r"^tasks\s+48\b", info2, re.M):
        fail(f"mapping 2's matrix: expected 48 tasks:\n{info2}")
    mine = json.loads(cli(canopy, "eval", "--input", MACHINE, "--matrix", edges, "--placement", placement,
                          "--of", "json"))
    scatter = os.path.join(work, "scatter.txt")
    cli(canopy, "map", "--input", MACHINE, "--matrix", edges, "--policy", "scatter", "--of", "list", "-o", scatter)
    other = json.loads(cli(canopy, "eval", "--input", MACHINE, "--matrix", edges, "--placement", scatter,
                           "--of", "json"))
    if not mine["cost"]["numa_crossing"] * 2 < other["cost"]["numa_crossing"]:
        fail(f"dumped placement crosses {mine['cost']['numa_crossing']}, scatter {other['cost']['numa_crossing']}")
    svg = os.path.join(work, "m.svg")
    cli(canopy, "matrix", "--matrix", edges, "--svg", svg)
    with open(svg) as f:
        if "<svg" not in f.read(400):
            fail("canopy matrix --svg wrote no SVG")

    # A dump directory that cannot be made: the program stops, naming the variable.
    blocker = os.path.join(work, "file")
    with open(blocker, "w") as f:
        f.write("not a directory\n")
    r = run_program(program, libdir, os.path.join(blocker, "dump"))
    if r.returncode == 0 or f"CANOPY_AFFINITY_DUMP='{blocker}/dump'" not in r.stderr:
        fail(f"an unwritable dump directory: exit {r.returncode}, {r.stderr[-400:]}")
    print(f"depend affinity dump: passed (crossing {mine['cost']['numa_crossing']} vs scatter "
          f"{other['cost']['numa_crossing']})")


main()
