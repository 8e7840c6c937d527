// STREAM's triad, a[i] = b[i] + s * c[i], with an OpenMP `for` (static
// schedule; the arrays are first touched by the same schedule), the
// bandwidth Jacobi is compared with in the same run. Arrays of 2^24 doubles
// (128 MiB each, 4x the 32 MiB L3 of the build machine: STREAM's rule);
// bytes counted as STREAM does: 24 per element (two reads and one write, no
// write-allocate traffic). One repetition is 10 triads.
#include <omp.h>

#include <cstdint>
#include <memory>
#include <string>

#include "common.hpp"

#ifndef IMPL
#define IMPL "omp"
#endif

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  const long n = a.n ? a.n : (a.smoke ? (1L << 16) : (1L << 24));
  const int passes = 10;
  omp_set_num_threads(a.threads);
  std::unique_ptr<double[]> pa(new double[n]), pb(new double[n]), pc(new double[n]);
  double* x = pa.get();
  double* y = pb.get();
  double* z = pc.get();
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    x[i] = 0.0;
    y[i] = 1.0;
    z[i] = 2.0;
  }
  const double s = 3.0;
  bench::measure(a, "triad", IMPL, 24.0 * static_cast<double>(n) * passes, "byte", [&] {
    for (int p = 0; p < passes; ++p) {
#pragma omp parallel for schedule(static)
      for (long i = 0; i < n; ++i) x[i] = y[i] + s * z[i];
    }
  });
  if (x[n / 2] != 7.0) bench::df::fail(argv[0], "triad result " + std::to_string(x[n / 2]) + ", expected 7");
}
