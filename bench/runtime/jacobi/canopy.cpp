// 2D Jacobi with canopy::parallel_for: with the affinity partitioner (each
// chunk of rows goes back to the worker that swept it last, so its rows are
// still in that core's cache) and with the adaptive split (no memory of the
// last sweep), 100 sweeps per repetition.
#include <canopy/runtime.hpp>

#include <utility>

#include "driver.hpp"
#include "jacobi/jacobi.hpp"

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const long n = a.n ? a.n : 512;
  const int sweeps = 100;
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);
  bench::Grid g(n);
  canopy::AffinityPartitioner ap;
  bench::measure(a, "jacobi", "canopy-affinity", sweeps, "sweep", [&] {
    rt.run([&] {
      for (int s = 0; s < sweeps; ++s) {
        const double* in = g.a.data();
        double* out = g.b.data();
        canopy::parallel_for(canopy::Range{1, n - 1, 0},
                             [=](std::int64_t lo, std::int64_t hi) { bench::jacobi_rows(in, out, n, lo, hi); }, ap);
        std::swap(g.a, g.b);
      }
    });
  });
  bench::measure(a, "jacobi", "canopy-adaptive", sweeps, "sweep", [&] {
    rt.run([&] {
      for (int s = 0; s < sweeps; ++s) {
        const double* in = g.a.data();
        double* out = g.b.data();
        canopy::parallel_for(canopy::Range{1, n - 1, 0},
                             [=](std::int64_t lo, std::int64_t hi) { bench::jacobi_rows(in, out, n, lo, hi); });
        std::swap(g.a, g.b);
      }
    });
  });
  bench::keep(g.a[n + 1]);
}
