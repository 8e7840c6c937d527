// A 2D Jacobi sweep (5-point stencil) on an n x n grid of doubles, rows
// [lo, hi) of `out` from `in`: what every competitor's loop body calls.
// The kernel is compiled once, in kernel.cpp, and linked into every
// variant (the libomp one is built by clang, whose code for the stencil
// alone differs by ~10%): the table compares runtimes, not compilers.
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

void jacobi_rows(const double* in, double* out, long n, std::int64_t lo, std::int64_t hi);

}  // namespace bench
