// The arithmetic of placements, independent of this machine: which node each
// page should be on for 1 to 4 nodes, and how a kernel's answer is judged.
#include <gtest/gtest.h>

#include <vector>

#include "canopy/data.hpp"
#include "canopy/error.hpp"
#include "canopy/topology.hpp"

using namespace canopy;

namespace {

constexpr std::size_t kPage = 4096;

TEST(DataPlacementMath, FirstTouchAllowsAnyNode) {
  EXPECT_EQ(data_expected_page_nodes(DataPlacement::first_touch(), 3 * kPage + 1, kPage, 4),
            std::vector<int>(4, kAnyNode));
}

TEST(DataPlacementMath, NodeWrapsModuloTheNodeCount) {
  for (int n = 1; n <= 4; ++n)
    for (int node = 0; node < 9; ++node)
      EXPECT_EQ(data_expected_page_nodes(DataPlacement::on_node(node), 2 * kPage, kPage, n),
                std::vector<int>(2, node % n))
          << n << " nodes, node " << node;
  EXPECT_THROW(data_expected_page_nodes(DataPlacement::on_node(-1), kPage, kPage, 2), Error);
}

TEST(DataPlacementMath, InterleaveIsRoundRobinFromAnyPhase) {
  EXPECT_EQ(data_expected_page_nodes(DataPlacement::interleaved(), 3 * kPage, kPage, 1), std::vector<int>(3, 0));
  EXPECT_EQ(data_expected_page_nodes(DataPlacement::interleaved(), 3 * kPage, kPage, 2),
            std::vector<int>(3, kNextNode));
}

// Block b of a block-cyclic region is on node b mod n; the literal tables
// are the ones a reader can check by hand.
TEST(DataPlacementMath, BlockCyclicTables) {
  auto bc = [](std::size_t block_pages, std::size_t pages, int n) {
    return data_expected_page_nodes(DataPlacement::block_cyclic(block_pages * kPage), pages * kPage, kPage, n);
  };
  EXPECT_EQ(bc(1, 5, 1), (std::vector<int>{0, 0, 0, 0, 0}));
  EXPECT_EQ(bc(1, 5, 2), (std::vector<int>{0, 1, 0, 1, 0}));
  EXPECT_EQ(bc(2, 7, 2), (std::vector<int>{0, 0, 1, 1, 0, 0, 1}));
  EXPECT_EQ(bc(3, 10, 2), (std::vector<int>{0, 0, 0, 1, 1, 1, 0, 0, 0, 1}));
  EXPECT_EQ(bc(1, 7, 3), (std::vector<int>{0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(bc(2, 8, 3), (std::vector<int>{0, 0, 1, 1, 2, 2, 0, 0}));
  EXPECT_EQ(bc(1, 6, 4), (std::vector<int>{0, 1, 2, 3, 0, 1}));
  EXPECT_EQ(bc(3, 13, 4), (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 0}));
}

TEST(DataPlacementMath, BlockCyclicFormulaForEveryShape) {
  for (int n = 1; n <= 4; ++n)
    for (std::size_t block = 1; block <= 3; ++block)
      for (std::size_t pages = 1; pages <= 20; ++pages) {
        // bytes not a whole number of pages: the last page still counts.
        const auto nodes = data_expected_page_nodes(DataPlacement::block_cyclic(block * kPage),
                                                    pages * kPage - 100, kPage, n);
        ASSERT_EQ(nodes.size(), pages);
        for (std::size_t p = 0; p < pages; ++p) ASSERT_EQ(nodes[p], static_cast<int>((p / block) % n));
      }
}

TEST(DataPlacementMath, BadArgumentsAreErrors) {
  EXPECT_THROW(data_expected_page_nodes(DataPlacement::block_cyclic(0), kPage, kPage, 2), Error);
  EXPECT_THROW(data_expected_page_nodes(DataPlacement::block_cyclic(kPage + 1), kPage, kPage, 2), Error);
  EXPECT_THROW(data_expected_page_nodes(DataPlacement::first_touch(), kPage, kPage, 0), Error);
  EXPECT_THROW(data_expected_page_nodes(DataPlacement::first_touch(), kPage, 1000, 1), Error);
  DataPlacement bad;
  bad.kind = static_cast<DataPlacementKind>(17);
  EXPECT_THROW(data_expected_page_nodes(bad, kPage, kPage, 1), Error);
}

TEST(DataPlacementCompare, ExactMatchAndUntouched) {
  const DataPlacementReport r = data_compare_placement({0, 1, 0, 1}, {0, -1, 0, 1}, 2);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(r.pages, 4u);
  EXPECT_EQ(r.untouched, 1u);
  EXPECT_EQ(r.misplaced, 0u);
}

TEST(DataPlacementCompare, MisplacedPagesAreListed) {
  const DataPlacementReport r = data_compare_placement({0, 1, 2, 0, 1, 2}, {0, 0, 2, 0, 1, 1}, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.misplaced, 2u);
  EXPECT_EQ(r.first_misplaced, (std::vector<std::size_t>{1, 5}));
  EXPECT_EQ(r.expected_nodes, (std::vector<int>{1, 2}));
  EXPECT_EQ(r.actual_nodes, (std::vector<int>{0, 1}));
}

TEST(DataPlacementCompare, AtMostEightListed) {
  const DataPlacementReport r = data_compare_placement(std::vector<int>(20, 1), std::vector<int>(20, 0), 2);
  EXPECT_EQ(r.misplaced, 20u);
  EXPECT_EQ(r.first_misplaced.size(), 8u);
}

TEST(DataPlacementCompare, InterleavePhaseComesFromTheFirstTouchedPage) {
  const std::vector<int> want(6, kNextNode);
  EXPECT_TRUE(data_compare_placement(want, {2, 3, 0, 1, 2, 3}, 4).ok());
  EXPECT_TRUE(data_compare_placement(want, {-1, 1, -1, 1, 0, 1}, 2).ok());
  // One stray page counts once: later pages are judged against the phase.
  const DataPlacementReport r = data_compare_placement(want, {1, 0, 0, 0, 1, 0}, 2);
  EXPECT_EQ(r.misplaced, 1u);
  EXPECT_EQ(r.first_misplaced, (std::vector<std::size_t>{2}));
  EXPECT_EQ(r.expected_nodes, (std::vector<int>{1}));
  // All on one node is not interleaved.
  EXPECT_EQ(data_compare_placement(want, std::vector<int>(6, 0), 2).misplaced, 3u);
}

TEST(DataPlacementCompare, AnyNodeMustStillExist) {
  EXPECT_TRUE(data_compare_placement({kAnyNode, kAnyNode}, {0, 1}, 2).ok());
  EXPECT_EQ(data_compare_placement({kAnyNode, kAnyNode}, {0, 5}, 2).misplaced, 1u);
}

TEST(DataPlacementCompare, SizesMustMatch) {
  EXPECT_THROW(data_compare_placement({0, 0}, {0}, 1), Error);
  EXPECT_THROW(data_compare_placement({}, {}, 0), Error);
}

TEST(DataPlacementMath, Names) {
  EXPECT_EQ(to_string(DataPlacement::first_touch()), "first-touch");
  EXPECT_EQ(to_string(DataPlacement::on_node(3)), "node 3");
  EXPECT_EQ(to_string(DataPlacement::interleaved()), "interleaved");
  EXPECT_EQ(to_string(DataPlacement::block_cyclic(8192)), "block-cyclic, blocks of 8192 bytes");
}

}  // namespace

namespace {

// The node counts of real machine shapes, from hwloc synthetic topologies:
// block-cyclic spreads a region's blocks evenly over every node they have.
TEST(DataPlacementMath, BlockCyclicOverSyntheticMachines) {
  for (const char* shape : {"pack:1 core:4 pu:1", "pack:2 numa:1 core:4 pu:2", "pack:1 numa:3 core:2 pu:1",
                            "pack:2 numa:2 core:8 pu:2", "pack:4 numa:2 core:2 pu:1"}) {
    const int n = canopy::Topology::from_synthetic(shape).num_numa_nodes();
    const std::size_t blocks = 10 * static_cast<std::size_t>(n) + 3;
    const auto nodes = data_expected_page_nodes(DataPlacement::block_cyclic(2 * kPage), blocks * 2 * kPage, kPage, n);
    std::vector<std::size_t> pages_on(n);
    for (int node : nodes) {
      ASSERT_GE(node, 0) << shape;
      ASSERT_LT(node, n) << shape;
      ++pages_on[node];
    }
    // Every node gets blocks / n blocks, the first blocks % n one more.
    for (int k = 0; k < n; ++k)
      EXPECT_EQ(pages_on[k], 2 * (blocks / n + (static_cast<std::size_t>(k) < blocks % n ? 1 : 0)))
          << shape << " node " << k;
  }
}

}  // namespace
