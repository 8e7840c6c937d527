/* Automatic affinity of OpenMP tasks with depend clauses (CANOPY_AFFINITY=auto)
   on a pretend machine of 4 NUMA nodes (CANOPY_OMP_TEST_NUMA=4: thread t on
   node t mod 4), 8 threads. A 1-D three-point stencil over NB blocks, two
   buffers, one task per block and sweep (depend in: the three blocks it
   reads, out: the block it writes), created by one thread; the pattern
   recurs every two sweeps (the buffers swap).
   auto: from the mapping on (the 4th two-sweep iteration: two equal
   iterations after the one that found the period), every task is aimed at
   a thread, the same one in every iteration, at most ceil(64 / 8) tasks per
   thread; more ran there than chance would put there (loose: idle threads
   take others' tasks); and the blocks a task shares with its neighbours
   mostly stay on one node. A
   one-off task in the middle (noise) changes nothing; a second stencil on
   other buffers (a new pattern) is mapped anew once (the ctest checks the
   CANOPY_DISPLAY_AFFINITY lines: mapping 2, never 3).
   none (or unset): no task is aimed anywhere. Both: the results are the
   serial stencil's. */
#include <omp.h>
#include <stdint.h>
#include <string.h>

#include "canopy_omp.h"
#include "omp_check.h"

enum { NODES = 4, THREADS = 8, BS = 64, STEPS = 32 };

static void work(double us) {
  const double end = omp_get_wtime() + us * 1e-6;
  while (omp_get_wtime() < end) {
  }
}

/* One stencil run of `steps` sweeps over nb blocks (halo blocks 0 and nb + 1
   are constant); hint[s][b] and ran[s][b] record each task. `noise_at`: a
   one-off task created before that sweep's tasks (-1: none). */
static int noise_cell;
static void stencil(int nb, double (*a)[BS], double (*b)[BS], int steps, int* hint, int* ran, int noise_at) {
  for (int s = 0; s < steps; ++s) {
    double(*src)[BS] = s % 2 ? b : a;
    double(*dst)[BS] = s % 2 ? a : b;
    if (s == noise_at) {
#pragma omp task depend(inout : noise_cell)
      noise_cell++;
    }
    for (int k = 1; k <= nb; ++k) {
#pragma omp task depend(in : src[k - 1], src[k], src[k + 1]) depend(out : dst[k]) firstprivate(s, k)
      {
        for (int i = 0; i < BS; ++i) dst[k][i] = (src[k - 1][i] + src[k][i] + src[k + 1][i]) / 3.0;
        hint[s * nb + k - 1] = canopy_omp_task_thread_target();
        ran[s * nb + k - 1] = omp_get_thread_num();
        work(20);
      }
    }
  }
}

static void serial(int nb, double (*a)[BS], double (*b)[BS], int steps) {
  for (int s = 0; s < steps; ++s) {
    double(*src)[BS] = s % 2 ? b : a;
    double(*dst)[BS] = s % 2 ? a : b;
    for (int k = 1; k <= nb; ++k)
      for (int i = 0; i < BS; ++i) dst[k][i] = (src[k - 1][i] + src[k][i] + src[k + 1][i]) / 3.0;
  }
}

static void init(int nb, double (*a)[BS], double (*b)[BS]) {
  for (int k = 0; k < nb + 2; ++k)
    for (int i = 0; i < BS; ++i) a[k][i] = b[k][i] = (k * 7 + i) % 13;
}

/* The checks of one run's records under auto, from sweep `mapped` on (the
   first mapped one); adds the mapped tasks and those that ran on their
   thread to *total and *on_thread. */
static void check_auto(int nb, const int* hint, const int* ran, int mapped, const char* what, int* total_all,
                       int* on_thread_all) {
  int on_thread = 0, total = 0, same_node = 0, pairs = 0;
  for (int s = mapped; s < STEPS; ++s) {
    for (int k = 0; k < nb; ++k) {
      const int h = hint[s * nb + k];
      CHECK(h >= 0 && h < THREADS);
      if (s >= mapped + 2) CHECK(h == hint[(s - 2) * nb + k]); /* the same thread every iteration */
      on_thread += ran[s * nb + k] == h;
      ++total;
      /* Matrix neighbours: the next block of the sweep, the same block of the next sweep. */
      if (k + 1 < nb) {
        same_node += h % NODES == hint[s * nb + k + 1] % NODES;
        ++pairs;
      }
      if (s + 1 < STEPS) {
        same_node += h % NODES == hint[(s + 1) * nb + k] % NODES;
        ++pairs;
      }
    }
  }
  int per_thread[THREADS] = {0};
  for (int s = mapped; s < mapped + 2; ++s)
    for (int k = 0; k < nb; ++k) per_thread[hint[s * nb + k]]++;
  for (int t = 0; t < THREADS; ++t) CHECK(per_thread[t] <= (2 * nb + THREADS - 1) / THREADS);
  printf("%s: %d of %d mapped tasks ran on their thread, %d of %d neighbour pairs on one node\n", what, on_thread,
         total, same_node, pairs);
  CHECK(same_node * 4 >= pairs * 3); /* chance: 1 in 4 */
  *total_all += total;
  *on_thread_all += on_thread;
}

/* Every thread creates its own chains of depend tasks and waits for them
   in a taskwait: a thread waiting there runs only its own descendants, so a
   task aimed at another waiting thread must still come back to its creator
   (waiters sleeping with tasks in affinity queues wake to look again). */
static int creators(void) {
  enum { BLOCKS = 64, ITERS = 40 };
  static double blk[BLOCKS][16];
#pragma omp parallel
  {
    const int me = omp_get_thread_num(), n = omp_get_num_threads();
    for (int it = 0; it < ITERS; ++it)
      for (int k = me; k < BLOCKS; k += n) {
#pragma omp task depend(inout : blk[k]) firstprivate(k)
        for (int i = 0; i < 16; ++i) blk[k][i] += 1;
      }
#pragma omp taskwait
  }
  for (int k = 0; k < BLOCKS; ++k) CHECK(blk[k][5] == ITERS);
  printf("depend affinity (creators): passed\n");
  return 0;
}

int main(int argc, char** argv) {
  CHECK_CANOPY();
  CHECK(omp_get_max_threads() == THREADS);
  if (argc > 1 && strcmp(argv[1], "creators") == 0) return creators();
  const char* mode = getenv("CANOPY_AFFINITY");
  const int automatic = mode && strcmp(mode, "auto") == 0;
  enum { NB1 = 32, NB2 = 24 };
  static double a[NB1 + 2][BS], b[NB1 + 2][BS], c[NB2 + 2][BS], d[NB2 + 2][BS];
  static double ra[NB1 + 2][BS], rb[NB1 + 2][BS], rc[NB2 + 2][BS], rd[NB2 + 2][BS];
  static int hint1[STEPS * NB1], ran1[STEPS * NB1], hint2[STEPS * NB2], ran2[STEPS * NB2];
  init(NB1, a, b);
  init(NB1, ra, rb);
  init(NB2, c, d);
  init(NB2, rc, rd);
#pragma omp parallel
#pragma omp single
  {
    stencil(NB1, a, b, STEPS, hint1, ran1, 13);
#pragma omp taskwait
    stencil(NB2, c, d, STEPS, hint2, ran2, -1);
  }
  serial(NB1, ra, rb, STEPS);
  serial(NB2, rc, rd, STEPS);
  CHECK(memcmp(a, ra, sizeof a) == 0 && memcmp(b, rb, sizeof b) == 0);
  CHECK(memcmp(c, rc, sizeof c) == 0 && memcmp(d, rd, sizeof d) == 0);
  CHECK(noise_cell == 1);
  if (automatic) {
    /* Sweeps 0-1: first seen; 2-3: the period found; 4-5 confirm it: mapped from 6 on. */
    int total = 0, on_thread = 0;
    check_auto(NB1, hint1, ran1, 6, "first stencil", &total, &on_thread);
    /* The old period is given up after 1.5 of its length (sweep 4), then
       4-5 find the new one, 6-7 and 8 confirm it: mapped from sweep 9 on. */
    check_auto(NB2, hint2, ran2, 9, "second stencil (a new pattern)", &total, &on_thread);
    /* Chance: 1 in 8. Loose lets idle threads take tasks, and 8 threads on
       this 2-core machine are often descheduled: 26-47% per stencil here
       under a load of 10 (26-29% in the TSan build), about half when quiet. */
    CHECK(on_thread * 6 >= total);
  } else {
    for (int k = 0; k < STEPS * NB1; ++k) CHECK(hint1[k] == -1);
    for (int k = 0; k < STEPS * NB2; ++k) CHECK(hint2[k] == -1);
  }
  printf("depend affinity (%s): passed\n", automatic ? "auto" : "none");
  return 0;
}
