// CommMatrix construction and queries. Every constructor funnels into
// from_edges, which builds the CSR in memory proportional to the number of
// edges (never n²): a directed CSR of the input C (duplicates summed), then,
// when C is not symmetric, the CSR of C + Cᵀ.
//
// Symmetrization rule: a symmetric C is kept as is (a TreeMatch matrix that
// gives 5 in both [i][j] and [j][i] means 5, not 10). Otherwise the result is
// C + Cᵀ, the total traffic between i and j. A triangular input (every pair
// given in one direction only, as in a symmetric MatrixMarket file or an edge
// list) is a listing of a symmetric matrix: C + Cᵀ gives back its values and
// `symmetrized` stays false. `symmetrized` is set only when two directions of
// some pair were actually added together in an asymmetric input.
#include "canopy/comm_matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "canopy/error.hpp"

namespace canopy {
namespace {

void check_size(std::int64_t n) {
  if (n < 0) throw Error(fmt::format("matrix size {} is negative, expected 0..{} tasks", n, kMaxTasks));
  if (n > kMaxTasks) throw Error(fmt::format("too many tasks: {}, expected at most {}", n, kMaxTasks));
}

struct Csr {
  std::vector<std::int64_t> ptr;
  std::vector<int> col;
  std::vector<double> val;
};

// Builds a CSR from the directed entries that `for_each(emit)` produces
// (emit(i, j, w)), in two passes (count, fill), then sorts each row by column
// and sums duplicates. Memory: the entries plus n + 1 offsets.
template <class ForEach>
Csr assemble(int n, ForEach&& for_each) {
  Csr c;
  c.ptr.assign(static_cast<std::size_t>(n) + 1, 0);
  for_each([&](int i, int, double) { ++c.ptr[i + 1]; });
  for (int i = 0; i < n; ++i) c.ptr[i + 1] += c.ptr[i];
  c.col.resize(static_cast<std::size_t>(c.ptr[n]));
  c.val.resize(c.col.size());
  // ptr[i] serves as row i's fill cursor (no second n-sized array: for a
  // huge sparse matrix the offsets are most of the memory); once filled,
  // ptr[i] is the start of row i + 1, so the offsets shift back by one.
  for_each([&](int i, int j, double w) {
    auto k = c.ptr[i]++;
    c.col[k] = j;
    c.val[k] = w;
  });
  for (int i = n; i > 0; --i) c.ptr[i] = c.ptr[i - 1];
  c.ptr[0] = 0;

  std::vector<std::pair<int, double>> row;
  std::int64_t out = 0;
  for (int i = 0; i < n; ++i) {
    const std::int64_t b = c.ptr[i], e = c.ptr[i + 1];
    row.clear();
    for (std::int64_t k = b; k < e; ++k) row.emplace_back(c.col[k], c.val[k]);
    std::sort(row.begin(), row.end(), [](const auto& a, const auto& b2) { return a.first < b2.first; });
    c.ptr[i] = out;
    for (std::size_t k = 0; k < row.size();) {
      int j = row[k].first;
      double sum = 0;
      for (; k < row.size() && row[k].first == j; ++k) sum += row[k].second;
      if (!std::isfinite(sum))
        throw Error(fmt::format("the weights between tasks {} and {} add up to more than the largest double, "
                                "expected a finite total",
                                i, j));
      c.col[out] = j;
      c.val[out] = sum;
      ++out;
    }
  }
  c.ptr[n] = out;
  c.col.resize(static_cast<std::size_t>(out));
  c.val.resize(static_cast<std::size_t>(out));
  // Duplicates may have left slack; the brief is memory in proportion to edges.
  c.col.shrink_to_fit();
  c.val.shrink_to_fit();
  return c;
}

// Index of column j in row i of `c`, or -1.
std::int64_t find(const Csr& c, int i, int j) {
  auto b = c.col.begin() + c.ptr[i], e = c.col.begin() + c.ptr[i + 1];
  auto it = std::lower_bound(b, e, j);
  return (it != e && *it == j) ? (it - c.col.begin()) : -1;
}

}  // namespace

CommMatrix::CommMatrix(int n) {
  check_size(n);
  n_ = n;
  row_ptr_.assign(static_cast<std::size_t>(n) + 1, 0);
}

CommMatrix CommMatrix::from_edges(int n, const std::vector<Edge>& edges, bool* symmetrized) {
  check_size(n);
  for (std::size_t k = 0; k < edges.size(); ++k) {
    const Edge& e = edges[k];
    for (int t : {e.i, e.j})
      if (t < 0 || t >= n)
        throw Error(fmt::format("edge {} ({} - {}): task {} is out of range, expected 0..{}", k, e.i, e.j, t, n - 1));
    if (std::isnan(e.weight) || std::isinf(e.weight) || e.weight < 0)
      throw Error(fmt::format("edge {} ({} - {}): weight {} is not allowed, expected a finite non-negative number", k,
                              e.i, e.j, e.weight));
  }
  // C, directed; self-edges and zero weights carry no traffic between tasks.
  Csr c = assemble(n, [&](auto&& emit) {
    for (const Edge& e : edges)
      if (e.i != e.j && e.weight > 0) emit(e.i, e.j, e.weight);
  });

  bool symmetric = true, two_way = false;
  for (int i = 0; i < n && !(two_way && !symmetric); ++i)
    for (std::int64_t k = c.ptr[i]; k < c.ptr[i + 1]; ++k) {
      std::int64_t t = find(c, c.col[k], i);
      if (t < 0) {
        symmetric = false;
      } else {
        two_way = true;
        if (c.val[t] != c.val[k]) symmetric = false;
      }
    }
  if (symmetrized) *symmetrized = !symmetric && two_way;

  CommMatrix m;
  m.n_ = n;
  if (symmetric) {
    m.row_ptr_ = std::move(c.ptr);
    m.col_ = std::move(c.col);
    m.val_ = std::move(c.val);
    return m;
  }
  Csr w = assemble(n, [&](auto&& emit) {
    for (int i = 0; i < n; ++i)
      for (std::int64_t k = c.ptr[i]; k < c.ptr[i + 1]; ++k) {
        emit(i, c.col[k], c.val[k]);
        emit(c.col[k], i, c.val[k]);
      }
  });
  m.row_ptr_ = std::move(w.ptr);
  m.col_ = std::move(w.col);
  m.val_ = std::move(w.val);
  return m;
}

CommMatrix CommMatrix::from_dense(const std::vector<std::vector<double>>& rows, bool* symmetrized) {
  const std::int64_t n = static_cast<std::int64_t>(rows.size());
  check_size(n);
  std::vector<Edge> edges;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto& r = rows[i];
    if (static_cast<std::int64_t>(r.size()) != n)
      throw Error(fmt::format("row {} has {} values, expected {} (a square {} x {} matrix)", i, r.size(), n, n, n));
    for (std::int64_t j = 0; j < n; ++j) {
      double w = r[j];
      if (std::isnan(w) || std::isinf(w) || w < 0)
        throw Error(fmt::format("entry [{}][{}] = {} is not allowed, expected a finite non-negative number", i, j, w));
      if (w > 0 && i != j) edges.push_back({static_cast<int>(i), static_cast<int>(j), w});
    }
  }
  return from_edges(static_cast<int>(n), edges, symmetrized);
}

double CommMatrix::at(int i, int j) const {
  if (i < 0 || i >= n_ || j < 0 || j >= n_)
    throw Error(fmt::format("CommMatrix::at({}, {}): task out of range, expected 0..{}", i, j, n_ - 1));
  auto b = col_.begin() + row_ptr_[i], e = col_.begin() + row_ptr_[i + 1];
  auto it = std::lower_bound(b, e, j);
  return (it != e && *it == j) ? val_[it - col_.begin()] : 0.0;
}

double CommMatrix::row_sum(int i) const {
  if (i < 0 || i >= n_) throw Error(fmt::format("CommMatrix::row_sum({}): task out of range, expected 0..{}", i, n_ - 1));
  double s = 0;
  for (std::int64_t k = row_ptr_[i]; k < row_ptr_[i + 1]; ++k) s += val_[k];
  return s;
}

double CommMatrix::total() const {
  double s = 0;
  for (int i = 0; i < n_; ++i)
    for (std::int64_t k = row_ptr_[i]; k < row_ptr_[i + 1]; ++k)
      if (col_[k] > i) s += val_[k];
  return s;
}

std::vector<std::vector<double>> CommMatrix::dense() const {
  std::vector<std::vector<double>> d(n_, std::vector<double>(n_, 0.0));
  for (int i = 0; i < n_; ++i)
    for (std::int64_t k = row_ptr_[i]; k < row_ptr_[i + 1]; ++k) d[i][col_[k]] = val_[k];
  return d;
}

std::vector<Edge> CommMatrix::edges() const {
  std::vector<Edge> out;
  out.reserve(static_cast<std::size_t>(num_edges()));
  for (int i = 0; i < n_; ++i)
    for (std::int64_t k = row_ptr_[i]; k < row_ptr_[i + 1]; ++k)
      if (col_[k] > i) out.push_back({i, col_[k], val_[k]});
  return out;
}

}  // namespace canopy
