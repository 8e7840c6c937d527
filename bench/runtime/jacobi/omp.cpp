// 2D Jacobi with an OpenMP `for` (static schedule: each thread gets the same
// rows every sweep), inside one parallel region per repetition.
#include <omp.h>

#include <utility>

#include "driver.hpp"
#include "jacobi/jacobi.hpp"

#ifndef IMPL
#define IMPL "omp"
#endif

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const long n = a.n ? a.n : 512;
  const int sweeps = 100;
  omp_set_num_threads(a.threads);
  bench::Grid g(n);
  bench::measure(a, "jacobi", IMPL, sweeps, "sweep", [&] {
    double* pa = g.a.data();
    double* pb = g.b.data();
#pragma omp parallel firstprivate(pa, pb)
    for (int s = 0; s < sweeps; ++s) {
#pragma omp for schedule(static)
      for (long i = 1; i < n - 1; ++i) bench::jacobi_rows(pa, pb, n, i, i + 1);
      std::swap(pa, pb);
    }
    if (sweeps % 2) std::swap(g.a, g.b);
  });
  bench::keep(g.a[n + 1]);
}
