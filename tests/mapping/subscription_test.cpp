// Oversubscription (more tasks than PUs) and under-subscription (fewer)
// through every policy: PU loads, NUMA nodes used, communicating tasks
// sharing PUs, one task per core before siblings, spread versus pack.
#include <gtest/gtest.h>

#include "canopy/cost.hpp"
#include "canopy/mapping.hpp"
#include "mapping_test_util.hpp"

using namespace canopy;
using namespace canopy::test;

namespace {

const char* kAll[] = {"compact", "scatter", "treematch", "eagermap", "choicemap"};
const char* kGrouping[] = {"treematch", "eagermap", "choicemap"};

// Volume between tasks that share a PU.
double shared_pu_volume(const CommMatrix& m, const std::vector<int>& task_pu) {
  double v = 0;
  for (const Edge& e : m.edges())
    if (task_pu[e.i] == task_pu[e.j]) v += e.weight;
  return v;
}

}  // namespace

TEST(Oversubscription, LoadsAndNumaNodes) {
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");  // 32 PUs
  for (const char* p : kAll)
    for (int T : {48, 64, 97}) {
      for (const CommMatrix& m : {stencil2d(T), permuted(stencil2d(T)), random_sparse(T)}) {
        Placement pl = map_tasks(t, m, p);
        for (int l : loads(t, pl.task_pu)) {
          EXPECT_LE(l, ceil_div(T, 32)) << p << " T=" << T;
          EXPECT_GE(l, T / 32) << p << " T=" << T;
        }
        std::vector<int> nl = numa_loads(t, pl.task_pu);
        EXPECT_LE(*std::max_element(nl.begin(), nl.end()) - *std::min_element(nl.begin(), nl.end()), 1) << p;
      }
    }
}

TEST(Oversubscription, PairsSharePUs) {
  // 64 tasks in heavy pairs (ids permuted) on 32 PUs: every pair on one PU.
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");
  CommMatrix m = permuted(blocks(64, {100, 0, 0, 0, 0, 0}), 5);
  for (const char* p : kGrouping) {
    Placement pl = map_tasks(t, m, p);
    EXPECT_DOUBLE_EQ(shared_pu_volume(m, pl.task_pu), m.total()) << p;
  }
}

TEST(Oversubscription, CommunicatingTasksShare) {
  // Non-integer factors: the grouping policies put communicating tasks
  // together and beat scatter, which separates neighbours on purpose.
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");
  for (int T : {48, 97}) {
    CommMatrix m = permuted(stencil2d(T), 3);
    const double scatter = evaluate(t, m, map_tasks(t, m, "scatter")).weighted;
    for (const char* p : kGrouping) {
      Placement pl = map_tasks(t, m, p);
      EXPECT_GT(shared_pu_volume(m, pl.task_pu), 0) << p << " T=" << T;
      EXPECT_LT(evaluate(t, m, pl).weighted, scatter) << p << " T=" << T;
    }
  }
}

TEST(Oversubscription, UnbalancedTree) {
  Topology t = Topology::from_synthetic("numa:2 core:3 pu:2").restricted(range(0, 10));
  for (const char* p : kAll)
    for (int T : {15, 20, 31}) {
      Placement pl = map_tasks(t, stencil2d(T), p);
      for (int l : loads(t, pl.task_pu)) EXPECT_LE(l, ceil_div(T, 10)) << p;
      for (int l : numa_loads(t, pl.task_pu)) EXPECT_GT(l, 0) << p;
    }
}

TEST(Undersubscription, SpreadOnePerCoreEvenOverNuma) {
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");
  for (const char* p : kAll)
    for (int T : {4, 8, 12, 16}) {
      Placement pl = map_tasks(t, permuted(stencil2d(T)), p);
      for (int c : core_loads(t, pl.task_pu)) EXPECT_LE(c, 1) << p << " T=" << T;
      for (int l : numa_loads(t, pl.task_pu)) EXPECT_EQ(l, T / 4) << p << " T=" << T;
    }
}

TEST(Undersubscription, PackFewestNumaNodes) {
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");  // 8 PUs per NUMA node
  MapOptions o;
  o.pack = true;
  for (const char* p : kAll)
    for (int T : {3, 8, 9, 16, 20}) {
      Placement pl = map_tasks(t, stencil2d(T), p, o);
      std::vector<int> nl = numa_loads(t, pl.task_pu);
      EXPECT_EQ(std::count_if(nl.begin(), nl.end(), [](int x) { return x > 0; }), ceil_div(T, 8)) << p << T;
      if (T <= 4) {
        for (int c : core_loads(t, pl.task_pu)) EXPECT_LE(c, 1) << p;
      }
    }
}

TEST(Undersubscription, GroupingKeepsNeighboursClose) {
  // Spread: 8 tasks in 4 heavy pairs on 16 cores: pairs share a NUMA node.
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");
  CommMatrix m = permuted(blocks(8, {100, 1, 0}), 9);
  for (const char* p : kGrouping) {
    Placement pl = map_tasks(t, m, p);
    // Two tasks per NUMA node: at best each pair shares one and only the
    // eight weight-1 links between pairs cross.
    EXPECT_DOUBLE_EQ(evaluate(t, m, pl).numa_crossing, 8.0) << p;
  }
}
