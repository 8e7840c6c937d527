// Building the slot tree and its shape ids (see slot_tree.hpp).
#include "mapping/slot_tree.hpp"

#include <algorithm>
#include <map>

#include "canopy/topology.hpp"

namespace canopy::grouping {

namespace {

struct Builder {
  const Topology& topo;
  const Slots& slots;
  std::vector<long long> prefix;  // prefix sums of capacities, by logical PU
  SlotTree tree;
  std::map<std::vector<int>, int> shape_ids;

  int tasks_below(const TopoNode& n) const { return static_cast<int>(prefix[n.first_pu + n.num_pus] - prefix[n.first_pu]); }

  int shape_of(std::vector<int> key) {
    auto [it, fresh] = shape_ids.emplace(std::move(key), static_cast<int>(shape_ids.size()) + 1);
    return it->second;
  }

  // Adds the slot node for topology node `id` (which holds tasks) and its subtree.
  int add(int id) {
    const TopoNode& tn = topo.node(id);
    const int me = static_cast<int>(tree.nodes.size());
    tree.nodes.push_back({});
    tree.nodes[me].topo_node = id;
    tree.nodes[me].tasks = tasks_below(tn);
    tree.levels[tn.level].push_back(me);
    std::vector<int> key{tn.level};
    if (tn.children.empty()) {
      tree.nodes[me].pu = tn.first_pu;
      key.push_back(-tree.nodes[me].tasks);  // leaves: keyed by capacity
    } else {
      std::vector<int> kids, shapes;
      for (int c : tn.children)
        if (tasks_below(topo.node(c)) > 0) {
          int k = add(c);
          kids.push_back(k);
          shapes.push_back(tree.nodes[k].shape);
        }
      std::sort(shapes.begin(), shapes.end());
      key.insert(key.end(), shapes.begin(), shapes.end());
      tree.nodes[me].children = std::move(kids);
    }
    tree.nodes[me].shape = shape_of(std::move(key));
    return me;
  }
};

}  // namespace

SlotTree build_slot_tree(const Topology& topo, const Slots& slots) {
  Builder b{topo, slots, {}, {}, {}};
  b.prefix.assign(topo.num_pus() + 1, 0);
  for (int p = 0; p < topo.num_pus(); ++p) b.prefix[p + 1] = b.prefix[p] + slots.capacity[p];
  b.tree.levels.assign(topo.num_levels(), {});
  b.add(topo.root().id);
  return std::move(b.tree);
}

}  // namespace canopy::grouping
