/* canopy_omp.h: BindMe's one call -- bind the threads of the calling OpenMP
 * team with a policy and a granularity.
 *
 *   #pragma omp parallel
 *   {
 *     canopy_status_t s = canopy_omp_bind_team("treematch", CANOPY_MAP_GRANULARITY_CORE, matrix);
 *     ... compute: thread i now runs where the placement puts task i ...
 *   }
 *
 * Header-only on purpose: libcanopy does not link an OpenMP runtime, so the
 * few OpenMP calls live here, compiled into the caller with the caller's
 * runtime (libgomp, LLVM libomp, ...), and the work is done by plain C API
 * calls (canopy_team_*).
 *
 * Every thread of the team must call it (it contains worksharing and
 * barrier constructs, like a `#pragma omp barrier`). One thread plans the
 * placement for omp_get_num_threads() tasks, the plan is broadcast with
 * `single copyprivate`, each thread binds itself to its PU (or core), and a
 * barrier makes sure no thread still uses the plan when it is freed. Every
 * thread returns the same planning status (and has the same message in
 * canopy_last_error()), or its own binding status.
 *
 * Compiles as C99 or C++ with OpenMP enabled (-fopenmp). */
#ifndef CANOPY_OMP_H
#define CANOPY_OMP_H

#ifndef _OPENMP
#error "canopy_omp.h needs OpenMP: compile with -fopenmp (or your compiler's OpenMP flag)"
#endif

#include <omp.h>

#include "canopy.h"

/* Bind the calling thread, thread omp_get_thread_num() of the innermost
 * enclosing team, where `policy` (NULL = default) places task
 * omp_get_thread_num() of `matrix` (NULL = threads that do not communicate;
 * otherwise its size must be omp_get_num_threads()), with CANOPY_MAP_*
 * `flags` (e.g. CANOPY_MAP_GRANULARITY_CORE). Outside a parallel region it
 * binds the calling thread as a team of one. */
static inline canopy_status_t canopy_omp_bind_team(const char* policy, unsigned flags,
                                                   const canopy_matrix_t* matrix) {
  canopy_team_t* team = NULL;
  canopy_status_t planned = CANOPY_OK;
  canopy_status_t status;
  /* One thread plans; copyprivate hands its `team` and `planned` to the
   * others (with the barrier that ends the single construct). */
#pragma omp single copyprivate(team, planned)
  planned = canopy_team_create(&team, omp_get_num_threads(), policy, flags, matrix);
  /* Without a team (out of memory) only the planner has a message. */
  status = team ? canopy_team_bind(team, omp_get_thread_num()) : planned;
#pragma omp barrier
#pragma omp single nowait
  canopy_team_destroy(team);
  return status;
}


/* ---- Task affinity (canopy's OpenMP runtime) ----
 *
 * The next task the calling thread creates (an explicit `omp task`, or
 * each task of the next taskloop) goes to NUMA node `node` of the machine,
 * or to thread `thread` of the current team: queued there, run by a thread
 * of that node (that thread), taken by others only when they have been idle
 * a while (CANOPY_OMP_AFFINITY=strict: never). libKOMP's node and thread
 * affinities; the `affinity(list)` clause of OpenMP 5.0 gives the data's
 * node, but GCC drops it at compile time, so GCC programs use these.
 *
 *   canopy_omp_task_node(block_home[b]);
 *   #pragma omp task depend(inout: a[b])
 *   update(a, b);
 *
 * They need no library at link time: canopy's runtime is found through a
 * weak reference, and on another runtime (libgomp, libomp) they do nothing
 * and return 0; on canopy's they return 1. */
#ifdef __cplusplus
extern "C" {
#endif
int canopy_omp_set_task_node(int node) __attribute__((weak));
int canopy_omp_set_task_thread(int thread) __attribute__((weak));
int canopy_omp_task_thread_hint(void) __attribute__((weak));
#ifdef __cplusplus
}
#endif

static inline int canopy_omp_task_node(int node) {
  return canopy_omp_set_task_node ? canopy_omp_set_task_node(node) : 0;
}
static inline int canopy_omp_task_thread(int thread) {
  return canopy_omp_set_task_thread ? canopy_omp_set_task_thread(thread) : 0;
}

/* Inside a task: the thread of the team it was aimed at, by
 * canopy_omp_task_thread or by automatic affinity (CANOPY_AFFINITY=auto
 * maps recurring tasks with depend clauses onto the threads), -1 for none
 * (and on another runtime). Where it ran (omp_get_thread_num) may differ:
 * idle threads take others' tasks. */
static inline int canopy_omp_task_thread_target(void) {
  return canopy_omp_task_thread_hint ? canopy_omp_task_thread_hint() : -1;
}

/* ---- Automatic affinity in calls (CANOPY_AFFINITY=auto) ----
 *
 * canopy's runtime maps the recurring tasks with depend clauses of a team
 * onto its threads (docs/auto-affinity.md). The mapping can be saved,
 * looked at, replaced by another placement computed from its matrix (any
 * policy: `canopy map`, or the C API of canopy.h), and applied:
 *
 *   if (canopy_omp_affinity_save("out", "jacobi") == 1) {   // out/jacobi.edges, out/jacobi.placement
 *     canopy_matrix_t* m;  canopy_topology_t* t;  canopy_placement_t* p;
 *     canopy_matrix_create_from_file(&m, "out/jacobi.edges", CANOPY_MATRIX_FORMAT_AUTO, NULL);
 *     canopy_topology_create_from_input(&t, machine);       // the placement file's first comment names it
 *     canopy_placement_create(&p, t, m, "treematch", NULL);
 *     ... write one OS CPU per task (canopy_placement_task_pu_os) to p.txt ...
 *     canopy_omp_affinity_load("p.txt");                    // later tasks: the threads on those CPUs
 *   }
 *
 * save writes <dir>/<name>.edges (the matrix, a comment per recurring task
 * with its depend items) and <dir>/<name>.placement (one OS CPU per task,
 * `canopy map --of list`'s format); load reads such a file, one CPU of the
 * team's machine per recurring task, and aims the later tasks at the
 * threads on those CPUs (the written items' pages follow, as after an
 * automatic mapping); the placement holds until the tasks' pattern changes.
 * Call them from a thread of the team (the one creating the tasks), once
 * the runtime has mapped (CANOPY_DISPLAY_AFFINITY shows when). Both return
 * 1 when done, 0 when no mapping holds for the calling thread's team (none
 * yet, CANOPY_AFFINITY not auto, another runtime), -1 on an error (a file
 * that cannot be written or read, a CPU not of the machine, another task
 * count: one line on stderr). */
#ifdef __cplusplus
extern "C" {
#endif
int canopy_omp_affinity_save_files(const char* dir, const char* name) __attribute__((weak));
int canopy_omp_affinity_load_file(const char* path) __attribute__((weak));
#ifdef __cplusplus
}
#endif

static inline int canopy_omp_affinity_save(const char* dir, const char* name) {
  return canopy_omp_affinity_save_files ? canopy_omp_affinity_save_files(dir, name) : 0;
}
static inline int canopy_omp_affinity_load(const char* path) {
  return canopy_omp_affinity_load_file ? canopy_omp_affinity_load_file(path) : 0;
}

#endif /* CANOPY_OMP_H */
