#!/usr/bin/env python3
"""One process, one OpenMP runtime (src/omp/core/one_runtime.cpp).

  one_runtime_test.py CANOPY_OMP_DIR GCC_PROGRAM CLANG_PROGRAM

- canopy preloaded as libomp.so.5 into a GCC program (whose libgomp.so.1 the
  loader then takes from the system): canopy names both runtimes and stops
  with status 1, before the program runs;
- the reverse (canopy as libgomp.so.1, the clang program's libomp.so.5 from
  the system): stopped too;
- both names from CANOPY_OMP_DIR (LD_LIBRARY_PATH), canopy also preloaded
  under the other name: one runtime, the program runs and passes.
"""
import os
import subprocess
import sys

from sanitizer_env import with_sanitizer  # tests/omp: the script's own directory


def run(program, **env):
    e = dict(os.environ)
    e.pop("LD_LIBRARY_PATH", None)
    e.pop("LD_PRELOAD", None)
    e.update(env)
    with_sanitizer(e)
    e.setdefault("OMP_NUM_THREADS", "2")
    return subprocess.run([program], env=e, capture_output=True, text=True, timeout=60)


def main():
    d, gcc_prog, clang_prog = sys.argv[1:4]
    failures = []
    for what, program, preload, other in (("GCC program, canopy preloaded as libomp.so.5", gcc_prog, "libomp.so.5", "libgomp.so.1"),
                                          ("clang program, canopy preloaded as libgomp.so.1", clang_prog, "libgomp.so.1", "libomp.so.5")):
        r = run(program, LD_PRELOAD=os.path.join(d, preload))
        if r.returncode != 1 or "loads two OpenMP runtimes" not in r.stderr or other not in r.stderr:
            failures.append(f"{what}: expected status 1 and a message naming {other}, got {r.returncode}: {r.stderr.strip()[:300]}")
        elif r.stdout:
            failures.append(f"{what}: the program ran before canopy stopped it: {r.stdout.strip()[:200]}")
    for program, preload in ((gcc_prog, "libomp.so.5"), (clang_prog, "libgomp.so.1")):
        r = run(program, LD_LIBRARY_PATH=d, LD_PRELOAD=os.path.join(d, preload))
        if r.returncode != 0:
            failures.append(f"{program} with both names from {d}: status {r.returncode}: {r.stderr.strip()[:300]}")
    for f in failures:
        print("one_runtime_test: " + f)
    print(f"one_runtime_test: {len(failures)} problem(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
