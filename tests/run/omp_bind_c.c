/* canopy_omp.h from C99 (-std=c99 -pedantic -Werror -fopenmp): every thread
 * of the team calls canopy_omp_bind_team() and checks that it is bound where
 * a placement computed beforehand for the same team puts it.
 * Usage: omp_bind_c [POLICY]. Prints one line per thread; exit 0 when all are
 * bound where placed, 1 on a mismatch, 2 on an error. */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "canopy.h"
#include "canopy_omp.h"

int main(int argc, char** argv) {
  const char* policy = argc > 1 ? argv[1] : "compact";
  const int n = omp_get_max_threads();
  canopy_topology_t* topo = NULL;
  canopy_matrix_t* matrix = NULL;
  canopy_placement_t* expected = NULL;
  int errors = 0, mismatches = 0;
  if (canopy_topology_create(&topo) != CANOPY_OK || canopy_matrix_create(&matrix, n) != CANOPY_OK ||
      canopy_placement_create(&expected, topo, matrix, policy, NULL) != CANOPY_OK) {
    fprintf(stderr, "omp_bind_c: %s\n", canopy_last_error());
    errors = 1;
  }
#pragma omp parallel reduction(+ : errors, mismatches)
  {
    canopy_status_t s = canopy_omp_bind_team(policy, 0, NULL);
    int t = omp_get_thread_num(), cpu = -1, want = -2, bound[2] = {-1, -1};
    size_t nbound = 0;
    if (s != CANOPY_OK) {
#pragma omp critical
      printf("omp_bind_c: thread=%d error: %s\n", t, canopy_last_error());
      ++errors;
    } else {
      canopy_thread_cpu(&cpu);
      canopy_thread_binding(bound, 2, &nbound);
      if (expected) canopy_placement_task_pu_os(expected, t, &want);
#pragma omp critical
      printf("omp_bind_c: thread=%d cpu=%d expected=%d %s\n", t, cpu, want,
             nbound == 1 && bound[0] == want && cpu == want ? "ok" : "MISMATCH");
      if (!(nbound == 1 && bound[0] == want && cpu == want)) ++mismatches;
    }
  }
  canopy_placement_destroy(expected);
  canopy_matrix_destroy(matrix);
  canopy_topology_destroy(topo);
  return errors ? 2 : mismatches ? 1 : 0;
}
