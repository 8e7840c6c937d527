// Spawn cost: 10^6 empty OpenMP tasks from one thread, then one taskwait.
// (libgomp stops queueing past 64 tasks per thread and runs new ones at
// once: its number is not a queueing cost.)
#include <omp.h>

#include "driver.hpp"

#ifndef IMPL
#define IMPL "omp"
#endif

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const long n = a.n ? a.n : 1000000;
  omp_set_num_threads(a.threads);
  bench::measure(a, "spawn", IMPL, static_cast<double>(n), "task", [&] {
#pragma omp parallel
#pragma omp single
    {
      const long count = n;  // a local: the loop does not reload it
      for (long i = 0; i < count; ++i) {
#pragma omp task
        {
          asm volatile("");
        }
      }
#pragma omp taskwait
    }
  });
}
