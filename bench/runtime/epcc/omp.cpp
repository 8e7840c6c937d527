// EPCC-style overheads of OpenMP constructs (µs per construct beyond the
// delay each thread does in it), as the EPCC micro-benchmarks measure them:
// PARALLEL (a region), PARALLEL FOR, FOR inside one region, BARRIER inside
// one region. Built with GCC + libgomp and with clang + LLVM libomp.
#include <omp.h>

#include "driver.hpp"

#ifndef IMPL
#define IMPL "omp"
#endif

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const long reps = a.n ? a.n : 200000;  // long enough (~50 ms) to dwarf timer and warm-up noise
  const bench::Delay d = bench::calibrate_delay(1e-7);
  omp_set_num_threads(a.threads);
  const int p = a.threads;
  const long it = d.iterations;
  bench::measure_overhead(a, "epcc-parallel", IMPL, reps, d, [&] {
    for (long r = 0; r < reps; ++r) {
#pragma omp parallel
      bench::spin(it);
    }
  });
  bench::measure_overhead(a, "epcc-parallel-for", IMPL, reps, d, [&] {
    for (long r = 0; r < reps; ++r) {
#pragma omp parallel for schedule(static)
      for (int i = 0; i < p; ++i) bench::spin(it);
    }
  });
  bench::measure_overhead(a, "epcc-for", IMPL, reps, d, [&] {
#pragma omp parallel
    for (long r = 0; r < reps; ++r) {
#pragma omp for schedule(static)
      for (int i = 0; i < p; ++i) bench::spin(it);
    }
  });
  bench::measure_overhead(a, "epcc-barrier", IMPL, reps, d, [&] {
#pragma omp parallel
    for (long r = 0; r < reps; ++r) {
      bench::spin(it);
#pragma omp barrier
    }
  });
}
