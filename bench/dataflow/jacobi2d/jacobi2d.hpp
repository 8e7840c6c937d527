// The 2D Jacobi (5-point) of bench/dataflow: an n x n grid of doubles and
// its copy, `sweeps` sweeps from one into the other; the kernel is compiled
// once (kernel.cpp) and linked into every variant. Sizes: 4096 x 4096
// (128 MiB per grid, beyond the L3, so the sweep runs at memory speed and is
// compared with STREAM's triad), 20 sweeps (an even count: the result is back in the first grid), 32 row blocks; --smoke: 64, 4,
// 4 and the result is checked against a sequential run.
// Bytes per sweep, counted as STREAM counts: 16 per point (read the old
// grid, write the new one).
#pragma once
#include <cstdint>
#include <memory>

#include "common.hpp"

namespace bench::jac {

struct Config {
  long n, sweeps, blocks;
};

Config config(const df::Args& a, const char* prog);

inline double bytes(const Config& c) { return 16.0 * static_cast<double>(c.n) * static_cast<double>(c.n) * c.sweeps; }

struct Grid {
  long n;
  std::unique_ptr<double[]> a, b;
  explicit Grid(long size);
  // Rows [lo, hi) of out from in; the first and last rows are fixed.
  static void rows(const double* in, double* out, long n, long lo, long hi);
};

// First row of block k of `blocks` (interior rows 1 .. n-2 shared out).
inline long block_begin(const Config& c, long k) { return 1 + (c.n - 2) * k / c.blocks; }

// c.sweeps sweeps without a runtime (the result is in g.a: sweeps is even).
void sequential(Grid& g, const Config& c);

// Exits 1 unless x.a and y.a are equal.
void compare(const char* prog, const Grid& x, const Grid& y);

// Measures run(g, c) (c.sweeps sweeps, the result in g.a) and, with
// --smoke, checks one more run against the sequential sweeps from the same
// state (the kernel is the same, so the results must be equal bit for bit).
template <class Run>
void bench_run(const df::Args& a, const char* prog, const char* impl, Run&& run) {
  const Config c = config(a, prog);
  Grid g(c.n);
  bench::measure(a, "jacobi2d", impl, bytes(c), "byte", [&] { run(g, c); });
  if (!a.smoke) return;
  Grid ref(c.n);
  for (long k = 0; k < c.n * c.n; ++k) ref.a[k] = ref.b[k] = g.a[k];
  run(g, c);
  sequential(ref, c);
  compare(prog, g, ref);
}

}  // namespace bench::jac
