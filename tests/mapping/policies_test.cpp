// Every built-in policy on many machines and matrices: the placement is
// valid, fills the slots exactly, keeps every PU under ceil(T/P), uses every
// NUMA node when oversubscribed, spreads or packs under-subscribed jobs, and
// is the same on every run.
#include <gtest/gtest.h>

#include <map>

#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "mapping_test_util.hpp"

using namespace canopy;
using namespace canopy::test;

namespace {

const char* kPolicies[] = {"compact", "scatter", "treematch", "eagermap", "choicemap"};

struct Machine {
  std::string name;
  Topology topo;
};

std::vector<Machine> machines() {
  std::vector<Machine> v;
  v.push_back({"balanced", Topology::from_synthetic("pack:2 numa:2 core:4 pu:2")});
  v.push_back({"unbalanced", Topology::from_synthetic("numa:2 core:3 pu:2").restricted(range(0, 10))});
  v.push_back({"no-smt", Topology::from_synthetic("pack:2 core:4 pu:1")});
  v.push_back({"non-pow2", Topology::from_synthetic("pack:3 numa:1 core:5 pu:3")});
  // KNL-like imbalance: 16 and 17 cores under two NUMA nodes.
  v.push_back({"16+17", Topology::from_synthetic("numa:2 core:17 pu:2").restricted(range(2, 68))});
  return v;
}

std::vector<std::pair<std::string, CommMatrix>> matrices(int n) {
  std::vector<std::pair<std::string, CommMatrix>> v;
  v.push_back({"stencil", stencil2d(n)});
  v.push_back({"permuted", permuted(stencil2d(n))});
  v.push_back({"pipeline", pipeline(n)});
  v.push_back({"random", random_sparse(n)});
  if (n <= 200) v.push_back({"all-to-all", all_to_all(n)});
  v.push_back({"silent", CommMatrix(n)});
  return v;
}

class Policies : public ::testing::TestWithParam<const char*> {};

}  // namespace

TEST_P(Policies, ValidOnEveryMachineAndMatrix) {
  const std::string policy = GetParam();
  for (const Machine& mc : machines()) {
    const int P = mc.topo.num_pus();
    for (int T : {1, 2, P / 2, P - 1, P, P + 1, 3 * P / 2, 2 * P, 3 * P + 1}) {
      if (T < 1) continue;
      for (const auto& [mname, m] : matrices(T)) {
        for (bool pack : {false, true}) {
          SCOPED_TRACE(mc.name + " T=" + std::to_string(T) + " " + mname + (pack ? " pack" : ""));
          MapOptions o;
          o.pack = pack;
          Placement pl = map_tasks(mc.topo, m, policy, o);
          ASSERT_EQ(pl.num_tasks(), T);
          EXPECT_EQ(pl.policy, policy);
          EXPECT_EQ(loads(mc.topo, pl.task_pu), choose_slots(mc.topo, T, o).capacity);
          for (int l : loads(mc.topo, pl.task_pu)) EXPECT_LE(l, ceil_div(T, P));
          if (T >= P) {
            for (int l : numa_loads(mc.topo, pl.task_pu)) EXPECT_GT(l, 0);
          }
        }
      }
    }
  }
}

TEST_P(Policies, KnlLike) {
  const std::string policy = GetParam();
  Topology t = Topology::from_synthetic("numa:4 core:16 pu:4");
  for (int T : {64, 100, 256, 384}) {
    for (const auto& m : {stencil2d(T), permuted(stencil2d(T)), random_sparse(T)}) {
      Placement pl = map_tasks(t, m, policy);
      for (int l : loads(t, pl.task_pu)) EXPECT_LE(l, ceil_div(T, 256));
      std::vector<int> nl = numa_loads(t, pl.task_pu);
      EXPECT_LE(*std::max_element(nl.begin(), nl.end()) - *std::min_element(nl.begin(), nl.end()), 1) << T;
      if (T <= 64) {
        for (int c : core_loads(t, pl.task_pu)) EXPECT_LE(c, 1);
      }
    }
  }
}

TEST_P(Policies, Deterministic) {
  const std::string policy = GetParam();
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");
  for (int T : {12, 32, 48}) {
    CommMatrix m = random_sparse(T, 6, 99);
    Placement a = map_tasks(t, m, policy);
    for (int k = 0; k < 3; ++k) EXPECT_EQ(map_tasks(t, m, policy).task_pu, a.task_pu);
  }
}

TEST_P(Policies, GranularityAndHelpers) {
  const std::string policy = GetParam();
  Topology t = Topology::from_synthetic("pack:2 core:4 pu:2");
  MapOptions o;
  o.granularity = Granularity::Core;
  o.helpers = Helpers::SMT;
  CommMatrix m = stencil2d(8);
  Placement pl = map_tasks(t, m, policy, o);
  EXPECT_EQ(pl.granularity, Granularity::Core);
  ASSERT_EQ(pl.helper_pu.size(), 8u);
  for (int k = 0; k < 8; ++k) {
    EXPECT_NE(pl.helper_pu[k], pl.task_pu[k]);
    EXPECT_EQ(t.pu(pl.helper_pu[k]).core, t.pu(pl.task_pu[k]).core);
    EXPECT_EQ(pl.binding(t, k).size(), 2u);
  }
  EXPECT_THROW(map_tasks(t, stencil2d(9), policy, o), Error);
  // Without helpers, no helper list.
  EXPECT_TRUE(map_tasks(t, m, policy).helper_pu.empty());
}

TEST_P(Policies, BadInput) {
  const std::string policy = GetParam();
  Topology t = Topology::from_synthetic("core:2 pu:1");
  EXPECT_THROW(map_tasks(t, CommMatrix(0), policy), Error);
  MapOptions o;
  o.weights = {1, 2, 3, 4};
  EXPECT_THROW(map_tasks(t, CommMatrix(2), policy, o), Error);
}

INSTANTIATE_TEST_SUITE_P(All, Policies, ::testing::ValuesIn(kPolicies),
                         [](const auto& info) { return std::string(info.param); });

TEST(MapTasks, UnknownPolicy) {
  Topology t = Topology::from_synthetic("core:2 pu:1");
  EXPECT_THROW(map_tasks(t, CommMatrix(2), "nosuch"), Error);
}

TEST(MapTasks, CompactAndScatterOrders) {
  Topology t = Topology::from_synthetic("pack:2 core:2 pu:2");
  CommMatrix m(8);
  EXPECT_EQ(map_tasks(t, m, "compact").task_pu, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  // Round robin over packages, then cores, then PUs (KMP scatter).
  EXPECT_EQ(map_tasks(t, m, "scatter").task_pu, (std::vector<int>{0, 4, 2, 6, 1, 5, 3, 7}));
  // Oversubscribed: a PU holding two slots appears twice in its branch's order.
  CommMatrix m16(16);
  std::vector<int> s = map_tasks(t, m16, "scatter").task_pu;
  EXPECT_EQ(std::vector<int>(s.begin(), s.begin() + 4), (std::vector<int>{0, 4, 2, 6}));
  EXPECT_EQ(loads(t, s), std::vector<int>(8, 2));
  // Fewer tasks: the slots are spread, compact fills them in order.
  EXPECT_EQ(map_tasks(t, CommMatrix(2), "compact").task_pu, (std::vector<int>{0, 4}));
}
