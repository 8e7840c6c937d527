// Top-down partitioning along the tree: the tasks below a node are split
// among its children with exactly as many tasks as each child has slots.
// Siblings are all at the same distance from each other and from everything
// outside their parent, so each split only has to minimise the volume it
// cuts (its k-way cut), independently of the rest. Each split is a
// multilevel k-way partition with the node's own arity (kway.hpp), which
// keeps the grouping aligned with the machine: the tasks that end on one core
// are decided when the core's parent is split, never across two cores as a
// power-of-two bisection of the whole machine would.
#pragma once
#include <cstdint>
#include <vector>

#include "mapping/canopy/graph.hpp"
#include "mapping/canopy/kway.hpp"
#include "mapping/canopy/tree.hpp"

namespace canopy::cmap {

// Returns task -> PU; every PU p receives exactly tree.capacity[p] tasks.
// Requires sum of capacities == g.n and unit vertex weights.
std::vector<int> top_down_partition(const Graph& g, const Tree& tree, std::uint64_t seed,
                                    const KwayParams& params = {});

}  // namespace canopy::cmap
