// The wavefront with OpenMP tasks and `depend` clauses: one thread creates
// every task (single), in row-major order; the runtime finds the
// dependencies at run time from the addresses of the tiles (in: north and
// west, out: the tile). Built twice: by this compiler (libgomp) and by
// clang -fopenmp=libomp (LLVM's libomp).
#include <omp.h>

#include "wavefront/wavefront.hpp"

#ifndef IMPL
#define IMPL "omp"
#endif

int main(int argc, char** argv) {
  const bench::df::Args a = bench::df::parse_args(argc, argv);
  const long n = bench::wf::grid_size(a);
  omp_set_num_threads(a.threads);
  std::vector<std::uint64_t> v(static_cast<std::size_t>(n * n));
  bench::wf::run_modes(a, argv[0], IMPL, v, n, [&](long spin, std::uint64_t stamp) {
    std::uint64_t* p = v.data();
#pragma omp parallel
#pragma omp single
    {
      for (long i = 0; i < n; ++i) {
        for (long j = 0; j < n; ++j) {
          std::uint64_t* c = p + i * n + j;
          // Used only when it exists, and only in depend clauses (GCC calls them unused).
          [[maybe_unused]] std::uint64_t* north = i ? c - n : c;
          [[maybe_unused]] std::uint64_t* west = j ? c - 1 : c;
          if (i && j) {
#pragma omp task firstprivate(i, j) depend(in : north[0], west[0]) depend(out : c[0])
            bench::wf::tile(p, n, i, j, stamp, spin);
          } else if (i) {
#pragma omp task firstprivate(i, j) depend(in : north[0]) depend(out : c[0])
            bench::wf::tile(p, n, i, j, stamp, spin);
          } else if (j) {
#pragma omp task firstprivate(i, j) depend(in : west[0]) depend(out : c[0])
            bench::wf::tile(p, n, i, j, stamp, spin);
          } else {
#pragma omp task firstprivate(i, j) depend(out : c[0])
            bench::wf::tile(p, n, i, j, stamp, spin);
          }
        }
      }
    }  // the end of the parallel region waits for every task
  });
}
