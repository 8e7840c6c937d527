/* One-thread construct overheads of a clang-compiled program (the libomp
   ABI), for callgrind: `kmp_overhead N 0` runs N empty parallel regions,
   `kmp_overhead N 1` N barriers in one region, `kmp_overhead N 2` N tasks
   (one `omp task` each, __kmpc_omp_task_alloc + __kmpc_omp_task) in one region, `kmp_overhead N 3` N
   static worksharing loops (nowait, 4 iterations), `4` N dynamic ones, `5` N singles (nowait).
   callgrind_kmp.sh runs it twice per runtime (N and 2N) and divides the difference by N.
   Timed with more threads than cores (docs/bench-omp.md): `6` every thread N times a task and a
   taskwait, `7` one thread N tasks in chains of inout dependences while the others wait at the
   single's barrier; a third argument SPIN makes each task of 6 and 7 spin that many iterations. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

static void spin_for(long iterations) {
  for (long i = 0; i < iterations; ++i) __asm__ volatile("");
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? atoi(argv[1]) : 1000;
  const int what = argc > 2 ? atoi(argv[2]) : 0;
  const long spin = argc > 3 ? atol(argv[3]) : 0;
  if (n < 1 || what < 0 || what > 7 || spin < 0) {
    fprintf(stderr, "usage: %s N MODE [SPIN] (N >= 1 constructs; MODE 0-7, SPIN >= 0: see the source's first comment)\n",
            argv[0]);
    return 2;
  }
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
  } else if (what == 5) {
#pragma omp parallel
    for (int i = 0; i < n; ++i) {
#pragma omp single nowait
      sink++;
    }
  } else if (what == 6) {
    /* every thread: a task and a taskwait, N times */
#pragma omp parallel
    for (int i = 0; i < n; ++i) {
#pragma omp task
      {
        spin_for(spin);
#pragma omp atomic
        sink++;
      }
#pragma omp taskwait
    }
  } else {
    /* one thread creates N tasks in chains of inout dependences (one chain
       per thread, 64 at most), the others run them from the single's barrier */
    static long chains[64 * 8];
#pragma omp parallel
#pragma omp single
    {
      const int nchains = omp_get_num_threads() < 64 ? omp_get_num_threads() : 64;
      for (int i = 0; i < n; ++i) {
        long* obj = &chains[(i % nchains) * 8];
#pragma omp task depend(inout : obj[0]) firstprivate(obj)
        {
          spin_for(spin);
          obj[0]++;
        }
      }
    }
    long total = 0;
    for (int c = 0; c < 64; ++c) total += chains[c * 8];
    if (total != n) {
      fprintf(stderr, "kmp_overhead: %ld dependent tasks ran, expected %d\n", total, n);
      return 1;
    }
    sink = (int)total;
  }
  printf("%d\n", sink);
  return 0;
}
