// EPCC-style overheads of canopy's constructs (µs per construct beyond the
// delay each thread does in it, EPCC's definition), measured inside one
// Runtime::run as OpenMP's are inside one parallel region:
//  - parallel_for over one index per worker (grain 1), each index one delay;
//  - fork-join of one task per worker (TaskGroup spawn + wait), each task
//    one delay: what a barrier costs in a task runtime.
#include <canopy/runtime.hpp>

#include "driver.hpp"

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const long reps = a.n ? a.n : 200000;  // long enough (~50 ms) to dwarf timer and warm-up noise
  const bench::Delay d = bench::calibrate_delay(1e-7);
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);
  const int p = rt.num_workers();
  const long it = d.iterations;
  bench::measure_overhead(a, "epcc-parallel-for", "canopy", reps, d, [&] {
    rt.run([&] {
      for (long r = 0; r < reps; ++r)
        canopy::parallel_for(canopy::Range{0, p, 1}, [it](std::int64_t, std::int64_t) { bench::spin(it); });
    });
  });
  bench::measure_overhead(a, "epcc-fork-join", "canopy", reps, d, [&] {
    rt.run([&] {
      for (long r = 0; r < reps; ++r) {
        canopy::TaskGroup g;
        for (int k = 1; k < p; ++k) g.spawn([it] { bench::spin(it); });
        bench::spin(it);
        g.wait();
      }
    });
  });
}
