// hierarchical_map: the skeleton shared by treematch, eagermap and choicemap.
// Bottom-up over the slot tree (slot_tree.hpp), each level's entities are
// grouped by the policy's GroupFn into the compositions the level's nodes ask
// for, and the communication graph is aggregated; then, top-down, each group
// is given to a node of its shape and its members to the node's children.
// Levels where every node has a single child are passed through unchanged.
#pragma once
#include <vector>

#include "canopy/mapping.hpp"
#include "mapping/grouping.hpp"

namespace canopy::grouping {

std::vector<int> hierarchical_map(const Topology& topo, const CommMatrix& m, const Slots& slots,
                                  const GroupFn& group);

}  // namespace canopy::grouping
