// The canopy mapping algorithm on plain data: several deterministic starts of
// top-down multilevel partitioning along the tree, each polished by swap
// refinement on the distance-weighted cost; the cheapest placement wins.
// canopy_policy.cpp adapts it to the registry's Topology/CommMatrix/Slots.
#pragma once
#include <cstdint>
#include <vector>

#include "mapping/canopy/bisect.hpp"
#include "mapping/canopy/graph.hpp"
#include "mapping/canopy/tree.hpp"

namespace canopy::cmap {

struct MapParams {
  int starts = 0;                 // 0 = chosen from the graph's size (see mapper.cpp)
  std::uint64_t seed = 0x63616e6f7079ULL;  // "canopy"
  double refine_work = 40;        // greedy swap refinement budget, in visits per edge
  double kl_work = 200;           // Kernighan-Lin refinement budget, in visits per edge
  BisectParams bisect;
};

// task -> PU with exactly tree.capacity[p] tasks on PU p. `weights` has one
// entry per tree level (root first). Requires sum of capacities == g.n.
std::vector<int> map_graph(const Graph& g, const Tree& tree, const std::vector<double>& weights,
                           const MapParams& params = {});

// How many starts map_graph makes for a graph of n vertices and m edges.
int default_starts(int n, std::int64_t m);

}  // namespace canopy::cmap
