"""Shared fixtures of the Python package's tests: the repository's paths,
the CLI's golden files, and the CLI itself when it is built (the tests that
compare with the CLI run it; the golden files cover the rest without it)."""
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEST_DATA = ROOT / "tests" / "data"
GOLDEN = ROOT / "tests" / "cli" / "golden"
SMALL = "pack:2 numa:2 core:4 pu:2"  # the CLI tests' small machine
TWO_SOCKET = "topologies/two-socket.xml"  # relative to tests/data, as in the goldens


def golden(name):
    return (GOLDEN / name).read_text()


@pytest.fixture
def in_test_data(monkeypatch):
    """Run in tests/data, where the CLI's golden outputs were made (the
    topology's source string, a relative path, appears in them)."""
    monkeypatch.chdir(TEST_DATA)
    return TEST_DATA


def _find_cli():
    for c in (os.environ.get("CANOPY_CLI"), ROOT / "build" / "bin" / "canopy", shutil.which("canopy")):
        if c and pathlib.Path(c).is_file() and os.access(c, os.X_OK):
            return str(c)
    return None


@pytest.fixture(scope="session")
def cli():
    """A function running the canopy CLI in tests/data and returning its
    standard output; skips when the CLI is not built (CANOPY_CLI=path)."""
    path = _find_cli()
    if path is None:
        pytest.skip("the canopy CLI is not built (set CANOPY_CLI or build build/bin/canopy)")

    def run(*args):
        r = subprocess.run([path, *args], cwd=TEST_DATA, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return r.stdout

    return run
