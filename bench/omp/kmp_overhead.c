/* One-thread construct overheads of a clang-compiled program (the libomp
   ABI), for callgrind: `kmp_overhead N 0` runs N empty parallel regions,
   `kmp_overhead N 1` N barriers in one region, `kmp_overhead N 2` N tasks
   (one `omp task` each, __kmpc_omp_task_alloc + __kmpc_omp_task) in one region, `kmp_overhead N 3` N
   static worksharing loops (nowait, 4 iterations), `4` N dynamic ones, `5` N singles (nowait).
   callgrind_kmp.sh runs it twice per runtime (N and 2N) and divides the difference by N. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 1000;
  const int what = argc > 2 ? atoi(argv[2]) : 0;
  volatile int sink = 0;
  if (what == 0) {
    for (int i = 0; i < n; ++i) {
#pragma omp parallel
      sink++;
    }
  } else if (what == 1) {
#pragma omp parallel
    for (int i = 0; i < n; ++i) {
#pragma omp barrier
    }
  } else if (what == 2) {
#pragma omp parallel
    for (int i = 0; i < n; ++i) {
#pragma omp task
      sink++;
    }
  } else if (what == 3) {
#pragma omp parallel
    for (int i = 0; i < n; ++i) {
#pragma omp for nowait
      for (int j = 0; j < 4; ++j) sink++;
    }
  } else if (what == 4) {
#pragma omp parallel
    for (int i = 0; i < n; ++i) {
#pragma omp for schedule(dynamic) nowait
      for (int j = 0; j < 4; ++j) sink++;
    }
  } else {
#pragma omp parallel
    for (int i = 0; i < n; ++i) {
#pragma omp single nowait
      sink++;
    }
  }
  printf("%d\n", sink);
  return 0;
}
