// A headroom probe for the mapping benchmark, not a policy: simulated
// annealing on the distance-weighted cost from a given placement, to learn
// how much lower a case can go than a mapper's answer at 100-1000 times its
// effort. Moves are swaps of two tasks (every slot stays full, as canopy's
// engine requires); the partner of a task is drawn, most of the time, from
// the subtree of one of its neighbours at a random level, where swaps pay.
// Cooling is geometric from `t0` times a typical per-task cost down to 1e-4
// of it; each run starts from the best placement so far, with a hotter start
// every third run; every run ends with canopy's greedy swap and
// Kernighan-Lin refinement. Seeded and bounded by a move count: the same
// input gives the same result on every machine.
#pragma once
#include <cstdint>
#include <vector>

#include "mapping/canopy/graph.hpp"
#include "mapping/canopy/tree.hpp"

namespace canopy::bench {

struct AnnealParams {
  std::int64_t moves = 5'000'000;  // swap proposals per run
  int runs = 3;
  double t0 = 0.3;                 // start temperature, in typical per-task costs
  std::uint64_t seed = 12345;
};

struct AnnealResult {
  std::vector<int> task_pu;  // the cheapest placement seen
  double cost = 0;           // its weighted cost
  std::int64_t accepted = 0; // accepted swaps over all runs
};

// task_pu: a complete placement (tree.capacity[p] tasks on PU p). weights:
// one per tree level, root first. The result is never dearer than the start.
AnnealResult anneal(const cmap::Graph& g, const cmap::Tree& tree, const std::vector<double>& weights,
                    std::vector<int> task_pu, const AnnealParams& p);

}  // namespace canopy::bench
