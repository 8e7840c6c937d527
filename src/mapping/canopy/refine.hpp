// Local refinement of a complete placement on the real objective: the
// distance-weighted cost, sum over edges of volume x weight[level of the
// common ancestor of the two PUs]. Every slot is full (capacities add up to
// the number of tasks), so the moves are swaps of two tasks. The candidates
// for task t are the tasks that sit near t's heaviest neighbours (same PU or
// same parent node, e.g. the hyperthread sibling), which is where a swap can
// pay. First-improvement hill climbing driven by a work queue: a task is
// looked at again when one of its neighbours moved.
#pragma once
#include <cstdint>
#include <vector>

#include "mapping/canopy/graph.hpp"
#include "mapping/canopy/tree.hpp"

namespace canopy::cmap {

// Sum over undirected edges of volume x weights[common level].
double weighted_cost(const Graph& g, const Tree& tree, const std::vector<double>& weights,
                     const std::vector<int>& task_pu);

// Improves task_pu in place by swaps; keeps every PU's task count. Stops when
// no swap lowers the cost or after about `max_work` edge visits (a bound on
// work, not on time, so the result does not depend on the machine's speed).
void refine_swaps(const Graph& g, const Tree& tree, const std::vector<double>& weights, std::vector<int>& task_pu,
                  std::uint64_t seed, std::int64_t max_work);

// Kernighan-Lin passes over swaps (kl_refine.cpp): the best swap is taken
// even when it loses, both tasks stay put for the rest of the pass, and the
// pass is rolled back to its best prefix. Finds the pairs of swaps that a
// greedy swap search cannot (two heavy communicators onto a core that two
// others held). Stops after max_passes or about max_work edge visits.
void refine_kl(const Graph& g, const Tree& tree, const std::vector<double>& weights, std::vector<int>& task_pu,
               std::uint64_t seed, std::int64_t max_work, int max_passes = 8);

// Refinement by whole subtrees (level_refine.cpp): at every level from the
// cores up, exchanges the contents of two nodes of the same shape when that
// lowers the cost (swap and Kernighan-Lin passes on the quotient graph).
void refine_levels(const Graph& g, const Tree& tree, const std::vector<double>& weights, std::vector<int>& task_pu,
                   std::uint64_t seed, std::int64_t max_work, int kl_passes = 8);

}  // namespace canopy::cmap
