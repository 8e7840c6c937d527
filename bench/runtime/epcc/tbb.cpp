// EPCC-style overheads of oneTBB (µs per construct beyond the delay): a
// parallel_for over one index per thread, and a fork-join of one task per
// thread (task_group run + wait), each index or task one delay.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include "driver.hpp"

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const long reps = a.n ? a.n : 200000;  // long enough (~50 ms) to dwarf timer and warm-up noise
  const bench::Delay d = bench::calibrate_delay(1e-7);
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, a.threads);
  tbb::task_arena arena(a.threads);
  const int p = a.threads;
  const long it = d.iterations;
  bench::measure_overhead(a, "epcc-parallel-for", "tbb", reps, d, [&] {
    arena.execute([&] {
      for (long r = 0; r < reps; ++r)
        tbb::parallel_for(tbb::blocked_range<int>(0, p, 1), [it](const tbb::blocked_range<int>&) { bench::spin(it); });
    });
  });
  bench::measure_overhead(a, "epcc-fork-join", "tbb", reps, d, [&] {
    arena.execute([&] {
      for (long r = 0; r < reps; ++r) {
        tbb::task_group g;
        for (int k = 1; k < p; ++k) g.run([it] { bench::spin(it); });
        bench::spin(it);
        g.wait();
      }
    });
  });
}
