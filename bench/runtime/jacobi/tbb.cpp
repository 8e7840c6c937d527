// 2D Jacobi with oneTBB's parallel_for and its affinity_partitioner.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/partitioner.h>
#include <oneapi/tbb/task_arena.h>

#include <utility>

#include "driver.hpp"
#include "jacobi/jacobi.hpp"

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const long n = a.n ? a.n : 512;
  const int sweeps = 100;
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, a.threads);
  tbb::task_arena arena(a.threads);
  bench::Grid g(n);
  tbb::affinity_partitioner ap;
  bench::measure(a, "jacobi", "tbb-affinity", sweeps, "sweep", [&] {
    arena.execute([&] {
      for (int s = 0; s < sweeps; ++s) {
        const double* in = g.a.data();
        double* out = g.b.data();
        tbb::parallel_for(
            tbb::blocked_range<long>(1, n - 1),
            [=](const tbb::blocked_range<long>& r) { bench::jacobi_rows(in, out, n, r.begin(), r.end()); }, ap);
        std::swap(g.a, g.b);
      }
    });
  });
  bench::keep(g.a[n + 1]);
}
