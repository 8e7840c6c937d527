// The slot tree: the topology restricted to the PUs that hold tasks, each PU
// standing for as many tasks as its slot capacity. Every node gets a shape id
// (its level and the multiset of its children's shapes, leaves: their
// capacity) so that the grouping policies know which groups are
// interchangeable: a group built for one node fits every node of the same shape.
#pragma once
#include <vector>

#include "canopy/mapping.hpp"

namespace canopy::grouping {

// The type of a single task, below the PU level. Node shapes are >= 1.
inline constexpr int kTaskType = 0;

struct SlotNode {
  int topo_node = 0;          // Topology node id
  int tasks = 0;              // tasks below (sum of capacities)
  int shape = 0;              // >= 1, equal for nodes of identical subtrees
  std::vector<int> children;  // slot-node indexes, in tree order
  int pu = -1;                // logical PU, for leaves
};

struct SlotTree {
  std::vector<SlotNode> nodes;          // nodes[0] is the root
  std::vector<std::vector<int>> levels; // slot-node indexes per topology level, in tree order
};

SlotTree build_slot_tree(const Topology& topo, const Slots& slots);

}  // namespace canopy::grouping
