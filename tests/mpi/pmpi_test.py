#!/usr/bin/env python3
"""libcanopy-mpi on real MPI jobs: the matrices it writes for programs whose
communication is known (tests/mpi/programs) must match exactly, in bytes and
in messages, with the collectives counted as documented (docs/mpi.md).

usage: pmpi_test.py --mpi openmpi|mpich --lib LIBCANOPY_MPI --programs DIR --canopy CANOPY
Runs each program with 4 ranks (and the halo with 6) under the MPI's own
launcher with the library preloaded; then checks that `canopy matrix` reads
the file. Exit status 0 when everything matches."""
import argparse
import os
import subprocess
import sys
import tempfile


def launcher(mpi, np, lib, env_names):
    if mpi == "openmpi":
        cmd = ["mpirun.openmpi", "--oversubscribe", "-np", str(np), "-x", "LD_PRELOAD=" + lib]
        for n in env_names:
            cmd += ["-x", n]
        return cmd
    cmd = ["mpiexec.mpich", "-n", str(np), "-genv", "LD_PRELOAD", lib]
    return cmd  # hydra passes the environment on


def read_mm(path):
    with open(path) as f:
        lines = [l for l in f.read().splitlines()]
    assert lines[0] == "%%MatrixMarket matrix coordinate real general", (path, lines[0])
    body = [l for l in lines[1:] if not l.startswith("%")]
    n, m, nnz = map(int, body[0].split())
    entries = {}
    for l in body[1:]:
        i, j, v = l.split()
        entries[(int(i) - 1, int(j) - 1)] = float(v)
    assert len(entries) == nnz, (path, nnz, len(entries))
    return n, entries


def add(d, i, j, v):
    if i != j and v:
        d[(i, j)] = d.get((i, j), 0) + v


# Expected (bytes, messages) per directed pair, from each program's comment.
def ring(p):
    b, m = {}, {}
    for r in range(p):
        add(b, r, (r + 1) % p, 3 * 4000)
        add(m, r, (r + 1) % p, 3)
    return b, m


def halo2d(p):
    b, m = {}, {}
    px, py = 2, p // 2
    world = lambda r: p - 1 - r  # the program's communicator reverses the ranks
    for r in range(p):
        x, y = r % px, r // px
        for nx, ny in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
            if 0 <= nx < px and 0 <= ny < py:
                add(b, world(r), world(ny * px + nx), 5 * 800)
                add(m, world(r), world(ny * px + nx), 5)
    return b, m


def master_worker(p):
    b, m = {}, {}
    for w in range(1, p):
        add(b, 0, w, 3 * 16)
        add(m, 0, w, 4)  # three tasks and the empty stop message
        add(b, w, 0, 3 * 8)
        add(m, w, 0, 3)
    return b, m


def binomial_edges(p, root):
    """(parent, child) pairs of the binomial tree documented in canopy_mpi.c."""
    edges = []
    for v in range(1, p):
        parent = v & (v - 1)
        edges.append(((parent + root) % p, (v + root) % p))
    return edges


def collectives(p):
    b, m = {}, {}

    def send(i, j, nbytes):
        if i != j:
            add(b, i, j, nbytes)
            add(m, i, j, 1)

    for i in range(p):  # Alltoall, 10 ints
        for j in range(p):
            send(i, j, 40)
    for par, ch in binomial_edges(p, 1 % p):  # Bcast 3 doubles from rank 1
        send(par, ch, 24)
    for par, ch in binomial_edges(p, 2 % p):  # Reduce 5 ints to rank 2
        send(ch, par, 20)
    for par, ch in binomial_edges(p, 0):  # Allreduce 7 chars: reduce to 0, bcast from 0
        send(ch, par, 7)
        send(par, ch, 7)
    for i in range(1, p):  # Gather 11 chars to 0
        send(i, 0, 11)
    root = 3 if p > 3 else 0
    for i in range(p):  # Scatter 13 chars from root
        send(root, i, 13)
    for i in range(p):  # Allgather 17 chars: ring, p-1 blocks to the right
        for _ in range(p - 1):
            send(i, (i + 1) % p, 17)
    for i in range(p - 1):  # Scan 19 chars: chain
        send(i, i + 1, 19)
    return b, m


CASES = [("ring", 4, ring), ("halo2d", 6, halo2d), ("master_worker", 4, master_worker),
         ("collectives", 4, collectives), ("collectives", 5, collectives)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpi", required=True, choices=["openmpi", "mpich"])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--canopy", required=True)
    a = ap.parse_args()
    env = dict(os.environ)
    # Open MPI refuses root without these (CI containers run as root).
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, np, expected_of in CASES:
            path = os.path.join(tmp, f"{name}{np}.mtx")
            env["CANOPY_MPI_MATRIX"] = path
            cmd = launcher(a.mpi, np, a.lib, ["CANOPY_MPI_MATRIX"]) + [os.path.join(a.programs, name)]
            r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                print(f"FAIL {a.mpi} {name} -np {np}: exit {r.returncode}\n{r.stdout}{r.stderr}")
                failures += 1
                continue
            want_b, want_m = expected_of(np)
            for file, want in ((path, want_b), (path + ".messages", want_m)):
                n, got = read_mm(file)
                if n != np or got != {k: float(v) for k, v in want.items()}:
                    print(f"FAIL {a.mpi} {name} -np {np}: {os.path.basename(file)}")
                    for k in sorted(set(got) | set(want)):
                        if got.get(k) != want.get(k):
                            print(f"  rank {k[0]} -> {k[1]}: got {got.get(k)}, expected {want.get(k)}")
                    failures += 1
                else:
                    print(f"ok   {a.mpi} {name} -np {np}: {os.path.basename(file)} ({len(got)} pairs)")
            # canopy reads what the library writes (made symmetric, with a note).
            r = subprocess.run([a.canopy, "matrix", "--matrix", path], capture_output=True, text=True)
            if r.returncode != 0 or f"tasks          {np}" not in r.stdout:
                print(f"FAIL canopy matrix --matrix {path}: {r.returncode}\n{r.stdout}{r.stderr}")
                failures += 1
        # Without CANOPY_MPI_MATRIX: nothing written, one line saying so.
        del env["CANOPY_MPI_MATRIX"]
        cmd = launcher(a.mpi, 2, a.lib, []) + [os.path.join(a.programs, "ring")]
        r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120, cwd=tmp)
        if r.returncode != 0 or r.stderr.count("CANOPY_MPI_MATRIX is not set") != 1:
            print(f"FAIL without CANOPY_MPI_MATRIX: exit {r.returncode}, stderr {r.stderr!r}")
            failures += 1
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
