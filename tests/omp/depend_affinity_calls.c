/* Automatic affinity of OpenMP tasks in calls (canopy_omp.h):
   canopy_omp_affinity_save and canopy_omp_affinity_load, with a placement
   computed from the saved matrix by canopy's C API. A 1-D stencil of
   depend tasks (32 blocks, two buffers: 64 recurring tasks) on a pretend
   machine of 4 NUMA nodes (CANOPY_OMP_TEST_NUMA=4, 8 threads: thread t on
   PU (t mod 4) * 2 + t / 4 of 'numa:4 core:2 pu:1'), CANOPY_AFFINITY=auto.
   Before the runtime maps, save and load return 0. After: save writes the
   matrix (64 tasks) and placement; a treematch placement of that matrix,
   written as one OS CPU per task and loaded, puts as many of the next
   iteration's tasks on each thread as the file gives the thread's CPU; a
   file that puts every task on node 0's two CPUs aims every later task at
   threads 0 and 4; a CPU the machine lacks, a file of another task count,
   a file that does not exist and a directory that cannot be made are -1.
   The results are the serial stencil's. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canopy_omp.h"
#include "omp_check.h"

enum { NB = 32, BS = 64, THREADS = 8, TASKS = 2 * NB };

static double a[NB + 2][BS], b[NB + 2][BS], ra[NB + 2][BS], rb[NB + 2][BS];
static int hint[2 * NB];

/* Sweeps [from, to): the tasks of the last two record the thread they were aimed at. */
static void sweeps(int from, int to) {
  for (int s = from; s < to; ++s) {
    double(*src)[BS] = s % 2 ? b : a;
    double(*dst)[BS] = s % 2 ? a : b;
    const int slot = s >= to - 2 ? (s % 2) * NB : -1;
    for (int k = 1; k <= NB; ++k) {
#pragma omp task depend(in : src[k - 1], src[k], src[k + 1]) depend(out : dst[k]) firstprivate(k, slot)
      {
        for (int i = 0; i < BS; ++i) dst[k][i] = (src[k - 1][i] + src[k][i] + src[k + 1][i]) / 3.0;
        if (slot >= 0) hint[slot + k - 1] = canopy_omp_task_thread_target();
      }
    }
  }
#pragma omp taskwait
}

/* The thread on PU `pu` of the pretend machine. */
static int thread_of_pu(int pu) { return (pu / 2) + 4 * (pu % 2); }

static void write_cpus(const char* path, const int* cpu, int n) {
  FILE* f = fopen(path, "w");
  CHECK(f != NULL);
  fprintf(f, "# test placement\n");
  for (int t = 0; t < n; ++t) fprintf(f, "%d  # task %d\n", cpu[t], t);
  fclose(f);
}

/* Tasks of the recorded iteration aimed at each thread equal `want`. */
static void check_counts(const int* want, const char* what) {
  int got[THREADS] = {0};
  for (int t = 0; t < TASKS; ++t) {
    CHECK(hint[t] >= 0 && hint[t] < THREADS);
    got[hint[t]]++;
  }
  for (int t = 0; t < THREADS; ++t) {
    if (got[t] != want[t]) printf("%s: thread %d has %d tasks, the file %d\n", what, t, got[t], want[t]);
    CHECK(got[t] == want[t]);
  }
}

int main(int argc, char** argv) {
  CHECK_CANOPY();
  CHECK(omp_get_max_threads() == THREADS);
  const char* dir = argc > 1 ? argv[1] : "depend_affinity_calls";
  char edges[512], placed[512], file[512], bad[512];
  snprintf(edges, sizeof edges, "%s/st.edges", dir);
  snprintf(placed, sizeof placed, "%s/st.placement", dir);
  snprintf(file, sizeof file, "%s/p.txt", dir);
  for (int k = 0; k < NB + 2; ++k)
    for (int i = 0; i < BS; ++i) a[k][i] = b[k][i] = ra[k][i] = rb[k][i] = (k * 7 + i) % 13;
  int sweep = 0;
#pragma omp parallel
#pragma omp single
  {
    CHECK(canopy_omp_affinity_save(dir, "st") == 0); /* nothing mapped yet */
    CHECK(canopy_omp_affinity_load(placed) == 0);
    sweeps(sweep, sweep + 16); /* mapped at the 4th two-sweep iteration */
    sweep += 16;
    CHECK(canopy_omp_affinity_save(dir, "st") == 1);

    /* Compute a placement from the saved matrix with canopy's C API. */
    canopy_matrix_t* m = NULL;
    canopy_topology_t* topo = NULL;
    canopy_placement_t* p = NULL;
    CHECK(canopy_matrix_create_from_file(&m, edges, CANOPY_MATRIX_FORMAT_AUTO, NULL) == CANOPY_OK);
    int n = 0;
    CHECK(canopy_matrix_size(m, &n) == CANOPY_OK && n == TASKS);
    CHECK(canopy_topology_create_from_synthetic(&topo, "numa:4 core:2 pu:1") == CANOPY_OK);
    CHECK(canopy_placement_create(&p, topo, m, "treematch", NULL) == CANOPY_OK);
    int cpu[TASKS], want[THREADS] = {0};
    for (int t = 0; t < TASKS; ++t) {
      CHECK(canopy_placement_task_pu_os(p, t, &cpu[t]) == CANOPY_OK);
      want[thread_of_pu(cpu[t])]++;
    }
    canopy_placement_destroy(p);
    canopy_topology_destroy(topo);
    canopy_matrix_destroy(m);
    write_cpus(file, cpu, TASKS);
    CHECK(canopy_omp_affinity_load(file) == 1);
    sweeps(sweep, sweep + 2);
    sweep += 2;
    check_counts(want, "treematch");

    /* Every task on node 0's CPUs 0 and 1: threads 0 and 4. */
    int node0[TASKS], want0[THREADS] = {0};
    for (int t = 0; t < TASKS; ++t) node0[t] = t % 2;
    want0[0] = want0[4] = TASKS / 2;
    write_cpus(file, node0, TASKS);
    CHECK(canopy_omp_affinity_load(file) == 1);
    sweeps(sweep, sweep + 2);
    sweep += 2;
    check_counts(want0, "node 0");
    /* The saved placement says so too. */
    CHECK(canopy_omp_affinity_save(dir, "after") == 1);

    /* Errors: a CPU the machine lacks, another task count, no file, no directory. */
    node0[5] = 99;
    write_cpus(file, node0, TASKS);
    CHECK(canopy_omp_affinity_load(file) == -1);
    write_cpus(file, node0, TASKS - 1);
    CHECK(canopy_omp_affinity_load(file) == -1);
    snprintf(bad, sizeof bad, "%s/missing.txt", dir);
    CHECK(canopy_omp_affinity_load(bad) == -1);
    snprintf(bad, sizeof bad, "%s/p.txt/sub", dir);
    CHECK(canopy_omp_affinity_save(bad, "x") == -1);
    /* Still the node-0 placement. */
    sweeps(sweep, sweep + 2);
    sweep += 2;
    check_counts(want0, "node 0 after the errors");
  }
  for (int s = 0; s < sweep; ++s) {
    double(*src)[BS] = s % 2 ? rb : ra;
    double(*dst)[BS] = s % 2 ? ra : rb;
    for (int k = 1; k <= NB; ++k)
      for (int i = 0; i < BS; ++i) dst[k][i] = (src[k - 1][i] + src[k][i] + src[k + 1][i]) / 3.0;
  }
  CHECK(memcmp(a, ra, sizeof a) == 0 && memcmp(b, rb, sizeof b) == 0);
  printf("depend affinity calls: passed\n");
  return 0;
}
