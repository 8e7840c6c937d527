// The Jacobi kernel, grid and check shared by every variant (jacobi2d.hpp).
#include "jacobi2d/jacobi2d.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace bench::jac {

Config config(const df::Args& a, const char* prog) {
  Config c;
  c.n = a.n ? a.n : (a.smoke ? 64 : 4096);
  c.sweeps = a.smoke ? 4 : 20;
  c.blocks = a.blocks ? a.blocks : (a.smoke ? 4 : 32);
  if (c.n < 3 || c.blocks > c.n - 2) {
    std::fprintf(stderr, "%s: %ld row blocks do not fit the %ld interior rows of a %ld x %ld grid\n", prog,
                 c.blocks, c.n - 2, c.n, c.n);
    std::exit(2);
  }
  return c;
}

Grid::Grid(long size) : n(size), a(new double[size * size]), b(new double[size * size]) {
  for (long k = 0; k < n * n; ++k) a[k] = b[k] = 0.0;
  for (long j = 0; j < n; ++j) a[j] = b[j] = 1.0;  // a hot top edge
}

void Grid::rows(const double* in, double* out, long n, long lo, long hi) {
  for (long i = lo; i < hi; ++i) {
    const double* up = in + (i - 1) * n;
    const double* row = in + i * n;
    const double* down = in + (i + 1) * n;
    double* o = out + i * n;
    for (long j = 1; j < n - 1; ++j) o[j] = 0.25 * (up[j] + down[j] + row[j - 1] + row[j + 1]);
  }
}

void sequential(Grid& g, const Config& c) {
  for (long s = 0; s < c.sweeps; ++s) {
    const bool even = s % 2 == 0;
    Grid::rows(even ? g.a.get() : g.b.get(), even ? g.b.get() : g.a.get(), c.n, 1, c.n - 1);
  }
}

void compare(const char* prog, const Grid& x, const Grid& y) {
  for (long k = 0; k < x.n * x.n; ++k)
    if (x.a[k] != y.a[k])
      df::fail(prog, "Jacobi point (" + std::to_string(k / x.n) + ", " + std::to_string(k % x.n) + ") is " +
                         std::to_string(x.a[k]) + ", expected " + std::to_string(y.a[k]) +
                         " (a block read a neighbour of the wrong sweep)");
}

}  // namespace bench::jac
