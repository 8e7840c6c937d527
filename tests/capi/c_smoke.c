/* The C API from C99 (compiled with -std=c99 -pedantic -Werror): the
 * header must be plain C, and a C program must be able to go from a
 * topology and a matrix to a placement, its OMP_PLACES string, its cost,
 * the policy list and an error message. Exit status 0 = every check held. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "canopy.h"

static int failures = 0;

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "c_smoke.c:%d: check failed: %s (%s)\n", __LINE__, #cond, canopy_last_error()); \
      ++failures;                                                                            \
    }                                                                                        \
  } while (0)

int main(void) {
  canopy_topology_t* topo = NULL;
  canopy_matrix_t* matrix = NULL;
  canopy_placement_t* placement = NULL;
  canopy_placement_t* bad_placement = (canopy_placement_t*)&failures; /* must be reset to NULL */
  canopy_topology_t* bad_topo = (canopy_topology_t*)&failures;
  canopy_edge_t edges[3];
  canopy_map_options_t options = {0};
  canopy_cost_t cost;
  char* places = NULL;
  size_t needed = 0, count = 0, i;
  int n = 0, pu = -1;
  unsigned info = 0;
  const char *name = NULL, *description = NULL;

  CHECK(canopy_version() == CANOPY_VERSION);
  CHECK(strlen(canopy_version_string()) >= 5);

  CHECK(canopy_topology_create_from_synthetic(&topo, "pack:2 core:2 pu:2") == CANOPY_OK);
  edges[0].i = 0; edges[0].j = 1; edges[0].weight = 10.0;
  edges[1].i = 1; edges[1].j = 2; edges[1].weight = 1.0;
  edges[2].i = 2; edges[2].j = 3; edges[2].weight = 10.0;
  CHECK(canopy_matrix_create_from_edges(&matrix, 4, edges, 3, &info) == CANOPY_OK);
  CHECK(info == 0);

  options.flags = CANOPY_MAP_GRANULARITY_CORE;
  CHECK(canopy_placement_create(&placement, topo, matrix, "compact", &options) == CANOPY_OK);
  CHECK(canopy_placement_num_tasks(placement, &n) == CANOPY_OK && n == 4);
  CHECK(canopy_placement_task_pu(placement, 3, &pu) == CANOPY_OK && pu >= 0 && pu < 8);

  CHECK(canopy_placement_omp_places(placement, NULL, 0, &needed) == CANOPY_OK && needed > 1);
  places = (char*)malloc(needed);
  CHECK(places != NULL);
  if (places) {
    CHECK(canopy_placement_omp_places(placement, places, needed, NULL) == CANOPY_OK);
    CHECK(places[0] == '{' && strlen(places) + 1 == needed);
    printf("OMP_PLACES=%s\n", places);
    free(places);
  }
  CHECK(canopy_placement_cost(placement, matrix, NULL, 0, &cost) == CANOPY_OK);
  CHECK(cost.hop_bytes > 0.0 && cost.weighted >= 0.0 && cost.numa_crossing == 0.0);

  CHECK(canopy_policy_count(&count) == CANOPY_OK && count >= 2);
  for (i = 0; i < count; ++i) {
    CHECK(canopy_policy_get(i, &name, &description) == CANOPY_OK);
    printf("policy %s: %s\n", name, description);
  }

  /* Errors: a status from the table, a message naming the call. */
  options.flags = 1u << 12;
  CHECK(canopy_placement_create(&bad_placement, topo, matrix, "compact", &options) == CANOPY_EINVAL);
  CHECK(strstr(canopy_last_error(), "canopy_placement_create") != NULL);
  CHECK(strcmp(canopy_strerror(CANOPY_EINVAL), "invalid argument") == 0);
  CHECK(bad_placement == NULL);
  CHECK(canopy_topology_create_from_synthetic(&bad_topo, "pack:zero") == CANOPY_EPARSE);
  CHECK(bad_topo == NULL);
  CHECK(canopy_topology_num_pus(NULL, &n) == CANOPY_EINVAL);

  canopy_placement_destroy(placement);
  canopy_matrix_destroy(matrix);
  canopy_topology_destroy(topo);
  if (failures) fprintf(stderr, "c_smoke: %d check(s) failed\n", failures);
  return failures ? 1 : 0;
}
