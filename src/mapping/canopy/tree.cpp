// Building the canopy policy's view of the machine (see tree.hpp).
#include "mapping/canopy/tree.hpp"

#include "canopy/topology.hpp"

namespace canopy::cmap {

Tree build_tree(const Topology& topo, const std::vector<int>& capacity) {
  Tree t;
  t.num_levels = topo.num_levels();
  t.num_pus = topo.num_pus();
  t.root = topo.root().id;
  t.capacity = capacity;
  const auto& nodes = topo.nodes();
  const std::size_t nn = nodes.size();
  t.children.resize(nn);
  t.level.resize(nn);
  t.first_pu.resize(nn);
  t.num_pus_below.resize(nn);
  t.slots.assign(nn, 0);
  std::vector<std::int64_t> prefix(t.num_pus + 1, 0);
  for (int p = 0; p < t.num_pus; ++p) prefix[p + 1] = prefix[p] + capacity[p];
  for (std::size_t i = 0; i < nn; ++i) {
    const TopoNode& n = nodes[i];
    t.children[i] = n.children;
    t.level[i] = n.level;
    t.first_pu[i] = n.first_pu;
    t.num_pus_below[i] = n.num_pus;
    t.slots[i] = prefix[n.first_pu + n.num_pus] - prefix[n.first_pu];
  }
  t.anc.resize(static_cast<std::size_t>(t.num_pus) * t.num_levels);
  for (int p = 0; p < t.num_pus; ++p) {
    int id = topo.pu(p).node;
    for (int l = t.num_levels - 1; l >= 0; --l) {
      t.anc[static_cast<std::size_t>(p) * t.num_levels + l] = id;
      id = nodes[id].parent;
    }
  }
  return t;
}

}  // namespace canopy::cmap
