#!/usr/bin/env python3
"""Compares the libomp ABI of canopy's OpenMP runtime with the system
libomp's (LLVM 14): every symbol libomp exports under its version node
VERSION (the one clang-compiled programs are bound to: __kmpc_*, kmp_*,
omp_*, ompc_*) must be exported by canopy under VERSION too (default or
not: canopy's omp_* routines are libgomp's by default and VERSION aliases).
The omissions file lists what canopy leaves out on purpose, each with a
reason; an omission that matches nothing missing is an error too.

  kmp_abi_test.py CANOPY_LIB [--system LIB] [--omissions FILE]

Exit 0 on a match, 1 on a missing symbol or a stale omission, 2 on bad
input, 77 (ctest's skip code) when the system libomp or objdump is absent.
"""
import argparse
import fnmatch
import os
import shutil
import sys

from gomp_abi_test import exported, read_omissions

SYSTEM_LIBOMP = "/usr/lib/llvm-14/lib/libomp.so.5"
HERE = os.path.dirname(os.path.abspath(__file__))
PREFIXES = ("__kmpc_", "kmp_", "omp_", "ompc_")


def version_names(lib):
    return {name for version, name in exported(lib)
            if version.strip("()") == "VERSION" and name.startswith(PREFIXES)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("canopy_lib")
    ap.add_argument("--system", default=SYSTEM_LIBOMP)
    ap.add_argument("--omissions", default=os.path.join(HERE, "kmp_abi_omissions.txt"))
    args = ap.parse_args()
    if not shutil.which("objdump"):
        print("kmp_abi_test: skipped: objdump (binutils) not found")
        return 77
    if not os.path.exists(args.system):
        print(f"kmp_abi_test: skipped: no system libomp at {args.system}")
        return 77
    if not os.path.exists(args.canopy_lib):
        print(f"kmp_abi_test: {args.canopy_lib}: no such file (build canopy_omp first)", file=sys.stderr)
        return 2
    rules = read_omissions(args.omissions)
    system, canopy = version_names(args.system), version_names(args.canopy_lib)
    missing = sorted(system - canopy)
    used, failures = set(), []
    for name in missing:
        rule = next((r for r in rules if fnmatch.fnmatchcase("VERSION", r[0]) and fnmatch.fnmatchcase(name, r[1])), None)
        if rule:
            used.add(rule[3])
        else:
            failures.append(f"missing: {name} version VERSION")
    for r in rules:
        if r[3] not in used:
            failures.append(f"stale omission (line {r[3]}: {r[0]} {r[1]}): canopy exports all of them, remove the line")
    for line in failures:
        print("kmp_abi_test: " + line)
    print(f"kmp_abi_test: {len(system)} libomp symbols, {len(missing)} not in canopy, "
          f"{len(missing) - sum(1 for f in failures if f.startswith('missing'))} of them omitted on purpose, "
          f"{len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
