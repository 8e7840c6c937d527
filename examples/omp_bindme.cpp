// omp_bindme: BindMe's one call. Every thread of an OpenMP parallel region
// calls canopy_omp_bind_team() (canopy_omp.h) and then runs where the policy
// places it; the program checks each thread's binding against the placement
// the C API computes for the same team, and prints one line per thread.
//
// Usage: example_omp_bindme [POLICY|- [pu|core [MATRIX]]]
//   POLICY  a mapping policy ("-" or absent: the default one)
//   MATRIX  a communication matrix: thread i is task i (its size must be the
//           team size, OMP_NUM_THREADS)
// Exit status: 0 every thread bound where placed, 1 a mismatch, 2 an error
// (printed with canopy_last_error() by every thread of the team).
#include <omp.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "canopy.h"
#include "canopy_omp.h"

namespace {

std::string list(const int* v, size_t n) {
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if (i) s += ',';
    s += std::to_string(v[i]);
  }
  return s;
}

bool same_set(const int* a, size_t na, const int* b, size_t nb) {
  if (na != nb) return false;
  for (size_t i = 0; i < na; ++i) {
    bool found = false;
    for (size_t j = 0; j < nb && !found; ++j) found = a[i] == b[j];
    if (!found) return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const char* policy = argc > 1 && std::strcmp(argv[1], "-") != 0 ? argv[1] : nullptr;
  const unsigned flags = argc > 2 && std::strcmp(argv[2], "core") == 0 ? CANOPY_MAP_GRANULARITY_CORE : 0u;
  canopy_matrix_t* matrix = nullptr;
  if (argc > 3 && canopy_matrix_create_from_file(&matrix, argv[3], CANOPY_MATRIX_FORMAT_AUTO, nullptr) != CANOPY_OK) {
    std::fprintf(stderr, "omp_bindme: %s\n", canopy_last_error());
    return 2;
  }

  // The placement the team should get, computed before any thread is bound,
  // for the team size the next parallel region will have.
  const int n = omp_get_max_threads();
  canopy_topology_t* topo = nullptr;
  canopy_matrix_t* none = nullptr;
  canopy_placement_t* expected = nullptr;
  canopy_map_options_t options = {0, nullptr, 0};
  options.flags = flags;
  const bool planned = canopy_topology_create(&topo) == CANOPY_OK &&
                       (matrix || canopy_matrix_create(&none, n) == CANOPY_OK) &&
                       canopy_placement_create(&expected, topo, matrix ? matrix : none, policy, &options) == CANOPY_OK;
  if (planned) {
    char places[4096];
    const char* name = "";
    canopy_placement_policy(expected, &name);
    if (canopy_placement_omp_places(expected, places, sizeof places, nullptr) == CANOPY_OK)
      std::printf("omp_bindme: policy=%s threads=%d places=%s\n", name, n, places);
  }

  int errors = 0, mismatches = 0;
#pragma omp parallel reduction(+ : errors, mismatches)
  {
    const canopy_status_t s = canopy_omp_bind_team(policy, flags, matrix);
    const int t = omp_get_thread_num();
    if (s != CANOPY_OK) {
#pragma omp critical
      std::printf("omp_bindme: thread=%d error=%s: %s\n", t, canopy_strerror(s), canopy_last_error());
      ++errors;
    } else {
      int cpu = -1, bound[1024], want[1024];
      size_t nbound = 0, nwant = 0;
      canopy_thread_cpu(&cpu);
      canopy_thread_binding(bound, 1024, &nbound);
      const bool ok = planned && omp_get_num_threads() == n &&
                      canopy_placement_task_binding(expected, t, want, 1024, &nwant) == CANOPY_OK &&
                      same_set(bound, nbound, want, nwant);
#pragma omp critical
      std::printf("omp_bindme: thread=%d of=%d cpu=%d bound=%s expected=%s %s\n", t, omp_get_num_threads(), cpu,
                  list(bound, nbound).c_str(), list(want, nwant).c_str(), ok ? "ok" : "MISMATCH");
      if (!ok) ++mismatches;
    }
  }
  canopy_placement_destroy(expected);
  canopy_matrix_destroy(none);
  canopy_topology_destroy(topo);
  canopy_matrix_destroy(matrix);
  return errors ? 2 : mismatches ? 1 : 0;
}
