// canopy::CommMatrix in Python: built from NumPy arrays (dense, or the three
// arrays of a sparse matrix's entries), read and written in canopy's file
// formats, given back as NumPy arrays, drawn as SVG.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <limits>
#include <string>

#include "bindings.hpp"
#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"

namespace canopy::python {

namespace {

using Dense = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Indexes = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Values = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

std::string format_name(MatrixFormat f) {
  switch (f) {
    case MatrixFormat::Dense: return "dense";
    case MatrixFormat::MatrixMarket: return "mm";
    case MatrixFormat::EdgeList: return "edges";
    case MatrixFormat::Auto: break;
  }
  return "auto";
}

int task_index(std::int64_t v, std::size_t k, std::int64_t n) {
  if (v < 0 || v >= n)
    throw Error("entry " + std::to_string(k) + ": task " + std::to_string(v) + " is out of range, expected 0.." +
                std::to_string(n - 1));
  return static_cast<int>(v);
}

}  // namespace

void bind_matrix(nb::module_& m) {
  nb::class_<CommMatrix>(m, "CommMatrix")
      .def(nb::init<int>(), nb::arg("num_tasks"))
      // -> (matrix, symmetrized): canopy's own checks and messages.
      .def_static("from_dense",
                  [](Dense a) {
                    if (a.shape(0) != a.shape(1))
                      throw Error("matrix of shape (" + std::to_string(a.shape(0)) + ", " +
                                  std::to_string(a.shape(1)) + "): expected a square n x n matrix");
                    const std::size_t n = a.shape(0);
                    std::vector<std::vector<double>> rows(n);
                    for (std::size_t i = 0; i < n; ++i) rows[i].assign(a.data() + i * n, a.data() + (i + 1) * n);
                    bool symmetrized = false;
                    CommMatrix c = CommMatrix::from_dense(rows, &symmetrized);
                    return std::make_tuple(std::move(c), symmetrized);
                  })
      .def_static("from_entries",
                  [](std::int64_t n, Indexes rows, Indexes cols, Values weights) {
                    if (n < 0 || n > kMaxTasks)
                      throw Error("matrix size " + std::to_string(n) + ": expected 0.." + std::to_string(kMaxTasks) +
                                  " tasks");
                    const std::size_t k = rows.shape(0);
                    if (cols.shape(0) != k || weights.shape(0) != k)
                      throw Error("entries: rows, columns and weights have different lengths");
                    std::vector<Edge> edges(k);
                    for (std::size_t e = 0; e < k; ++e)
                      edges[e] = {task_index(rows.data()[e], e, n), task_index(cols.data()[e], e, n), weights.data()[e]};
                    bool symmetrized = false;
                    CommMatrix c = CommMatrix::from_edges(static_cast<int>(n), edges, &symmetrized);
                    return std::make_tuple(std::move(c), symmetrized);
                  })
      // -> (matrix, format read, symmetrized, had_diagonal)
      .def_static(
          "read",
          [](const std::string& path, const std::string& format) {
            MatrixReadInfo info;
            CommMatrix c = read_matrix(path, parse_matrix_format(format), &info);
            return std::make_tuple(std::move(c), format_name(info.format), info.symmetrized, info.had_diagonal);
          },
          nb::arg("path"), nb::arg("format") = "auto")
      .def(
          "write",
          [](const CommMatrix& c, const std::string& path, const std::string& format) {
            write_matrix(path, c, parse_matrix_format(format));
          },
          nb::arg("path"), nb::arg("format") = "auto")
      .def_prop_ro("size", &CommMatrix::size)
      .def_prop_ro("num_edges", &CommMatrix::num_edges)
      .def("total", &CommMatrix::total)
      .def("at", &CommMatrix::at, nb::arg("i"), nb::arg("j"))
      .def("dense",
           [](const CommMatrix& c) {
             const std::size_t n = static_cast<std::size_t>(c.size());
             auto* data = new double[n * n]();
             nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<double*>(p); });
             for (std::size_t i = 0; i < n; ++i)
               for (std::int64_t k = c.row_begin(static_cast<int>(i)); k < c.row_end(static_cast<int>(i)); ++k)
                 data[i * n + c.cols()[k]] = c.weights()[k];
             return nb::ndarray<nb::numpy, double, nb::ndim<2>>(data, {n, n}, owner);
           })
      // CSR arrays with both directions of each edge: (row_ptr, cols, weights).
      .def("csr",
           [](const CommMatrix& c) {
             return std::make_tuple(to_numpy(std::vector<std::int64_t>(c.row_ptr())),
                                    to_numpy(std::vector<int>(c.cols())), to_numpy(std::vector<double>(c.weights())));
           })
      .def("svg", [](const CommMatrix& c, int max_cells) { return matrix_svg(c, max_cells); },
           nb::arg("max_cells") = 512)
      .def("__eq__", [](const CommMatrix& a, const CommMatrix& b) { return a == b; })
      .def("__ne__", [](const CommMatrix& a, const CommMatrix& b) { return !(a == b); });
}

}  // namespace canopy::python
