// The pieces the grouping policies share: graph aggregation and lookups, the
// slot tree's shapes, the typed greedy completion (Filler) and the check
// that catches a policy's invalid grouping.
#include <gtest/gtest.h>

#include <map>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "canopy/topology.hpp"
#include "mapping/graph.hpp"
#include "mapping/grouping.hpp"
#include "mapping/slot_tree.hpp"
#include "mapping_test_util.hpp"

using namespace canopy;
using namespace canopy::grouping;

TEST(Graph, ViewAggregateAndLookups) {
  // Path 0-1-2-3 with weights 1, 2, 3, plus 0-3 weight 4.
  CommMatrix m = CommMatrix::from_edges(4, {{0, 1, 1}, {1, 2, 2}, {2, 3, 3}, {0, 3, 4}});
  Graph g = Graph::view(m);
  EXPECT_EQ(g.size(), 4);
  EXPECT_DOUBLE_EQ(g.rowsum(0), 5);
  EXPECT_DOUBLE_EQ(g.between(0, 3), 4);
  EXPECT_DOUBLE_EQ(g.between(0, 2), 0);
  // Groups {0,1} and {2,3}: 1 and 3 vanish inside, 2 + 4 = 6 between.
  Graph a = g.aggregate({{0, 1}, {2, 3}}, {0, 0, 1, 1});
  ASSERT_EQ(a.size(), 2);
  EXPECT_DOUBLE_EQ(a.between(0, 1), 6);
  EXPECT_DOUBLE_EQ(a.between(1, 0), 6);
  EXPECT_DOUBLE_EQ(a.rowsum(0), 6);
  // Moving keeps the views valid.
  Graph moved = std::move(a);
  EXPECT_DOUBLE_EQ(moved.between(0, 1), 6);
}

TEST(Graph, CompleteRowsLookup) {
  CommMatrix m = canopy::test::all_to_all(7);
  Graph g = Graph::view(m);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j)
      if (i != j) {
        EXPECT_DOUBLE_EQ(g.between(i, j), m.at(i, j));
      }
}

TEST(SlotTree, ShapesFollowSubtrees) {
  // NUMA 0: 3 cores, NUMA 1: 2 cores; 7 tasks: 5 cores + 2 siblings.
  Topology t = Topology::from_synthetic("numa:2 core:3 pu:2").restricted(canopy::test::range(0, 10));
  Slots s = choose_slots(t, 7, {});
  SlotTree st = build_slot_tree(t, s);
  EXPECT_EQ(st.nodes[0].tasks, 7);
  ASSERT_EQ(st.levels[1].size(), 2u);
  // The two NUMA nodes hold 4 and 3 tasks: different shapes.
  EXPECT_NE(st.nodes[st.levels[1][0]].shape, st.nodes[st.levels[1][1]].shape);
  // Cores with 2 used PUs share a shape, cores with 1 share another.
  std::map<int, int> by_tasks;
  for (int v : st.levels[2]) {
    auto [it, fresh] = by_tasks.emplace(st.nodes[v].tasks, st.nodes[v].shape);
    EXPECT_EQ(it->second, st.nodes[v].shape);
  }
  EXPECT_EQ(by_tasks.size(), 2u);
  // Leaves: only PUs with slots, each with its PU.
  int tasks = 0;
  for (int v : st.levels[3]) {
    EXPECT_GE(st.nodes[v].pu, 0);
    EXPECT_EQ(st.nodes[v].tasks, s.capacity[st.nodes[v].pu]);
    tasks += st.nodes[v].tasks;
  }
  EXPECT_EQ(tasks, 7);
}

TEST(Filler, TypedCompositionsAlwaysComplete) {
  // 9 entities, 6 of type 1 and 3 of type 2, into 3 groups of {1, 1, 2}.
  std::vector<Edge> e;
  for (int i = 0; i + 1 < 9; ++i) e.push_back({i, i + 1, static_cast<double>(i + 1)});
  CommMatrix m = CommMatrix::from_edges(9, e);
  Graph g = Graph::view(m);
  std::vector<int> type{1, 1, 2, 1, 1, 2, 1, 1, 2};
  Problem p{g, type, {{{{1, 2}, {2, 1}}, 3, 3, 7}}};
  Filler f(p);
  Grouping out = f.finish({}, {8, 7, 6, 5, 4, 3, 2, 1, 0});
  EXPECT_NO_THROW(check_grouping(p, out));
  ASSERT_EQ(out.groups.size(), 3u);
  // The first group starts at 8 and takes its heaviest needed neighbours: 7 (type 1), then 6.
  EXPECT_EQ(out.groups[0], (std::vector<int>{8, 7, 6}));
}

TEST(Filler, MixedSizes) {
  // Compositions {t:2} x2 and {t:1} x2 over 6 entities; seeds as given.
  CommMatrix m = canopy::test::pipeline(6);
  Graph g = Graph::view(m);
  std::vector<int> type(6, 0);
  Problem p{g, type, {{{{0, 2}}, 2, 2, 5}, {{{0, 1}}, 1, 2, 6}}};
  Filler f(p);
  Grouping out = f.finish({{4}}, {0, 1, 2, 3, 4, 5});
  EXPECT_NO_THROW(check_grouping(p, out));
  EXPECT_EQ(out.groups.size(), 4u);
}

TEST(Grouping, CheckCatchesBadGroupings) {
  CommMatrix m(4);
  Graph g = Graph::view(m);
  std::vector<int> type(4, 0);
  Problem p{g, type, {{{{0, 2}}, 2, 2, 3}}};
  EXPECT_NO_THROW(check_grouping(p, {{{0, 1}, {2, 3}}, {0, 0}}));
  EXPECT_THROW(check_grouping(p, {{{0, 1}, {1, 2}}, {0, 0}}), Error);        // 1 twice, 3 missing
  EXPECT_THROW(check_grouping(p, {{{0, 1, 2}, {3}}, {0, 0}}), Error);        // wrong sizes
  EXPECT_THROW(check_grouping(p, {{{0, 1}}, {0}}), Error);                   // too few groups
  EXPECT_THROW(check_grouping(p, {{{0, 1}, {2, 3}}, {0, 1}}), Error);        // no such composition
}
