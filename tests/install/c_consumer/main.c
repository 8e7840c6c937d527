/* A C program that uses an installed canopy through the C API only
 * (canopy.h, canopy_runtime.h), built outside the source tree by
 * tests/install/check_install.sh with find_package(canopy) and with
 * pkg-config. It maps 8 tasks that talk in heavy pairs onto a synthetic
 * 2-package machine of 2-way SMT cores, prints the placement, checks that
 * every pair shares a core, that an error crosses the API as a status and a
 * message, and that the task runtime runs a callback. Exit 0 = all good. */
#include <canopy.h>
#include <canopy_runtime.h>

#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                         \
  do {                                                                      \
    canopy_status_t s_ = (call);                                            \
    if (s_ != CANOPY_OK) {                                                  \
      fprintf(stderr, "c_consumer: %s: %s (%s)\n", #call, canopy_strerror(s_), \
              canopy_last_error());                                         \
      return 1;                                                             \
    }                                                                       \
  } while (0)

static void mark(void* arg) { *(int*)arg = 1; }

int main(void) {
  canopy_topology_t* topo = NULL;
  canopy_matrix_t* comm = NULL;
  canopy_placement_t* placement = NULL;
  canopy_placement_t* none = NULL;
  canopy_runtime_t* rt = NULL;
  canopy_runtime_options_t options;
  /* Heavy pairs (0,5) (1,6) (2,7) (3,4) and a light ring over all 8. */
  canopy_edge_t edges[12] = {{0, 5, 100}, {1, 6, 100}, {2, 7, 100}, {3, 4, 100}};
  char places[256];
  int task, pu[8], together = 0, done = 0;
  canopy_task_group_t* group = NULL;
  int marks[16] = {0};
  canopy_cost_t cost;

  if (canopy_version() != CANOPY_VERSION) {
    fprintf(stderr, "c_consumer: header %06x but library %s\n", (unsigned)CANOPY_VERSION, canopy_version_string());
    return 1;
  }
  for (task = 0; task < 8; ++task) {
    edges[4 + task].i = task;
    edges[4 + task].j = (task + 1) % 8;
    edges[4 + task].weight = 1;
  }
  CHECK(canopy_topology_create_from_synthetic(&topo, "pack:2 core:2 pu:2"));
  CHECK(canopy_matrix_create_from_edges(&comm, 8, edges, 12, NULL));
  CHECK(canopy_placement_create(&placement, topo, comm, "treematch", NULL));
  CHECK(canopy_placement_omp_places(placement, places, sizeof places, NULL));
  CHECK(canopy_placement_cost(placement, comm, NULL, 0, &cost));
  for (task = 0; task < 8; ++task) CHECK(canopy_placement_task_pu(placement, task, &pu[task]));
  /* Logical PUs 2c and 2c+1 are the two PUs of core c. */
  together = (pu[0] / 2 == pu[5] / 2) + (pu[1] / 2 == pu[6] / 2) + (pu[2] / 2 == pu[7] / 2) + (pu[3] / 2 == pu[4] / 2);
  printf("c_consumer: canopy %s\n", canopy_version_string());
  printf("c_consumer: OMP_PLACES=%s\n", places);
  printf("c_consumer: pairs sharing a core: %d/4, hop-bytes %.0f\n", together, cost.hop_bytes);

  /* An unknown policy is a status and a message, not a crash. */
  if (canopy_placement_create(&none, topo, comm, "no-such-policy", NULL) != CANOPY_EINVAL || none != NULL ||
      strstr(canopy_last_error(), "no-such-policy") == NULL) {
    fprintf(stderr, "c_consumer: an unknown policy was not reported (last error: '%s')\n", canopy_last_error());
    return 1;
  }
  printf("c_consumer: error reported: %s\n", canopy_last_error());

  /* The task runtime: two unbound workers run 16 tasks of a group. */
  memset(&options, 0, sizeof options);
  options.num_threads = 2;
  options.bind = CANOPY_BIND_NONE;
  CHECK(canopy_runtime_create(&rt, &options));
  CHECK(canopy_task_group_create(&group, rt));
  for (task = 0; task < 16; ++task) CHECK(canopy_task_group_spawn(group, mark, &marks[task]));
  CHECK(canopy_task_group_wait(group));
  canopy_task_group_destroy(group);
  canopy_runtime_destroy(rt);
  for (task = 0; task < 16; ++task) done += marks[task];
  printf("c_consumer: runtime ran %d/16 tasks\n", done);

  canopy_placement_destroy(placement);
  canopy_matrix_destroy(comm);
  canopy_topology_destroy(topo);
  return together == 4 && done == 16 ? 0 : 1;
}
