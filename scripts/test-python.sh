#!/usr/bin/env bash
# The Python package's tests (`make test-python`, part of `make test`):
# a venv in BUILD/pyenv (Debian's Python refuses packages installed into the
# system), the build requirements and test tools from PyPI, `pip install .`
# (the extension built by the project's CMake in build/python, reused by the
# next run; through ccache when it is installed), then pytest on python/tests.
# The tests compare with the CLI in BUILD/bin/canopy when it is built.
# Usage: scripts/test-python.sh [BUILD]   (PYTHON=python3 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
venv="$build/pyenv"
python=${PYTHON:-python3}

start=$(date +%s)
if ! "$venv/bin/python" -c "" 2>/dev/null; then
  rm -rf "$venv"
  "$python" -m venv "$venv"
fi
# Satisfied requirements cost a second; --no-build-isolation below then
# reuses them (and the build directory) instead of a fresh build environment.
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
  "scikit-build-core>=0.10" "nanobind>=2.0" numpy scipy pytest
if command -v ccache >/dev/null && [ -z "${CMAKE_ARGS:-}" ]; then
  export CMAKE_ARGS="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation .
if [ -z "${CANOPY_CLI:-}" ] && [ -x "$build/bin/canopy" ]; then
  export CANOPY_CLI="$PWD/$build/bin/canopy"
fi
# Run from python/tests' parent with the installed package (not the sources).
"$venv/bin/python" -m pytest -q -p no:cacheprovider python/tests
echo "test-python: $(( $(date +%s) - start )) s (venv, pip install ., pytest)"
