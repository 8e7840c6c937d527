"""docs/python.md cannot rot: its ```python cells run in order, in one
namespace, from the repository's root, and each cell's printed output must
equal the ```text block that follows it on the page."""
import contextlib
import io
import re

import pytest

from conftest import ROOT

DOC = ROOT / "docs" / "python.md"
CELL = re.compile(r"```python\n(.*?)```\n(?:\s*```text\n(.*?)```\n)?", re.S)


def cells():
    return [(m.group(1), m.group(2)) for m in CELL.finditer(DOC.read_text())]


def test_the_page_has_cells_with_outputs():
    found = cells()
    assert len(found) >= 8
    assert all(out is not None for _, out in found)


def test_every_cell_prints_what_the_page_shows(monkeypatch):
    monkeypatch.chdir(ROOT)
    namespace = {}
    for i, (code, expected) in enumerate(cells()):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(compile(code, f"docs/python.md cell {i + 1}", "exec"), namespace)
        if expected is not None:
            assert out.getvalue() == expected, f"docs/python.md cell {i + 1}:\n{code}"
    # The objects a notebook would draw inline.
    for name in ("topo", "matrix", "placement"):
        assert namespace[name]._repr_svg_().rstrip().endswith("</svg>")


def test_install_commands_name_what_exists():
    text = DOC.read_text()
    assert "pip install ." in text and (ROOT / "pyproject.toml").is_file()
    assert (ROOT / "scripts" / "setup.sh").is_file()
    for path in re.findall(r'"(data/matrices/[^"]+)"', text):
        assert (ROOT / path).is_file(), path
