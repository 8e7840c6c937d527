// Multilevel bisection with exact part weights: the building block of the
// canopy policy's top-down partitioning. Coarsen by heavy-edge matching,
// bisect the coarsest graph by greedy graph growing from several seeds, then
// project back level by level with Fiduccia-Mattheyses refinement. Graphs of
// at most kExactBisection vertices are bisected exactly by enumeration.
//
// A Bisector keeps its scratch arrays between calls: the top-down recursion
// bisects thousands of small graphs, where allocation would dominate.
#pragma once
#include <cstdint>
#include <vector>

#include "mapping/canopy/gain_heap.hpp"
#include "mapping/canopy/graph.hpp"

namespace canopy::cmap {

inline constexpr int kExactBisection = 10;

struct BisectParams {
  int coarsen_to = 64;   // stop coarsening at this many vertices
  int init_tries = 8;    // greedy-growing starts on the coarsest graph of a coarsened input
  int small_tries = 4;   // the same for inputs small enough not to be coarsened
  int fm_passes = 8;     // refinement passes per level (stops early without gain)
  int vcycles = 1;       // extra V-cycles at most: re-coarsen within the parts, refine again
  int vcycles_min = 1 << 30;  // cycles always run; later ones only while each lowers the cut
  bool in_order = false;  // coarsening visits vertices in index order (mapper.cpp's order start)
};

class Bisector {
 public:
  explicit Bisector(const BisectParams& params = {}) : params_(params) {}

  // Splits g into part 0 weighing target0 and part 1 weighing the rest, with
  // the least cut weight found. With unit vertex weights (tasks) the weights
  // are exact; otherwise as close as the vertex weights allow.
  std::vector<std::uint8_t> bisect(const Graph& g, std::int64_t target0, std::uint64_t seed);

  // Fiduccia-Mattheyses refinement of an existing bisection: moves that keep
  // |w(part 0) - target0| within max(tol_final, heaviest vertex) during a
  // pass, rolled back to the best state whose imbalance is at most tol_final
  // (or the least imbalanced one). Returns the cut weight.
  double fm_refine(const Graph& g, std::vector<std::uint8_t>& part, std::int64_t target0, std::int64_t tol_final,
                   int max_passes, std::uint64_t seed);

 private:
  std::vector<std::uint8_t> initial(const Graph& g, std::int64_t target0, std::int64_t tol, int tries,
                                    std::uint64_t seed);
  void grow(const Graph& g, int start, std::int64_t target0, const std::vector<int>& order, std::uint64_t seed,
            std::vector<std::uint8_t>& part);

  BisectParams params_;
  // Scratch, grown on demand and reused.
  std::vector<double> in_, ex_;
  std::vector<std::uint32_t> locked_;
  std::uint32_t lock_stamp_ = 0;
  std::vector<int> moves_;
  GainHeap heap_[2];
};

// One-off conveniences (tests).
std::vector<std::uint8_t> bisect(const Graph& g, std::int64_t target0, std::uint64_t seed,
                                 const BisectParams& params = {});

}  // namespace canopy::cmap
