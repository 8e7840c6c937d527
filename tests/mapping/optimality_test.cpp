// The grouping policies against brute force on small machines: on
// hierarchical block matrices with permuted task ids, where the optimum
// follows the tree, treematch, eagermap and choicemap must reach the optimal
// weighted cost; on random small matrices their ratio to the optimum is
// reported (not asserted: the published algorithms are heuristics).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>

#include "canopy/cost.hpp"
#include "canopy/mapping.hpp"
#include "mapping_test_util.hpp"

using namespace canopy;
using namespace canopy::test;

namespace {

const char* kGrouping[] = {"treematch", "eagermap", "choicemap"};

// Weighted cost of the best placement of m's tasks that fills every PU with
// `per_pu` tasks (all assignments enumerated, up to PU symmetry of the
// tasks on one PU).
double brute_force(const Topology& t, const CommMatrix& m, int per_pu) {
  const int T = m.size();
  const int P = t.num_pus();
  const std::vector<double> w = default_weights(t);
  std::vector<std::vector<double>> cost(P, std::vector<double>(P));
  for (int a = 0; a < P; ++a)
    for (int b = 0; b < P; ++b) cost[a][b] = w[t.common_level(a, b)];
  const std::vector<Edge> edges = m.edges();
  // Slots: PU p repeated per_pu times; permutations of the slot list cover
  // every assignment (duplicates only cost time).
  std::vector<int> slots;
  for (int p = 0; p < P; ++p) slots.insert(slots.end(), per_pu, p);
  EXPECT_EQ(static_cast<int>(slots.size()), T);
  double best = 1e300;
  do {
    double c = 0;
    for (const Edge& e : edges) c += e.weight * cost[slots[e.i]][slots[e.j]];
    best = std::min(best, c);
  } while (std::next_permutation(slots.begin(), slots.end()));
  return best;
}

double policy_cost(const Topology& t, const CommMatrix& m, const std::string& policy) {
  return evaluate(t, m, map_tasks(t, m, policy)).weighted;
}

}  // namespace

TEST(Optimality, HierarchicalBlocksReachTheOptimum) {
  Topology t = Topology::from_synthetic("pack:2 core:2 pu:2");
  const std::vector<std::vector<double>> patterns{{100, 10, 1}, {100, 0, 0}, {50, 20, 0}, {30, 29, 28}, {9, 3, 1}};
  for (const auto& pat : patterns)
    for (unsigned seed : {1u, 2u, 3u, 4u, 5u}) {
      CommMatrix m = permuted(blocks(8, pat), seed);
      const double opt = brute_force(t, m, 1);
      for (const char* p : kGrouping)
        EXPECT_NEAR(policy_cost(t, m, p), opt, 1e-9 * opt)
            << p << " pattern " << pat[0] << "," << pat[1] << "," << pat[2] << " seed " << seed;
    }
}

TEST(Optimality, OversubscribedBlocksReachTheOptimum) {
  // 8 tasks, 2 per PU on 4 PUs: pairs share a PU, pairs of pairs a core.
  Topology t = Topology::from_synthetic("core:2 pu:2");
  for (unsigned seed : {1u, 2u, 3u, 4u}) {
    CommMatrix m = permuted(blocks(8, {100, 10, 1}), seed);
    const double opt = brute_force(t, m, 2);
    for (const char* p : kGrouping) EXPECT_NEAR(policy_cost(t, m, p), opt, 1e-9 * opt) << p << " seed " << seed;
  }
}

TEST(Optimality, NonBinaryTree) {
  // Arity 3 then 2: blocks of 3 tasks (heavy inside) that pair up.
  Topology t = Topology::from_synthetic("pack:2 core:3 pu:1");
  std::vector<Edge> e;
  for (int i = 0; i < 6; ++i)
    for (int j = i + 1; j < 6; ++j) e.push_back({i, j, i / 3 == j / 3 ? 50.0 : 1.0});
  for (unsigned seed : {1u, 2u, 3u}) {
    CommMatrix m = permuted(CommMatrix::from_edges(6, e), seed);
    const double opt = brute_force(t, m, 1);
    for (const char* p : kGrouping) EXPECT_NEAR(policy_cost(t, m, p), opt, 1e-9 * opt) << p << " seed " << seed;
  }
}

TEST(Optimality, RandomSmallCasesReported) {
  Topology t = Topology::from_synthetic("pack:2 core:2 pu:2");
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> d(0, 100);
  std::vector<double> sum(3, 0.0), worst(3, 1.0);
  const int cases = 20;
  for (int k = 0; k < cases; ++k) {
    std::vector<Edge> e;
    for (int i = 0; i < 8; ++i)
      for (int j = i + 1; j < 8; ++j)
        if (int w = d(rng); w > 40) e.push_back({i, j, static_cast<double>(w)});
    CommMatrix m = CommMatrix::from_edges(8, e);
    const double opt = brute_force(t, m, 1);
    for (int p = 0; p < 3; ++p) {
      const double r = policy_cost(t, m, kGrouping[p]) / opt;
      EXPECT_GE(r, 1.0 - 1e-9);  // nothing beats the optimum
      sum[p] += r;
      worst[p] = std::max(worst[p], r);
    }
  }
  for (int p = 0; p < 3; ++p) {
    std::printf("[ report   ] %-9s mean ratio to optimum %.3f, worst %.3f (%d random 8-task cases)\n", kGrouping[p],
                sum[p] / cases, worst[p], cases);
    RecordProperty(std::string(kGrouping[p]) + "_mean_ratio", std::to_string(sum[p] / cases));
  }
}
