// The cost model on hand-computed examples: hop-bytes, the distance-weighted
// cost with default and user weights, NUMA crossing bytes, tasks per NUMA node.
#include <gtest/gtest.h>

#include "canopy/comm_matrix.hpp"
#include "canopy/cost.hpp"
#include "canopy/error.hpp"
#include "canopy/placement.hpp"
#include "canopy/topology.hpp"

using namespace canopy;

namespace {

// machine > package(+NUMA) > core > PU: 4 levels, PUs 0-3 in package 0.
Topology two_packages() { return Topology::from_synthetic("pack:2 numa:1 core:2 pu:2"); }

CommMatrix four_tasks() {
  return CommMatrix::from_edges(4, {{0, 1, 10}, {0, 2, 5}, {1, 3, 2}, {2, 3, 1}});
}

}  // namespace

TEST(Cost, TopologyOfTheExamples) {
  Topology t = two_packages();
  ASSERT_EQ(t.num_levels(), 4);
  EXPECT_EQ(t.num_numa_nodes(), 2);
  EXPECT_EQ(t.common_level(0, 1), 2);
  EXPECT_EQ(t.common_level(0, 2), 1);
  EXPECT_EQ(t.common_level(0, 4), 0);
}

TEST(Cost, HandComputedDefaultWeights) {
  Topology t = two_packages();
  // Default weights, root first: 2^(3-l) - 1 = 7, 3, 1, 0.
  EXPECT_EQ(default_weights(t), (std::vector<double>{7, 3, 1, 0}));
  // t0 PU0, t1 PU1 (same core), t2 PU2 (same package), t3 PU4 (other package).
  Cost c = evaluate(t, four_tasks(), std::vector<int>{0, 1, 2, 4});
  // hop-bytes: 10*2 + 5*4 + 2*6 + 1*6
  EXPECT_DOUBLE_EQ(c.hop_bytes, 58);
  // weighted: 10*1 + 5*3 + 2*7 + 1*7
  EXPECT_DOUBLE_EQ(c.weighted, 46);
  // (1,3) and (2,3) cross from package 0 to package 1.
  EXPECT_DOUBLE_EQ(c.numa_crossing, 3);
  EXPECT_EQ(c.tasks_per_numa, (std::vector<int>{3, 1}));
}

TEST(Cost, UserWeightsAndSharedPU) {
  Topology t = two_packages();
  // Two tasks on PU 0 (oversubscribed): 0 hops; the PU level's weight applies.
  std::vector<int> pl{0, 0, 1, 5};
  Cost c = evaluate(t, four_tasks(), pl, {100, 10, 2, 0.5});
  // (0,1) same PU: hop 0, w 0.5; (0,2) same core: hop 2, w 2; (1,3) machine: hop 6, w 100; (2,3) machine.
  EXPECT_DOUBLE_EQ(c.hop_bytes, 0 + 5 * 2 + 2 * 6 + 1 * 6);
  EXPECT_DOUBLE_EQ(c.weighted, 10 * 0.5 + 5 * 2 + 2 * 100 + 1 * 100);
  EXPECT_DOUBLE_EQ(c.numa_crossing, 3);
  EXPECT_EQ(c.tasks_per_numa, (std::vector<int>{3, 1}));
  // Three weights: the PU level weighs 0.
  Cost d = evaluate(t, four_tasks(), pl, {100, 10, 2});
  EXPECT_DOUBLE_EQ(d.weighted, 0 + 5 * 2 + 2 * 100 + 1 * 100);
}

TEST(Cost, PlacementOverloadUsesTaskPUs) {
  Topology t = two_packages();
  Placement p;
  p.policy = "manual";
  p.task_pu = {0, 1, 2, 4};
  p.granularity = Granularity::Core;
  EXPECT_DOUBLE_EQ(evaluate(t, four_tasks(), p).weighted, 46);
}

TEST(Cost, EveryEdgeCountedOnce) {
  // A symmetric dense input must not count i-j and j-i twice.
  Topology t = Topology::from_synthetic("core:2 pu:1");
  CommMatrix m = CommMatrix::from_dense({{0, 3}, {3, 0}});
  Cost c = evaluate(t, m, std::vector<int>{0, 1});
  EXPECT_DOUBLE_EQ(c.hop_bytes, 6);
  EXPECT_DOUBLE_EQ(c.weighted, 3);
}

TEST(Cost, BadPlacementsAreErrors) {
  Topology t = two_packages();
  CommMatrix m = four_tasks();
  EXPECT_THROW(evaluate(t, m, std::vector<int>{0, 1, 2}), Error);
  try {
    evaluate(t, m, std::vector<int>{0, 1, 2, 8});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("task 3 is on PU 8"), std::string::npos) << e.what();
  }
  EXPECT_THROW(evaluate(t, m, std::vector<int>{0, 1, 2, -1}), Error);
  EXPECT_THROW(evaluate(t, m, std::vector<int>{0, 1, 2, 3}, {1, 2}), Error);
}
