#!/usr/bin/env python3
"""Compares the versioned dynamic symbol table of canopy's OpenMP runtime
with the system libgomp's: every symbol libgomp exports for host code, under
each of its versions (default `V` and old `(V)` ones alike, such as the
OMP_1.0 lock routines), must be exported by canopy under the same version
and default-ness, so that any program linked against libgomp finds every
symbol it was bound to. The omissions file lists what canopy leaves out on
purpose (OpenACC, device plugins), each with a reason; an omission that
matches nothing missing is an error too (the list stays true).

  gomp_abi_test.py CANOPY_LIB [--system LIB] [--omissions FILE]

Exit 0 on a match, 1 on a missing symbol or a stale omission, 2 on bad
input, 77 (ctest's skip code) when the system libgomp or objdump is absent.
"""
import argparse
import fnmatch
import os
import shutil
import subprocess
import sys

SYSTEM_LIBGOMP = "/usr/lib/x86_64-linux-gnu/libgomp.so.1"
HERE = os.path.dirname(os.path.abspath(__file__))


def exported(lib):
    """{(version, name)} of the defined global dynamic symbols; an old
    (hidden, non-default) version keeps objdump's parentheses."""
    out = subprocess.run(["objdump", "-T", lib], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"gomp_abi_test: objdump -T {lib} failed: {out.stderr.strip()}")
    syms = set()
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) < 6 or f[1] != "g" or f[3] in ("*UND*", "*ABS*"):
            continue
        syms.add((f[-2], f[-1]))
    return syms


def read_omissions(path):
    rules = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = line.split(None, 2)
            if len(parts) < 3:
                print(f"gomp_abi_test: {path}:{n}: expected '<version glob> <symbol glob> <reason>', got '{line}'",
                      file=sys.stderr)
                sys.exit(2)
            rules.append((parts[0], parts[1], parts[2], n))
    return rules


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("canopy_lib")
    ap.add_argument("--system", default=SYSTEM_LIBGOMP)
    ap.add_argument("--omissions", default=os.path.join(HERE, "gomp_abi_omissions.txt"))
    args = ap.parse_args()
    if not shutil.which("objdump"):
        print("gomp_abi_test: skipped: objdump (binutils) not found")
        return 77
    if not os.path.exists(args.system):
        print(f"gomp_abi_test: skipped: no system libgomp at {args.system}")
        return 77
    if not os.path.exists(args.canopy_lib):
        print(f"gomp_abi_test: {args.canopy_lib}: no such file (build canopy_omp first)", file=sys.stderr)
        return 2
    rules = read_omissions(args.omissions)
    system, canopy = exported(args.system), exported(args.canopy_lib)
    missing = sorted(system - canopy, key=lambda s: (s[1], s[0]))
    used = set()
    failures = []
    for version, name in missing:
        bare = version.strip("()")
        rule = next((r for r in rules if fnmatch.fnmatchcase(bare, r[0]) and fnmatch.fnmatchcase(name, r[1])), None)
        if rule:
            used.add(rule[3])
        else:
            failures.append(f"missing: {name} version {version}")
    for r in rules:
        if r[3] not in used:
            failures.append(f"stale omission (line {r[3]}: {r[0]} {r[1]}): canopy exports all of them, remove the line")
    for line in failures:
        print("gomp_abi_test: " + line)
    print(f"gomp_abi_test: {len(system)} libgomp symbols, {len(missing)} not in canopy, "
          f"{len(missing) - sum(1 for f in failures if f.startswith('missing'))} of them omitted on purpose, "
          f"{len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
