/* The data-flow C API compiled as strict C99 (canopy_dataflow.h must stay
 * plain C): a chain of read-write tasks on one handle must run in order,
 * readers of another see the chain's end, the same chain recorded as a task
 * graph runs in order on every run, and bad input is reported. */
#include <stdio.h>
#include <string.h>

#include "canopy_dataflow.h"

struct state {
  long value;
  long log[16];
  int n;
};

static void step(void* arg) {
  struct state* s = (struct state*)arg;
  s->log[s->n++] = s->value;
  s->value += 1;
}

static void check(void* arg) {
  struct state* s = (struct state*)arg;
  if (s->value != 16) s->value = -1000;
}

int main(void) {
  canopy_runtime_options_t options = {0};
  canopy_runtime_t* rt = NULL;
  struct state s = {0, {0}, 0};
  canopy_data_t d = CANOPY_DATA_NULL_INIT;
  canopy_access_t acc[1];
  canopy_data_t null_handle = CANOPY_DATA_NULL_INIT;
  canopy_taskgraph_t* graph = NULL;
  uint64_t local = 0, remote = 0, accesses = 0;
  int i, run;
  options.num_threads = 2;
  options.bind = CANOPY_BIND_NONE;
  if (canopy_runtime_create(&rt, &options) != CANOPY_OK) {
    fprintf(stderr, "create: %s\n", canopy_last_error());
    return 1;
  }
  if (canopy_data_register(&d, &s, sizeof s) != CANOPY_OK) return 1;
  acc[0].data = d;
  acc[0].mode = CANOPY_ACCESS_READ_WRITE;
  for (i = 0; i < 16; ++i)
    if (canopy_submit(rt, acc, 1, NULL, step, &s) != CANOPY_OK) {
      fprintf(stderr, "submit: %s\n", canopy_last_error());
      return 1;
    }
  acc[0].mode = CANOPY_ACCESS_READ;
  if (canopy_submit(rt, acc, 1, NULL, check, &s) != CANOPY_OK) return 1;
  if (canopy_wait_data(rt, d) != CANOPY_OK) return 1;
  if (canopy_wait_all(rt) != CANOPY_OK) return 1;
  for (i = 0; i < 16; ++i)
    if (s.log[i] != i) return 1;
  if (s.value != 16) return 1;
  if (canopy_data_locality(d, &local, &remote, &accesses) != CANOPY_OK || accesses != 17) return 1;
  /* The same chain as a task graph, run three times. */
  if (canopy_taskgraph_create(&graph) != CANOPY_OK) return 1;
  acc[0].mode = CANOPY_ACCESS_READ_WRITE;
  for (i = 0; i < 16; ++i)
    if (canopy_taskgraph_add(graph, acc, 1, NULL, step, &s) != CANOPY_OK) return 1;
  acc[0].mode = CANOPY_ACCESS_READ;
  if (canopy_taskgraph_add(graph, acc, 1, NULL, check, &s) != CANOPY_OK) return 1;
  if (canopy_taskgraph_size(graph) != 17) return 1;
  for (run = 0; run < 3; ++run) {
    s.value = 0;
    s.n = 0;
    if (canopy_taskgraph_run(graph, run == 2 ? NULL : rt) != CANOPY_OK) {
      fprintf(stderr, "taskgraph run: %s\n", canopy_last_error());
      return 1;
    }
    for (i = 0; i < 16; ++i)
      if (s.log[i] != i) return 1;
    if (s.value != 16) return 1;
  }
  /* Automatic affinity by hand: the matrix (a chain), a placement for the
   * runtime's workers, applied; then the graph's own automatic mode. */
  {
    canopy_matrix_t* m = NULL;
    canopy_placement_t* p = NULL;
    double w = 0;
    int n = 0, worker = -2;
    char label[64];
    size_t needed = 0;
    if (canopy_taskgraph_matrix(graph, &m) != CANOPY_OK) return 1;
    if (canopy_matrix_size(m, &n) != CANOPY_OK || n != 17) return 1;
    if (canopy_matrix_get(m, 3, 4, &w) != CANOPY_OK || w != (double)sizeof s) return 1; /* 4 reads what 3 wrote */
    if (canopy_matrix_get(m, 15, 0, &w) != CANOPY_OK || w != (double)sizeof s) return 1; /* the next run's 0 overwrites 15's */
    if (canopy_taskgraph_task_label(graph, 16, label, sizeof label, &needed) != CANOPY_OK) return 1;
    if (strncmp(label, "t16: r#", 7) != 0) return 1;
    if (canopy_placement_create_for_runtime(&p, rt, m, "treematch") != CANOPY_OK) {
      fprintf(stderr, "placement: %s\n", canopy_last_error());
      return 1;
    }
    if (canopy_taskgraph_apply(graph, rt, p) != CANOPY_OK) return 1;
    if (canopy_taskgraph_task_worker(graph, 5, &worker) != CANOPY_OK || worker < 0 || worker > 1) return 1;
    s.value = 0;
    s.n = 0;
    if (canopy_taskgraph_run(graph, rt) != CANOPY_OK || s.value != 16) return 1;
    if (canopy_taskgraph_set_affinity(graph, "sometimes") != CANOPY_EINVAL) return 1;
    if (strstr(canopy_last_error(), "sometimes") == NULL) return 1;
    if (canopy_taskgraph_set_affinity(graph, "auto") != CANOPY_OK) return 1;
    if (canopy_placement_create_for_runtime(&p, rt, NULL, NULL) != CANOPY_EINVAL) return 1;
    canopy_placement_destroy(p);
    canopy_matrix_destroy(m);
  }
  /* Bad input: a null handle, a null graph. */
  acc[0].data = null_handle;
  if (canopy_submit(rt, acc, 1, NULL, step, &s) != CANOPY_EINVAL) return 1;
  if (canopy_taskgraph_add(graph, acc, 1, NULL, step, &s) != CANOPY_EINVAL) return 1;
  if (canopy_taskgraph_size(graph) != 17) return 1;
  if (canopy_taskgraph_run(NULL, rt) != CANOPY_EINVAL) return 1;
  if (canopy_taskgraph_create(NULL) != CANOPY_EINVAL) return 1;
  canopy_taskgraph_destroy(graph);
  if (canopy_data_free(d) != CANOPY_OK) return 1;
  canopy_runtime_destroy(rt);
  printf("ok\n");
  return 0;
}
