// The `compact` policy: tasks in id order fill the slots in PU (tree) order,
// like OMP_PROC_BIND=close or KMP_AFFINITY=compact over the chosen slots.
#include "canopy/topology.hpp"
#include "mapping/policies.hpp"

namespace canopy::policy {

std::vector<int> compact(const Topology& topo, const CommMatrix&, const MapOptions&, const Slots& slots) {
  std::vector<int> task_pu;
  for (int p = 0; p < topo.num_pus(); ++p) task_pu.insert(task_pu.end(), slots.capacity[p], p);
  return task_pu;
}

}  // namespace canopy::policy
