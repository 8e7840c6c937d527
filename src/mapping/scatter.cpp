// The `scatter` policy: consecutive tasks go round robin over the top-level
// branches of the tree, and recursively inside each branch (KMP_AFFINITY=
// scatter): task 0 to the first slot of branch 0, task 1 to the first slot of
// branch 1, ... A PU holding c slots appears c times in its branch's order.
#include <algorithm>

#include "canopy/topology.hpp"
#include "mapping/policies.hpp"

namespace canopy::policy {

namespace {

// The slots below `id` in scatter order.
std::vector<int> scatter_order(const Topology& topo, const Slots& slots, int id) {
  const TopoNode& n = topo.node(id);
  if (n.children.empty()) return std::vector<int>(slots.capacity[n.first_pu], n.first_pu);
  std::vector<std::vector<int>> parts;
  size_t longest = 0, total = 0;
  for (int c : n.children) {
    parts.push_back(scatter_order(topo, slots, c));
    longest = std::max(longest, parts.back().size());
    total += parts.back().size();
  }
  std::vector<int> out;
  out.reserve(total);
  for (size_t r = 0; r < longest; ++r)
    for (const auto& p : parts)
      if (r < p.size()) out.push_back(p[r]);
  return out;
}

}  // namespace

std::vector<int> scatter(const Topology& topo, const CommMatrix&, const MapOptions&, const Slots& slots) {
  return scatter_order(topo, slots, topo.root().id);
}

}  // namespace canopy::policy
