// canopy's task-affinity extension (include/canopy_omp.h calls these through
// weak references, so a program still runs on another runtime): the next
// task the calling thread creates goes to a NUMA node or a thread of the
// team (core/task_affinity.hpp). Both return 1: canopy honours them. And
// which thread the running task was aimed at. And automatic affinity's
// mapping of the calling thread's team saved as files and a placement file
// applied (canopy_omp_affinity_save / _load).
#include "../core/depend_affinity.hpp"
#include "../core/task_affinity.hpp"
#include "../core/observe.hpp"
#include "../core/tasks.hpp"
#include "../gomp/abi.hpp"

using namespace canopy::omp;

CANOPY_GOMP int canopy_omp_set_task_node(int node) {
  set_next_task_affinity(node >= 0 ? node : -1, -1);
  return 1;
}
CANOPY_GOMP int canopy_omp_set_task_thread(int thread) {
  set_next_task_affinity(-1, thread >= 0 ? thread : -1);
  return 1;
}
// The thread of the team the calling task was aimed at (canopy_omp_task_thread,
// or automatic affinity: CANOPY_AFFINITY=auto), -1 for none. For tests and
// tools: where a task runs can be compared with where it was meant to.
CANOPY_GOMP int canopy_omp_task_thread_hint() {
  const ThreadState* ts = tls_thread;
  return ts && ts->task ? ts->task->affinity_thread : -1;
}

CANOPY_GOMP int canopy_omp_affinity_save_files(const char* dir, const char* name) {
  const ThreadState* ts = tls_thread;
  return depend_affinity_save(ts ? ts->team : nullptr, dir, name);
}
CANOPY_GOMP int canopy_omp_affinity_load_file(const char* path) {
  const ThreadState* ts = tls_thread;
  return depend_affinity_load(ts ? ts->team : nullptr, path);
}
