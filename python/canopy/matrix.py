"""canopy.CommMatrix: how much task i and task j communicate, from NumPy
arrays, SciPy sparse matrices or canopy's file formats (dense rows,
MatrixMarket, edge lists). Asymmetric input becomes C + Cᵀ with a warning,
as the CLI notes it; negative, NaN or infinite values raise canopy.Error."""
import os
import warnings

import numpy as np

from . import _canopy


def _note_symmetrized(name):
    warnings.warn(f"{name} is not symmetric; using C + C^T (the total traffic between each pair of tasks)",
                  UserWarning, stacklevel=3)


def _note_diagonal(name):
    warnings.warn(f"{name}: non-zero diagonal entries ignored (a task does not talk to itself)", UserWarning,
                  stacklevel=3)


class CommMatrix:
    """A symmetric, non-negative communication matrix between tasks (sparse
    inside). CommMatrix(n) is n tasks that do not communicate."""

    def __init__(self, num_tasks=0, *, _native=None):
        self._m = _native if _native is not None else _canopy.CommMatrix(int(num_tasks))
        self.symmetrized = False  # the input was asymmetric and C + Cᵀ was taken

    @classmethod
    def _wrap(cls, native, symmetrized=False):
        m = cls(_native=native)
        m.symmetrized = bool(symmetrized)
        return m

    @classmethod
    def from_numpy(cls, array):
        """From a dense n x n array (any real dtype)."""
        a = np.ascontiguousarray(array, dtype=np.float64)
        if a.ndim != 2:
            raise _canopy.Error(f"matrix with {a.ndim} dimension(s): expected a square n x n matrix")
        native, symmetrized = _canopy.CommMatrix.from_dense(a)
        if a.shape[0] and np.any(np.diagonal(a) != 0):
            _note_diagonal("the array")
        if symmetrized:
            _note_symmetrized("the array")
        return cls._wrap(native, symmetrized)

    @classmethod
    def from_scipy(cls, sparse):
        """From a SciPy sparse matrix or array (any format); repeated entries add up."""
        coo = sparse.tocoo()
        if coo.ndim != 2 or coo.shape[0] != coo.shape[1]:
            raise _canopy.Error(f"matrix of shape {tuple(coo.shape)}: expected a square n x n matrix")
        rows = np.ascontiguousarray(coo.row, dtype=np.int64)
        cols = np.ascontiguousarray(coo.col, dtype=np.int64)
        data = np.ascontiguousarray(coo.data, dtype=np.float64)
        diagonal = (rows == cols) & (data != 0)
        native, symmetrized = _canopy.CommMatrix.from_entries(coo.shape[0], rows, cols, data)
        if np.any(diagonal):
            _note_diagonal("the sparse matrix")
        if symmetrized:
            _note_symmetrized("the sparse matrix")
        return cls._wrap(native, symmetrized)

    @classmethod
    def from_edges(cls, num_tasks, edges):
        """From (i, j, weight) triples; a pair given once counts once."""
        e = np.asarray(list(edges), dtype=np.float64).reshape(-1, 3)
        if np.any(e[:, :2] != np.floor(e[:, :2])):
            raise _canopy.Error("edges: task indexes must be integers")
        native, symmetrized = _canopy.CommMatrix.from_entries(
            int(num_tasks), np.ascontiguousarray(e[:, 0], dtype=np.int64),
            np.ascontiguousarray(e[:, 1], dtype=np.int64), np.ascontiguousarray(e[:, 2]))
        return cls._wrap(native, symmetrized)

    @classmethod
    def read(cls, path, format="auto"):
        """Read a file: format "auto" (detected), "dense", "mm" or "edges"."""
        path = os.fspath(path)
        native, _, symmetrized, had_diagonal = _canopy.CommMatrix.read(path, format)
        if symmetrized:
            _note_symmetrized(path)
        if had_diagonal:
            _note_diagonal(path)
        return cls._wrap(native, symmetrized)

    def write(self, path, format="auto"):
        """Write a file that read() gives back as the same matrix (format by extension with "auto")."""
        self._m.write(os.fspath(path), format)

    @property
    def size(self):
        """Number of tasks."""
        return self._m.size

    def __len__(self):
        return self._m.size

    @property
    def num_edges(self):
        """Pairs of tasks that communicate."""
        return self._m.num_edges

    def total(self):
        """Total volume (each pair counted once)."""
        return self._m.total()

    def at(self, i, j):
        return self._m.at(int(i), int(j))

    def to_numpy(self):
        """Dense n x n float64 array (n² memory)."""
        return self._m.dense()

    def to_scipy(self):
        """scipy.sparse.csr_matrix with both directions of each pair."""
        import scipy.sparse
        row_ptr, cols, weights = self._m.csr()
        return scipy.sparse.csr_matrix((weights, cols, row_ptr), shape=(self.size, self.size))

    def svg(self, max_cells=512):
        """Heat map as SVG (darker = more traffic), as `canopy matrix --svg`."""
        return self._m.svg(int(max_cells))

    def _repr_svg_(self):
        return self.svg()

    def __eq__(self, other):
        return isinstance(other, CommMatrix) and self._m == other._m

    def __repr__(self):
        return f"<canopy.CommMatrix {self.size} tasks, {self.num_edges} pairs, total {self.total():g}>"


def as_matrix(matrix):
    """A CommMatrix from what map(), cost() and compare() accept: a
    CommMatrix, a NumPy array (or nested lists), a SciPy sparse matrix, a
    path, or an int (that many tasks that do not communicate)."""
    if isinstance(matrix, CommMatrix):
        return matrix
    if isinstance(matrix, (bool, np.bool_)):
        raise TypeError("matrix: expected a CommMatrix, an array, a sparse matrix, a path or a number of tasks")
    if isinstance(matrix, (int, np.integer)):
        return CommMatrix(int(matrix))
    if isinstance(matrix, (str, os.PathLike)):
        return CommMatrix.read(matrix)
    if hasattr(matrix, "tocoo"):
        return CommMatrix.from_scipy(matrix)
    return CommMatrix.from_numpy(matrix)
