// C API: communication matrix handles (empty, from a file, from edges, from
// a dense array), their accessors, and writing them to a file.
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "capi/capi.hpp"

using namespace canopy;
using namespace canopy::capi;

namespace {

const CommMatrix& matrix_of(const canopy_matrix_t* m) { return need(m, "matrix").m; }

MatrixFormat to_format(canopy_matrix_format_t f, bool allow_auto) {
  switch (f) {
    case CANOPY_MATRIX_FORMAT_AUTO:
      if (allow_auto) return MatrixFormat::Auto;
      break;
    case CANOPY_MATRIX_FORMAT_DENSE: return MatrixFormat::Dense;
    case CANOPY_MATRIX_FORMAT_MATRIXMARKET: return MatrixFormat::MatrixMarket;
    case CANOPY_MATRIX_FORMAT_EDGELIST: return MatrixFormat::EdgeList;
    case CANOPY_MATRIX_FORMAT_MAX_ENUM_: break;
  }
  fail(CANOPY_EINVAL, fmt::format("matrix format {} is not one of {}DENSE (1), MATRIXMARKET (2), EDGELIST (3)",
                                  static_cast<int>(f), allow_auto ? "AUTO (0), " : ""));
}

void check_size(int n) {
  if (n < 0) fail(CANOPY_EINVAL, fmt::format("n = {}: a matrix cannot have a negative number of tasks", n));
  if (n > kMaxTasks) fail(CANOPY_ERANGE, fmt::format("n = {} is more than the limit of {} tasks", n, kMaxTasks));
}

unsigned info_bits(bool symmetrized, bool had_diagonal) {
  return (symmetrized ? CANOPY_MATRIX_SYMMETRIZED : 0u) | (had_diagonal ? CANOPY_MATRIX_HAD_DIAGONAL : 0u);
}

}  // namespace

extern "C" {

canopy_status_t canopy_matrix_create(canopy_matrix_t** out, int n) {
  return guard("canopy_matrix_create", CANOPY_EINVAL, [&] {
    need(out, "out") = nullptr;
    check_size(n);
    *out = new canopy_matrix{CommMatrix(n)};
  });
}

canopy_status_t canopy_matrix_create_from_file(canopy_matrix_t** out, const char* path,
                                               canopy_matrix_format_t format, unsigned* info) {
  return guard("canopy_matrix_create_from_file", CANOPY_EPARSE, [&] {
    need(out, "out") = nullptr;
    need_str(path, "path");
    MatrixFormat f = to_format(format, true);
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) fail(CANOPY_EIO, fmt::format("{}: is a directory", path));
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(CANOPY_EIO, fmt::format("{}: cannot open ({})", path, std::strerror(errno)));
    MatrixReadInfo ri;
    auto m = std::make_unique<canopy_matrix>(canopy_matrix{read_matrix(in, path, f, &ri)});
    if (info) *info = info_bits(ri.symmetrized, ri.had_diagonal);
    *out = m.release();
  });
}

canopy_status_t canopy_matrix_create_from_edges(canopy_matrix_t** out, int n, const canopy_edge_t* edges,
                                                size_t num_edges, unsigned* info) {
  return guard("canopy_matrix_create_from_edges", CANOPY_EINVAL, [&] {
    need(out, "out") = nullptr;
    check_size(n);
    if (num_edges && !edges) fail(CANOPY_EINVAL, fmt::format("edges is NULL but num_edges is {}", num_edges));
    std::vector<Edge> es;
    es.reserve(num_edges);
    for (size_t k = 0; k < num_edges; ++k) {
      const canopy_edge_t& e = edges[k];
      if (e.i < 0 || e.i >= n || e.j < 0 || e.j >= n)
        fail(CANOPY_ERANGE, fmt::format("edge {}: ({}, {}) is outside [0, {})", k, e.i, e.j, n));
      es.push_back(Edge{e.i, e.j, e.weight});
    }
    bool sym = false;
    auto m = std::make_unique<canopy_matrix>(canopy_matrix{CommMatrix::from_edges(n, es, &sym)});
    if (info) *info = info_bits(sym, false);
    *out = m.release();
  });
}

canopy_status_t canopy_matrix_create_from_dense(canopy_matrix_t** out, int n, const double* values, unsigned* info) {
  return guard("canopy_matrix_create_from_dense", CANOPY_EINVAL, [&] {
    need(out, "out") = nullptr;
    check_size(n);
    if (n > 0) need(values, "values");
    std::vector<std::vector<double>> rows(n);
    for (int i = 0; i < n; ++i) rows[i].assign(values + static_cast<size_t>(i) * n, values + static_cast<size_t>(i + 1) * n);
    bool sym = false;
    auto m = std::make_unique<canopy_matrix>(canopy_matrix{CommMatrix::from_dense(rows, &sym)});
    if (info) *info = info_bits(sym, false);
    *out = m.release();
  });
}

void canopy_matrix_destroy(canopy_matrix_t* matrix) { delete matrix; }

canopy_status_t canopy_matrix_size(const canopy_matrix_t* matrix, int* n) {
  return guard("canopy_matrix_size", CANOPY_EINVAL, [&] { need(n, "n") = matrix_of(matrix).size(); });
}

canopy_status_t canopy_matrix_num_edges(const canopy_matrix_t* matrix, int64_t* out) {
  return guard("canopy_matrix_num_edges", CANOPY_EINVAL, [&] { need(out, "out") = matrix_of(matrix).num_edges(); });
}

canopy_status_t canopy_matrix_get(const canopy_matrix_t* matrix, int i, int j, double* weight) {
  return guard("canopy_matrix_get", CANOPY_EINVAL, [&] {
    const CommMatrix& m = matrix_of(matrix);
    need(weight, "weight");
    check_index(i, m.size(), "task");
    check_index(j, m.size(), "task");
    *weight = m.at(i, j);
  });
}

canopy_status_t canopy_matrix_write_file(const canopy_matrix_t* matrix, const char* path,
                                         canopy_matrix_format_t format) {
  return guard("canopy_matrix_write_file", CANOPY_EINVAL, [&] {
    const CommMatrix& m = matrix_of(matrix);
    need_str(path, "path");
    MatrixFormat f = to_format(format, false);
    std::ofstream o(path, std::ios::binary);
    if (!o) fail(CANOPY_EIO, fmt::format("{}: cannot open for writing ({})", path, std::strerror(errno)));
    write_matrix(o, m, f);
    o.flush();
    if (!o) fail(CANOPY_EIO, fmt::format("{}: write failed", path));
  });
}

}  // extern "C"
