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
  std::vector<int> index_in_parent(nn, 0);
  for (std::size_t i = 0; i < nn; ++i)
    for (std::size_t c = 0; c < nodes[i].children.size(); ++c) index_in_parent[nodes[i].children[c]] = static_cast<int>(c);
  build_codes(t, index_in_parent);
  return t;
}

void build_codes(Tree& t, const std::vector<int>& index_in_parent) {
  t.code.clear();
  const int levels = t.num_levels;
  // Bits per level: enough for the largest child index seen at that level.
  std::vector<int> bits(levels, 0);
  for (int p = 0; p < t.num_pus; ++p)
    for (int l = 1; l < levels; ++l) {
      const int idx = index_in_parent[t.ancestor(p, l)];
      while ((idx >> bits[l]) != 0) ++bits[l];
    }
  int total = 0;
  for (int l = 1; l < levels; ++l) total += bits[l];
  if (total > 64) return;
  // Level l's field sits below the fields of levels 1..l-1, from the top bit.
  int shift = 64;
  std::vector<int> lo(levels, 64);
  for (int l = 1; l < levels; ++l) {
    shift -= bits[l];
    lo[l] = shift;
    // A first difference in level l's field: the common ancestor is at l-1.
    for (int b = 64 - (shift + bits[l]); b < 64 - shift; ++b) t.level_of_clz[b] = static_cast<std::uint8_t>(l - 1);
  }
  t.code.assign(t.num_pus, 0);
  for (int p = 0; p < t.num_pus; ++p) {
    std::uint64_t c = 0;
    for (int l = 1; l < levels; ++l)
      if (bits[l] > 0) c |= static_cast<std::uint64_t>(index_in_parent[t.ancestor(p, l)]) << lo[l];
    t.code[p] = c;
  }
}

}  // namespace canopy::cmap
