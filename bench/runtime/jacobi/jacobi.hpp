// A 2D Jacobi sweep (5-point stencil) on an n x n grid of doubles, rows
// [lo, hi) of `out` from `in`: what every competitor's loop body calls.
#pragma once
#include <cstdint>
#include <vector>

namespace bench {

struct Grid {
  long n;
  std::vector<double> a, b;
  explicit Grid(long size) : n(size), a(size * size, 0.0), b(size * size, 0.0) {
    for (long j = 0; j < n; ++j) a[j] = b[j] = 1.0;  // a hot top edge
  }
};

inline void jacobi_rows(const double* in, double* out, long n, std::int64_t lo, std::int64_t hi) {
  for (std::int64_t i = lo; i < hi; ++i) {
    const double* up = in + (i - 1) * n;
    const double* row = in + i * n;
    const double* down = in + (i + 1) * n;
    double* o = out + i * n;
    for (long j = 1; j < n - 1; ++j) o[j] = 0.25 * (up[j] + down[j] + row[j - 1] + row[j + 1]);
  }
}

}  // namespace bench
