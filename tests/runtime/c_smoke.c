/* The runtime's C API compiled as strict C99 (canopy_runtime.h must stay
 * plain C): a task group with function pointers, affinity hints and a
 * parallel loop. */
#include <stdio.h>

#include "canopy_runtime.h"

static void add(void* arg) {
  /* Tasks of one group run concurrently: each adds to its own slot. */
  long* slot = (long*)arg;
  *slot += 1;
}

static void mark(int64_t lo, int64_t hi, void* arg) {
  char* seen = (char*)arg;
  int64_t i;
  for (i = lo; i < hi; ++i) seen[i] += 1;
}

int main(void) {
  canopy_runtime_options_t options = {0};
  canopy_runtime_t* rt = NULL;
  canopy_task_group_t* group = NULL;
  long counts[64] = {0};
  long hinted[64] = {0};
  char seen[1000] = {0};
  int i, workers = 0;
  options.num_threads = 2;
  options.bind = CANOPY_BIND_NONE;
  if (canopy_runtime_create(&rt, &options) != CANOPY_OK) {
    fprintf(stderr, "create: %s\n", canopy_last_error());
    return 1;
  }
  if (canopy_runtime_num_workers(rt, &workers) != CANOPY_OK || workers != 2) return 1;
  if (canopy_task_group_create(&group, rt) != CANOPY_OK) return 1;
  for (i = 0; i < 64; ++i) {
    canopy_affinity_t hint = {CANOPY_AFFINITY_NONE, 0, 0, CANOPY_DATA_NULL_INIT};
    hint.kind = i % 2 ? CANOPY_AFFINITY_WORKER : CANOPY_AFFINITY_NODE;
    hint.index = i;
    hint.flags = i % 4 < 2 ? CANOPY_AFFINITY_STRICT : 0;
    if (canopy_task_group_spawn(group, add, &counts[i]) != CANOPY_OK) return 1;
    if (canopy_task_group_spawn_affinity(group, &hint, add, &hinted[i]) != CANOPY_OK) return 1;
  }
  if (canopy_task_group_wait(group) != CANOPY_OK) return 1;
  canopy_task_group_destroy(group);
  for (i = 0; i < 64; ++i)
    if (counts[i] != 1 || hinted[i] != 1) return 1;
  if (canopy_parallel_for(rt, 0, 1000, 0, mark, seen) != CANOPY_OK) return 1;
  for (i = 0; i < 1000; ++i)
    if (seen[i] != 1) return 1;
  if (canopy_parallel_for(rt, 0, 10, -5, mark, seen) != CANOPY_EINVAL) return 1;
  canopy_runtime_destroy(rt);
  printf("ok\n");
  return 0;
}
