// The canopy mapping algorithm on plain data: several deterministic starts of
// top-down multilevel partitioning along the tree, each polished by swap
// refinement on the distance-weighted cost; the cheapest placement wins and,
// on small graphs, is kicked (random swaps, then whole clusters exchanged
// between subtrees) and refined again while that lowers the cost.
// canopy_policy.cpp adapts it to the registry's Topology/CommMatrix/Slots.
//
// How hard it works depends on the size of the graph only (never on a
// clock), so the result is the same on every machine: small inputs get
// several starts and V-cycles, large ones a single lean start.
#pragma once
#include <cstdint>
#include <vector>

#include "mapping/canopy/graph.hpp"
#include "mapping/canopy/kway.hpp"
#include "mapping/canopy/tree.hpp"

namespace canopy::cmap {

struct Effort {
  int starts = 1;           // top-down partitions from different seeds; the best refined one wins
  KwayParams partition;     // groupings, bisection tries, FM passes, V-cycles
  double swap_work = 40;    // greedy swap refinement budget, in visits per edge
  double kl_work = 200;     // Kernighan-Lin refinement budget, in visits per edge
  std::int64_t work_floor = 200000;  // budget floor for small graphs (x10 for Kernighan-Lin)
  int kl_passes = 8;
  bool kl_only_uneven = false;  // Kernighan-Lin only when slots (per PU or per core) differ in size
  int level_rounds = 1;     // refinement by whole subtrees, then the task refiners again
  int level_kl_passes = 0;  // Kernighan-Lin passes on each level's quotient graph (greedy swaps only: KL there cost half the time of small cases for ~0.01%)
  // One more start whose coarsening visits tasks in index order, run when
  // the numbering has locality (numbering_locality() below this). It can
  // only lower the cost: the seeded starts run as before and the cheapest
  // placement wins.
  bool order_start = true;
  double order_locality = 0.6;
  // Iterated local search on the best placement: kick it (random swaps of
  // k * n task pairs, k cycling through ils_kick / 2, ils_kick, 2 ils_kick),
  // refine it again, keep it when cheaper.
  int ils_rounds = 0;
  double ils_kick = 0.08;
  // Then cluster kicks: a group of tasks grown along heavy edges exchanged
  // with a group of the same size in a neighbouring subtree, refined again,
  // kept when cheaper (sizes 2, 4, 8, ... in turn: cluster_sizes of them).
  int cluster_rounds = 0;
  int cluster_sizes = 3;
};

// The effort for a graph of n vertices and m edges (see mapper.cpp).
Effort default_effort(int n, std::int64_t m);

// How far apart the ends of the edges are in the task numbering, on a log
// scale: sum of w(e) log2(1 + |i - j|) over sum of w(e) log2(n), in [0, 1].
// Random ids give about 1 - 2.2 / log2(n) (0.82 at 5,000 tasks); a row-major
// grid or a pipeline numbered stage by stage about 0.3-0.4.
double numbering_locality(const Graph& g);

struct MapParams {
  std::uint64_t seed = 0x63616e6f7079ULL;  // "canopy"
  bool auto_effort = true;                 // use default_effort(); else `effort` as given
  Effort effort;
};

// task -> PU with exactly tree.capacity[p] tasks on PU p. `weights` has one
// entry per tree level (root first). Requires sum of capacities == g.n.
std::vector<int> map_graph(const Graph& g, const Tree& tree, const std::vector<double>& weights,
                           const MapParams& params = {});

}  // namespace canopy::cmap
