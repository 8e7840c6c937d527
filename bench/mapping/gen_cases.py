#!/usr/bin/env python3
"""Generates the bench/mapping suite: communication matrices (MatrixMarket)
and a JSON manifest of cases (matrix x machine x regimes).

Everything is deterministic: a small splitmix64 generator with fixed seeds
(not Python's `random`, whose methods may change between versions), integer
weights, sorted output. Running it twice, or on another machine, writes the
same bytes; `--verify-demo` checks the matrices bundled in data/matrices/.

    gen_cases.py [--out DIR] [--suite standard|scale|all]
    gen_cases.py --demo data/matrices          # (re)write the bundled matrices
    gen_cases.py --verify-demo data/matrices   # exit 1 if they differ

What each family models is described in docs/bench-mapping.md.
"""
import argparse
import bisect
import json
import math
import os
import sys

MASK = (1 << 64) - 1
FORMAT_VERSION = 1

# Machines as hwloc synthetic strings. Each package is its own NUMA node on
# the real Broadwell, E5 and E7 servers, hence "numa:1" below the package
# (without it hwloc puts one NUMA node over the whole machine and the packed
# regime and the NUMA-crossing figure would mean nothing).
MACHINES = {
    "broadwell": "pack:2 numa:1 core:8 pu:2",      # 32 PUs: 2 sockets x 8 cores x 2 HT
    "knl": "numa:4 core:16 pu:4",                  # 256 PUs: SNC-4 quadrants x 16 cores x 4 HT
    "smp12e5": "pack:12 numa:1 core:8 pu:2",       # 192 PUs: 12 sockets (E5) x 8 x 2
    "smp20e7": "pack:20 numa:1 core:8 pu:1",       # 160 PUs: 20 sockets (E7) x 8, no HT
    "m512": "pack:4 numa:2 core:32 pu:2",          # 512 PUs: 4 sockets x 2 SNC nodes x 32 x 2
    "m4096": "pack:16 numa:4 core:32 pu:2",        # 4096 PUs: 16 sockets x 4 nodes x 32 x 2
}
SCALE_MACHINES = {
    "m5000": "pack:20 numa:5 core:25 pu:2",        # 5,000 PUs, arities 20/5/25/2
    "m131072": "pack:256 numa:4 core:64 pu:2",     # 131,072 PUs
}

# Family keys used in the case table below.
FAMILIES = {
    "s2": "stencil2d", "s2p": "stencil2d_permuted", "s3": "stencil3d", "s3p": "stencil3d_permuted",
    "a2a": "alltoall", "ring": "ring", "pipe": "pipeline", "rln": "random_lognormal",
    "rpl": "random_powerlaw",
}
ALL8 = ["s2", "s2p", "s3", "s3p", "a2a", "ring", "rln", "rpl"]

# (machine, tasks, families). Tasks == PUs is full subscription, fewer is
# under-subscription (two regimes: spread and packed), more is
# oversubscription (integer and non-integer factors).
STANDARD = [
    ("broadwell", 32, ALL8),
    ("broadwell", 16, ["s2", "s3p", "a2a", "rln"]),
    ("broadwell", 20, ["ring", "rpl"]),
    ("broadwell", 28, ["pipe"]),
    ("broadwell", 48, ["s2p", "s3", "a2a", "rln"]),        # 1.5x
    ("broadwell", 56, ["pipe"]),                           # 1.75x
    ("broadwell", 64, ["s2", "s3p", "ring"]),              # 2x
    ("knl", 256, ALL8),
    ("knl", 64, ["s2", "s3p", "rpl"]),
    ("knl", 100, ["s2p", "s3", "ring"]),
    ("knl", 112, ["pipe"]),
    ("knl", 128, ["a2a", "rln"]),
    ("knl", 384, ["s2p", "s3", "rln"]),                    # 1.5x
    ("knl", 448, ["pipe"]),                                # 1.75x
    ("knl", 640, ["s2", "s3p", "rpl"]),                    # 2.5x
    ("smp12e5", 192, ALL8),
    ("smp12e5", 96, ["s2", "s3p", "a2a", "rln"]),
    ("smp12e5", 112, ["pipe"]),
    ("smp12e5", 150, ["s2p", "ring", "rpl"]),
    ("smp12e5", 224, ["pipe"]),                            # 1.17x
    ("smp12e5", 288, ["s2", "s3p", "rln"]),                # 1.5x
    ("smp12e5", 384, ["s2p", "s3", "ring"]),               # 2x
    ("smp20e7", 160, ALL8),
    ("smp20e7", 64, ["s2", "s3", "rln"]),
    ("smp20e7", 100, ["s2p", "s3p", "a2a"]),
    ("smp20e7", 112, ["pipe"]),
    ("smp20e7", 224, ["pipe"]),                            # 1.4x
    ("smp20e7", 240, ["s2", "s3p", "rpl"]),                # 1.5x
    ("smp20e7", 400, ["s2p", "s3", "rln"]),                # 2.5x
    ("m512", 512, ALL8),
    ("m512", 200, ["s2", "s3p", "rln"]),
    ("m512", 384, ["s2p", "ring"]),
    ("m512", 448, ["pipe"]),
    ("m512", 768, ["s2p", "s3", "rpl"]),                   # 1.5x
    ("m512", 896, ["pipe"]),                               # 1.75x
    ("m512", 1024, ["s2", "s3p"]),                         # 2x
    ("m4096", 4096, ["s2", "s2p", "s3", "s3p", "ring", "rln", "rpl"]),
    ("m4096", 1000, ["s2p", "s3", "rln"]),
    ("m4096", 2048, ["s2", "s3p", "rpl"]),
    ("m4096", 3584, ["pipe"]),
]
SCALE = [
    ("m5000", 5000, ["s2", "rln"]),
    ("m131072", 131072, ["s3"]),
]
# The matrices bundled in data/matrices/ for `make demo` and the smoke test.
DEMO = [("s2p", 64), ("s2p", 192), ("s3", 192), ("pipe", 28), ("a2a", 16), ("rln", 16)]

# Edge weights (bytes per exchange). Stencil faces are equal: each task owns
# a square (cubic) block, so its halo faces carry the same volume.
STENCIL_FACE = 16384
RING_BLOCK = 262144
PIPELINE_TASKS = 28


class Rng:
    """splitmix64: tiny, fast, and the same on every Python and machine."""

    def __init__(self, seed):
        self.state = seed & MASK

    def next64(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        return z ^ (z >> 31)

    def uniform(self):  # in (0, 1]
        return ((self.next64() >> 11) + 1) * (1.0 / (1 << 53))

    def below(self, n):  # in [0, n); the modulo bias is < n / 2^64
        return self.next64() % n

    def normal(self):
        return math.sqrt(-2.0 * math.log(self.uniform())) * math.cos(2.0 * math.pi * self.uniform())

    def permutation(self, n):
        p = list(range(n))
        for i in range(n - 1, 0, -1):  # Fisher-Yates
            j = self.below(i + 1)
            p[i], p[j] = p[j], p[i]
        return p


def seed_of(*parts):
    """A seed derived from the case's name, so adding a case moves no other."""
    h = 0xCBF29CE484222325
    for byte in "/".join(str(p) for p in parts).encode():
        h = ((h ^ byte) * 0x100000001B3) & MASK  # FNV-1a
    return h


class Graph:
    """Undirected weighted graph on n tasks; parallel edges add up."""

    def __init__(self, n, description):
        self.n = n
        self.description = description
        self.w = {}

    def add(self, i, j, weight):
        if i == j or weight <= 0:
            return
        key = (i, j) if i < j else (j, i)
        self.w[key] = self.w.get(key, 0) + int(weight)

    def permuted(self, perm, description):
        g = Graph(self.n, description)
        for (i, j), w in self.w.items():
            g.add(perm[i], perm[j], w)
        return g

    def matrix_market(self):
        """Symmetric coordinate format: lower triangle, 1-based, sorted."""
        lines = ["%%MatrixMarket matrix coordinate real symmetric"]
        lines += ["% " + d for d in self.description.splitlines()]
        entries = sorted((j, i) for (i, j) in self.w)  # row j > column i
        lines.append(f"{self.n} {self.n} {len(entries)}")
        lines += [f"{r + 1} {c + 1} {self.w[(c, r)]}" for r, c in entries]
        return "\n".join(lines) + "\n"


def grid2(n):
    a = max(d for d in range(1, int(math.isqrt(n)) + 1) if n % d == 0)
    return n // a, a


def grid3(n):
    best = None
    for a in range(1, round(n ** (1 / 3)) + 2):
        if n % a:
            continue
        b, c = grid2(n // a)
        dims = sorted((a, b, c), reverse=True)
        if best is None or dims[0] / dims[2] < best[0] / best[2]:
            best = dims
    return tuple(best)


def stencil2d(n):
    nx, ny = grid2(n)
    g = Graph(n, f"2D 5-point stencil, {nx} x {ny} grid, task = y*{nx} + x, {STENCIL_FACE} bytes per face")
    for y in range(ny):
        for x in range(nx):
            t = y * nx + x
            if x + 1 < nx:
                g.add(t, t + 1, STENCIL_FACE)
            if y + 1 < ny:
                g.add(t, t + nx, STENCIL_FACE)
    return g


def stencil3d(n):
    nx, ny, nz = grid3(n)
    g = Graph(n, f"3D 7-point stencil, {nx} x {ny} x {nz} grid, task = (z*{ny} + y)*{nx} + x, "
                 f"{STENCIL_FACE} bytes per face")
    for z in range(nz):
        for y in range(ny):
            for x in range(nx):
                t = (z * ny + y) * nx + x
                if x + 1 < nx:
                    g.add(t, t + 1, STENCIL_FACE)
                if y + 1 < ny:
                    g.add(t, t + nx, STENCIL_FACE)
                if z + 1 < nz:
                    g.add(t, t + nx * ny, STENCIL_FACE)
    return g


def permuted(g, name):
    perm = Rng(seed_of(name)).permutation(g.n)
    return g.permuted(perm, g.description + "\ntask ids randomly permuted (seed from the name '" + name + "')")


def alltoall(n, name):
    rng = Rng(seed_of(name))
    g = Graph(n, f"all-to-all, {n} tasks, weights uniform in [1, 1000] KiB")
    for i in range(n):
        for j in range(i + 1, n):
            g.add(i, j, 1024 * (1 + rng.below(1000)))
    return g


def ring(n):
    # 1D block-cyclic matrix product C = A x B: task i keeps its block rows of
    # A and C; the panels of B travel round the ring, one hop per step, n steps.
    g = Graph(n, f"ring, {n} tasks: block-cyclic matrix product, each task passes its B panel "
                 f"({RING_BLOCK} bytes) to task i+1 mod {n} at each of {n} steps")
    for i in range(n):
        g.add(i, (i + 1) % n, RING_BLOCK * n)
    return g


# The video-tracking pipeline (one 1920x1080 frame per iteration; bytes per
# frame). Stage 2 (Gaussian blur) and stage 3 (background subtraction) are
# the two costliest and are split into 16 and 4 horizontal bands.
PIXELS = 1920 * 1080
PIPELINE_STAGES = [  # (name, sub-tasks)
    ("decode", 1), ("grey", 1), ("blur", 16), ("background", 4), ("morphology", 1),
    ("label", 1), ("features", 1), ("track", 1), ("annotate", 1), ("encode", 1),
]
PIPELINE_VOLUME = [  # bytes from stage k to stage k+1
    3 * PIXELS,   # decode -> grey: RGB frame
    PIXELS,       # grey -> blur: grey frame
    PIXELS,       # blur -> background: blurred frame
    PIXELS,       # background -> morphology: foreground mask
    PIXELS,       # morphology -> label: cleaned mask
    2 * PIXELS,   # label -> features: 16-bit label image
    65536,        # features -> track: blob descriptors
    16384,        # track -> annotate: tracks
    3 * PIXELS,   # annotate -> encode: RGB frame with overlay
]
BLUR_HALO = 2 * 2 * 1920  # 5x5 kernel: 2 rows each way between adjacent bands


def pipeline(n):
    streams = n // PIPELINE_TASKS
    assert streams * PIPELINE_TASKS == n, n
    g = Graph(n, f"video-tracking pipeline, {streams} independent stream(s) of 10 stages "
                 "(decode grey blur/16 background/4 morphology label features track annotate encode), "
                 f"{PIPELINE_TASKS} tasks per stream; bytes per 1080p frame")
    for s in range(streams):
        first, k = [], s * PIPELINE_TASKS
        for _, parts in PIPELINE_STAGES:
            first.append(k)
            k += parts
        for st in range(len(PIPELINE_STAGES) - 1):
            a, b = PIPELINE_STAGES[st][1], PIPELINE_STAGES[st + 1][1]
            vol = PIPELINE_VOLUME[st]
            # Band i of a stage with a parts overlaps band j of the next with b
            # parts on rows [max(i/a, j/b), min((i+1)/a, (j+1)/b)).
            for i in range(a):
                for j in range(b):
                    lo, hi = max(i * b, j * a), min((i + 1) * b, (j + 1) * a)
                    if hi > lo:
                        g.add(first[st] + i, first[st + 1] + j, vol * (hi - lo) // (a * b))
        blur = first[2]
        for i in range(PIPELINE_STAGES[2][1] - 1):
            g.add(blur + i, blur + i + 1, BLUR_HALO)
        g.add(first[0], first[8], 3 * PIXELS)  # the frame itself, for the overlay
    return g


def random_lognormal(n, name):
    # G(n, m) with m = 4n (mean degree 8), lognormal weights: most pairs talk
    # little, a few a lot (median 16 KiB, sigma 1.5).
    rng = Rng(seed_of(name))
    g = Graph(n, f"random sparse graph, {n} tasks, {4 * n} random pairs (mean degree 8), "
                 "lognormal weights (median 16 KiB, sigma 1.5)")
    for _ in range(4 * n):
        i, j = rng.below(n), rng.below(n)
        g.add(i, j, max(1, round(16384 * math.exp(1.5 * rng.normal()))))
    return g


def random_powerlaw(n, name):
    # Chung-Lu graph: expected degrees follow a power law (exponent 2.5, mean
    # 8), weights Pareto (alpha 1.5, from 1 KiB); ids are shuffled so that the
    # hubs are not the first tasks.
    rng = Rng(seed_of(name))
    gamma = 2.5
    expect = [(i + 1) ** (-1.0 / (gamma - 1.0)) for i in range(n)]
    cum, total = [], 0.0
    for e in expect:
        total += e
        cum.append(total)
    perm = rng.permutation(n)
    g = Graph(n, f"random sparse graph, {n} tasks, Chung-Lu power-law degrees (exponent {gamma}, "
                 f"mean 8), Pareto weights (alpha 1.5, from 1 KiB), ids shuffled")

    def draw():
        return min(n - 1, bisect.bisect_left(cum, rng.uniform() * total))

    for _ in range(4 * n):
        i, j = draw(), draw()
        g.add(perm[i], perm[j], min(1 << 30, round(1024 * rng.uniform() ** (-1.0 / 1.5))))
    return g


def matrix_name(fam, n):
    key = FAMILIES[fam]
    if key.endswith("_permuted"):
        return f"{key[:-len('_permuted')]}_{n}_permuted"
    return f"{key}_{n}"


def make_matrix(fam, n):
    name = matrix_name(fam, n)
    builders = {
        "s2": lambda: stencil2d(n),
        "s2p": lambda: permuted(stencil2d(n), name),
        "s3": lambda: stencil3d(n),
        "s3p": lambda: permuted(stencil3d(n), name),
        "a2a": lambda: alltoall(n, name),
        "ring": lambda: ring(n),
        "pipe": lambda: pipeline(n),
        "rln": lambda: random_lognormal(n, name),
        "rpl": lambda: random_powerlaw(n, name),
    }
    return name, builders[fam]()


def regimes(tasks, pus):
    if tasks < pus:
        return ["spread", "packed"]
    return ["full"] if tasks == pus else ["over"]


def write_if_changed(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return False
    except FileNotFoundError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    return True


def generate(table, machines, out, manifest_name, suite):
    mdir = os.path.join(out, "matrices")
    os.makedirs(mdir, exist_ok=True)
    cases, written, seen = [], {}, set()
    for machine, tasks, fams in table:
        topo = machines[machine]
        pus = 1
        for item in topo.split():
            pus *= int(item.split(":")[1])
        for fam in fams:
            name = matrix_name(fam, tasks)
            if name not in written:
                _, g = make_matrix(fam, tasks)
                write_if_changed(os.path.join(mdir, name + ".mtx"), g.matrix_market())
                written[name] = len(g.w)
            case = f"{name}@{machine}"
            assert case not in seen, case
            seen.add(case)
            cases.append({
                "name": case, "matrix": f"matrices/{name}.mtx", "family": FAMILIES[fam],
                "machine": machine, "topology": topo, "tasks": tasks, "pus": pus,
                "edges": written[name], "load": round(tasks / pus, 4), "regimes": regimes(tasks, pus),
            })
    manifest = {"format": FORMAT_VERSION, "suite": suite, "generator": "bench/mapping/gen_cases.py",
                "machines": machines, "cases": cases}
    write_if_changed(os.path.join(out, manifest_name), json.dumps(manifest, indent=1) + "\n")
    return cases


def demo_files():
    return {matrix_name(f, n) + ".mtx": make_matrix(f, n)[1].matrix_market() for f, n in DEMO}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="build/bench-mapping", help="output directory (default %(default)s)")
    ap.add_argument("--suite", choices=["standard", "scale", "all"], default="standard")
    ap.add_argument("--demo", metavar="DIR", help="write the bundled demo matrices into DIR and stop")
    ap.add_argument("--verify-demo", metavar="DIR", help="exit 1 unless DIR holds the demo matrices as generated")
    args = ap.parse_args(argv)

    if args.verify_demo:
        bad = []
        for fname, text in demo_files().items():
            path = os.path.join(args.verify_demo, fname)
            try:
                with open(path) as f:
                    if f.read() != text:
                        bad.append(f"{path}: differs from what gen_cases.py generates")
            except FileNotFoundError:
                bad.append(f"{path}: missing")
        for b in bad:
            print("gen_cases: " + b, file=sys.stderr)
        return 1 if bad else 0
    if args.demo:
        os.makedirs(args.demo, exist_ok=True)
        for fname, text in demo_files().items():
            write_if_changed(os.path.join(args.demo, fname), text)
        return 0

    if args.suite in ("standard", "all"):
        cases = generate(STANDARD, MACHINES, args.out, "manifest.json", "standard")
        print(f"gen_cases: {len(cases)} cases, "
              f"{sum(len(c['regimes']) for c in cases)} (case, regime) runs -> {args.out}/manifest.json")
    if args.suite in ("scale", "all"):
        cases = generate(SCALE, SCALE_MACHINES, args.out, "scale.json", "scale")
        print(f"gen_cases: {len(cases)} scale cases -> {args.out}/scale.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
