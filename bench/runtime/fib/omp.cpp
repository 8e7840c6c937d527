// fib with OpenMP tasks (built twice: GCC + libgomp, clang + LLVM libomp).
#include <omp.h>

#include "driver.hpp"
#include "fib/fib.hpp"

#ifndef IMPL
#define IMPL "omp"
#endif

long fib(int n) {
  if (n < 2) return n;
  long a, b;
#pragma omp task shared(a) firstprivate(n)
  a = fib(n - 1);
  b = fib(n - 2);
#pragma omp taskwait
  return a + b;
}

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const int n = a.n ? static_cast<int>(a.n) : 35;
  omp_set_num_threads(a.threads);
  long v = 0;
  bench::measure(a, "fib", IMPL, static_cast<double>(bench::fib_tasks(n)), "task", [&] {
#pragma omp parallel
#pragma omp single
    v = fib(n);
  });
  bench::keep(v);
}
