"""canopy.CommMatrix: NumPy, SciPy and the file formats give the same
matrix; asymmetric input is made symmetric with the CLI's note as a warning;
bad values raise canopy.Error with canopy's message."""
import warnings

import numpy as np
import pytest
import scipy.sparse

import canopy
from conftest import ROOT, TEST_DATA

RING8 = TEST_DATA / "matrices" / "ring8.txt"


def ring8_array():
    a = np.zeros((8, 8))
    for i in range(8):
        j = (i + 1) % 8
        a[i, j] = a[j, i] = 100 if i % 2 == 0 else 10
    a[0, 4] = a[4, 0] = 1.5
    return a


@pytest.mark.parametrize("name", ["ring8.txt", "ring8.csv", "ring8.edges", "ring8.mtx"])
def test_every_file_format_equals_numpy_and_scipy(name):
    from_file = canopy.CommMatrix.read(TEST_DATA / "matrices" / name)
    a = ring8_array()
    assert from_file == canopy.CommMatrix.from_numpy(a)
    assert from_file == canopy.CommMatrix.from_scipy(scipy.sparse.csr_matrix(a))
    assert from_file == canopy.CommMatrix.from_scipy(scipy.sparse.coo_array(np.triu(a)))  # one direction per pair
    assert from_file == canopy.CommMatrix.from_numpy(a.astype(np.float32).tolist())
    np.testing.assert_array_equal(from_file.to_numpy(), a)
    assert (from_file.size, len(from_file), from_file.num_edges) == (8, 8, 9)
    assert from_file.total() == pytest.approx(4 * 100 + 4 * 10 + 1.5)
    assert from_file.at(0, 4) == 1.5 and from_file.at(4, 0) == 1.5 and from_file.at(0, 2) == 0


@pytest.mark.parametrize("path", sorted((ROOT / "data" / "matrices").glob("*.mtx")), ids=lambda p: p.name)
def test_scipy_round_trip_of_the_data_matrices(path):
    m = canopy.CommMatrix.read(path)
    s = m.to_scipy()
    assert s.shape == (m.size, m.size)
    assert (s != s.T).nnz == 0
    assert s.nnz == 2 * m.num_edges
    assert canopy.CommMatrix.from_scipy(s) == m


@pytest.mark.parametrize("fmt,ext", [("dense", "txt"), ("mm", "mtx"), ("edges", "edges")])
def test_write_and_read_back(tmp_path, fmt, ext):
    m = canopy.CommMatrix.read(RING8)
    path = tmp_path / f"ring.{ext}"
    m.write(path, fmt)
    assert canopy.CommMatrix.read(path, fmt) == m
    assert canopy.CommMatrix.read(path) == m  # detected from the extension


def test_edges_and_empty():
    m = canopy.CommMatrix.from_edges(4, [(0, 1, 10), (2, 3, 5)])
    assert m.num_edges == 2 and m.at(1, 0) == 10
    e = canopy.CommMatrix(5)
    assert e.size == 5 and e.num_edges == 0 and e.total() == 0


def test_asymmetric_input_becomes_c_plus_ct_with_the_clis_note():
    a = np.loadtxt(TEST_DATA / "cli" / "asym4.txt")
    with pytest.warns(UserWarning, match=r"not symmetric; using C \+ C\^T"):
        m = canopy.CommMatrix.from_numpy(a)
    assert m.symmetrized and m.at(0, 1) == 8
    with pytest.warns(UserWarning, match=r"asym4.txt is not symmetric"):
        f = canopy.CommMatrix.read(TEST_DATA / "cli" / "asym4.txt")
    assert f == m
    with pytest.warns(UserWarning, match="not symmetric"):
        assert canopy.CommMatrix.from_scipy(scipy.sparse.csr_matrix(a)) == m
    with pytest.warns(UserWarning, match="diagonal entries ignored"):
        d = canopy.CommMatrix.from_numpy(np.eye(3) + 1)
    assert d.at(0, 0) == 0 and d.at(0, 1) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not canopy.CommMatrix.from_numpy(ring8_array()).symmetrized


def test_bad_values_raise_canopys_messages():
    with pytest.raises(canopy.Error, match=r"entry \[1\]\[2\] = -3 is not allowed, expected a finite non-negative"):
        canopy.CommMatrix.from_numpy(np.loadtxt(TEST_DATA / "cli" / "negative.txt"))
    with pytest.raises(canopy.Error, match=r"entry \[0\]\[1\] = nan is not allowed"):
        canopy.CommMatrix.from_numpy([[0, np.nan], [np.nan, 0]])
    with pytest.raises(canopy.Error, match=r"weight inf is not allowed"):
        canopy.CommMatrix.from_scipy(scipy.sparse.csr_matrix([[0, np.inf], [0, 0]]))
    with pytest.raises(canopy.Error, match=r"shape \(2, 3\): expected a square"):
        canopy.CommMatrix.from_numpy(np.zeros((2, 3)))
    with pytest.raises(canopy.Error, match=r"expected a square"):
        canopy.CommMatrix.from_numpy(np.zeros(4))
    with pytest.raises(canopy.Error, match=r"shape \(2, 3\): expected a square"):
        canopy.CommMatrix.from_scipy(scipy.sparse.csr_matrix(np.ones((2, 3))))
    with pytest.raises(canopy.Error, match=r"task 4 is out of range, expected 0..3"):
        canopy.CommMatrix.from_edges(4, [(0, 4, 1)])
    with pytest.raises(canopy.Error, match=r"negative.txt:2: negative entry '-3' in row 2, column 3"):
        canopy.CommMatrix.read(TEST_DATA / "cli" / "negative.txt")
    with pytest.raises(canopy.Error, match="ragged.txt"):
        canopy.CommMatrix.read(TEST_DATA / "cli" / "ragged.txt")
    with pytest.raises(canopy.Error, match="nowhere.mtx"):
        canopy.CommMatrix.read("nowhere.mtx")
    with pytest.raises(canopy.Error, match="format"):
        canopy.CommMatrix.read(RING8, "xlsx")
    with pytest.raises(canopy.Error, match="negative"):
        canopy.CommMatrix(-1)


def test_svg_heat_map():
    m = canopy.CommMatrix.read(RING8)
    svg = m._repr_svg_()
    assert svg.lstrip().startswith(("<svg", "<?xml")) and svg.rstrip().endswith("</svg>")
    assert m.svg(max_cells=4) != svg  # binned down
