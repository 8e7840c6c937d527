// K-way partitioning with exact part sizes: how the canopy policy splits the
// tasks of a tree node among the node's children.
//
// Siblings are equidistant, so the objective is the k-way cut (volume between
// different parts). The split is a recursive multilevel bisection of the
// children list (bisect.hpp) followed by greedy k-way moves between any two
// parts and an exact rebalancing: bisection imposes a halving order that the
// machine does not have, and the k-way moves undo what it cut needlessly.
// Recursive bisection is myopic when the arity is not a power of two
// (12 packages as 6+6 then 3+3 cut a 16x12 grid into strips where 4x4 blocks
// fit), so several groupings of the children can be tried (see split_point)
// and the best k-way cut kept.
//
// (A multilevel k-way scheme, coarsening once and refining k-way at every
// level, was tried: its greedy k-way moves lack the hill climbing of FM and
// it cut 10-20% more than recursive bisection on stencils.)
#pragma once
#include <cstdint>
#include <vector>

#include "mapping/canopy/bisect.hpp"
#include "mapping/canopy/graph.hpp"

namespace canopy::cmap {

struct KwayParams {
  int groupings = 1;      // children groupings tried (1..kGroupingRules, see split_point)
  int refine_passes = 6;  // greedy k-way passes (stop early when nothing moves)
  int first_split_tries = 1;  // top_down.cpp: seeds tried for the first (root) split
  BisectParams bisect;
};

class KwayPartitioner {
 public:
  explicit KwayPartitioner(const KwayParams& params = {}) : params_(params), bisector_(params.bisect) {}

  // part[v] in 0..k-1, part i weighing targets[i] (exactly with unit vertex
  // weights); targets must add up to g.total_vw and be positive.
  std::vector<int> partition(const Graph& g, const std::vector<std::int64_t>& targets, std::uint64_t seed);

  // Parts of `parts` (indices into targets) for the vertices of g by
  // recursive bisection; `rule` picks how each list of parts is halved.
  void recursive_bisection(const Graph& g, const std::vector<int>& parts, const std::vector<std::int64_t>& targets,
                           int rule, int depth, std::uint64_t seed, const std::vector<int>& ids,
                           std::vector<int>& part);

  // Greedy k-way refinement keeping every part within tol of its target.
  void refine(const Graph& g, std::vector<int>& part, const std::vector<std::int64_t>& targets, std::int64_t tol,
                int passes, std::uint64_t seed);

  // Moves vertices from parts over their target to parts under it, least
  // loss first, until every part weighs its target (unit weights) or as
  // close as the vertex weights allow.
  void rebalance(const Graph& g, std::vector<int>& part, const std::vector<std::int64_t>& targets);

  static double cut(const Graph& g, const std::vector<int>& part);

 private:
  KwayParams params_;
  Bisector bisector_;
  std::vector<double> conn_;
  std::vector<int> touched_;
};

// Where recursive bisection splits a list of parts with these sizes, at this
// depth of the recursion: the number of parts that go left. Rules: 0 slot
// sums closest to halves; 1 a power of two of the parts first; 2 about a
// third first; 3 halves at the top, powers of two below (12 = 6+6, 6 = 2+4:
// the split that tiles a 16x12 grid with 4x4 blocks); 4 a power of two at
// the top, halves below.
inline constexpr int kGroupingRules = 5;
std::size_t split_point(const std::vector<std::int64_t>& sizes, int rule, int depth);

}  // namespace canopy::cmap
