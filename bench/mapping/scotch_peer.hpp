// Scotch 7 (Debian's libscotch, 64-bit integers) as a competitor in the
// mapping benchmark: static mapping of the communication graph onto a
// tree-leaf architecture built from the canopy topology, with a zero
// imbalance ratio so that no PU receives more than ceil(T/P) tasks.
//
// Like with like (issue 2, section 7): in the packed regime Scotch maps onto
// the smallest subtree that fits the tasks only; otherwise onto the whole
// machine. With more tasks than PUs each PU gets an extra tree level of
// ceil(T/P) slots, so the zero-imbalance mapping puts at most that many
// tasks on a PU. docs/bench-mapping.md explains the choices.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace canopy {
class Topology;
class CommMatrix;
}  // namespace canopy

namespace canopy::bench {

enum class ScotchStrategy { Default, Quality, Speed, Balance };
// "default", "quality", "speed", "balance"; throws canopy::Error otherwise.
ScotchStrategy parse_scotch_strategy(const std::string& s);

struct ScotchOptions {
  bool packed = false;                          // map onto the smallest subtree that fits
  ScotchStrategy strategy = ScotchStrategy::Quality;
  std::vector<double> weights;                  // per-level cost weights, root first (resolved)
  std::int64_t seed = 1;                        // Scotch's random seed (fixed: same result every run)
};

struct ScotchResult {
  std::vector<int> task_pu;  // logical PU per task
  std::string arch;          // the target architecture, in Scotch's own file syntax (for the report)
};

// The PUs (logical, increasing) of the smallest subtree holding `tasks` PUs:
// descend from the root into the smallest child that still fits. Where no
// single child fits, a node inside one NUMA node is taken whole; above the
// NUMA nodes, whole leading children are taken and the rest is packed into
// the next child the same way (so the region covers the fewest NUMA nodes,
// as canopy's --pack does).
std::vector<int> packed_region(const Topology& topo, int tasks);

// A graph in compressed sparse rows, both directions of each edge present.
struct CsrGraph {
  int n = 0;
  const std::int64_t* row_ptr = nullptr;  // n + 1 entries
  const int* cols = nullptr;
  const double* weights = nullptr;
};

ScotchResult scotch_map(const Topology& topo, const CsrGraph& g, const ScotchOptions& opt);
ScotchResult scotch_map(const Topology& topo, const CommMatrix& m, const ScotchOptions& opt);

}  // namespace canopy::bench
