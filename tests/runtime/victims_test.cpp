// Victim lists built from the topology tree, on synthetic machines: closest
// first (same core, same NUMA node / L3, same package, machine), each group
// with its statistics class.
#include "runtime/victims.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "canopy/detail/worker.hpp"
#include "canopy/topology.hpp"

using canopy::Topology;
using canopy::detail::build_victim_lists;
using canopy::detail::VictimList;

namespace {

std::vector<std::set<int>> groups(const VictimList& l) {
  std::vector<std::set<int>> out;
  int begin = 0;
  for (int end : l.group_end) {
    out.emplace_back(l.workers.begin() + begin, l.workers.begin() + end);
    begin = end;
  }
  return out;
}

std::vector<int> iota(int n) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i;
  return v;
}

}  // namespace

TEST(Victims, TwoPackagesTwoNumaSmt) {
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:2 pu:2");
  auto lists = build_victim_lists(t, iota(16));  // one worker per PU
  ASSERT_EQ(lists.size(), 16u);
  auto g = groups(lists[0]);
  ASSERT_EQ(g.size(), 4u);
  EXPECT_EQ(g[0], (std::set<int>{1}));                        // same core
  EXPECT_EQ(g[1], (std::set<int>{2, 3}));                     // same NUMA node
  EXPECT_EQ(g[2], (std::set<int>{4, 5, 6, 7}));               // same package
  EXPECT_EQ(g[3], (std::set<int>{8, 9, 10, 11, 12, 13, 14, 15}));  // machine
  EXPECT_EQ(lists[0].group_class,
            (std::vector<std::uint8_t>{canopy::detail::kStealSameCore, canopy::detail::kStealSameNuma,
                                       canopy::detail::kStealRemote, canopy::detail::kStealRemote}));
  // A worker in the middle: its own neighbours first.
  auto g13 = groups(lists[13]);
  EXPECT_EQ(g13[0], (std::set<int>{12}));
  EXPECT_EQ(g13[1], (std::set<int>{14, 15}));
  EXPECT_EQ(g13[2], (std::set<int>{8, 9, 10, 11}));
  EXPECT_EQ(g13[3], (std::set<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  // Every list holds every other worker exactly once.
  for (int i = 0; i < 16; ++i) {
    std::vector<int> w = lists[i].workers;
    std::sort(w.begin(), w.end());
    std::vector<int> expect;
    for (int j = 0; j < 16; ++j)
      if (j != i) expect.push_back(j);
    EXPECT_EQ(w, expect);
    EXPECT_TRUE(std::is_sorted(lists[i].group_level.rbegin(), lists[i].group_level.rend()));
  }
}

TEST(Victims, SharedL3BeforeOtherL3OfTheSameNumaNode) {
  // EPYC-like: one NUMA node, two L3 (CCX) of 2 cores each, no SMT.
  Topology t = Topology::from_synthetic("numa:1 l3:2 core:2 pu:1");
  auto lists = build_victim_lists(t, iota(4));
  auto g = groups(lists[0]);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0], (std::set<int>{1}));     // same L3
  EXPECT_EQ(g[1], (std::set<int>{2, 3}));  // other L3, same NUMA node
  EXPECT_EQ(lists[0].group_class[0], canopy::detail::kStealSameNuma);
  EXPECT_EQ(lists[0].group_class[1], canopy::detail::kStealSameNuma);
}

TEST(Victims, WorkersOnTheSubsetOfPusTheyWereGiven) {
  // Workers on PUs 0, 2, 8, 9 of "pack:2 core:4 pu:2": 0 and 2 share a
  // package, 8 and 9 share a core.
  Topology t = Topology::from_synthetic("pack:2 core:4 pu:2");
  auto lists = build_victim_lists(t, {0, 2, 8, 9});
  EXPECT_EQ(groups(lists[0]), (std::vector<std::set<int>>{{1}, {2, 3}}));
  EXPECT_EQ(groups(lists[2]), (std::vector<std::set<int>>{{3}, {0, 1}}));
  EXPECT_EQ(lists[2].group_class[0], canopy::detail::kStealSameCore);
  EXPECT_EQ(lists[2].group_class[1], canopy::detail::kStealSameNuma);  // one NUMA node
}

TEST(Victims, MoreWorkersThanPus) {
  // 5 workers on 2 PUs (wrapped): workers sharing a PU are closest.
  Topology t = Topology::from_synthetic("core:2 pu:1");
  auto lists = build_victim_lists(t, {0, 1, 0, 1, 0});
  EXPECT_EQ(groups(lists[0]), (std::vector<std::set<int>>{{2, 4}, {1, 3}}));
  EXPECT_EQ(groups(lists[1]), (std::vector<std::set<int>>{{3}, {0, 2, 4}}));
  EXPECT_EQ(lists[0].group_class[0], canopy::detail::kStealSameCore);
}

TEST(Victims, OneWorkerHasNoVictims) {
  Topology t = Topology::from_synthetic("core:4 pu:2");
  auto lists = build_victim_lists(t, {3});
  ASSERT_EQ(lists.size(), 1u);
  EXPECT_TRUE(lists[0].workers.empty());
  EXPECT_TRUE(lists[0].group_end.empty());
}

TEST(Victims, NeighboursStartAtDifferentVictims) {
  // Inside a group, worker i's list starts after i: not everyone hammers
  // the same first victim.
  Topology t = Topology::from_synthetic("numa:1 core:8 pu:1");
  auto lists = build_victim_lists(t, iota(8));
  EXPECT_EQ(lists[0].workers.front(), 1);
  EXPECT_EQ(lists[3].workers.front(), 4);
  EXPECT_EQ(lists[7].workers.front(), 0);
}
