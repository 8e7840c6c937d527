// choose_slots: capacities per PU in every regime (oversubscribed, spread,
// pack, helpers smt) on balanced and unbalanced synthetic machines.
#include <gtest/gtest.h>

#include <numeric>

#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "canopy/topology.hpp"
#include "mapping_test_util.hpp"

using namespace canopy;
using canopy::test::ceil_div;
using canopy::test::range;

namespace {

// Tasks per NUMA node / per core implied by capacities.
std::vector<int> per_numa(const Topology& t, const Slots& s) {
  std::vector<int> v(t.num_numa_nodes(), 0);
  for (int p = 0; p < t.num_pus(); ++p) v[t.pu(p).numa] += s.capacity[p];
  return v;
}
std::vector<int> per_core(const Topology& t, const Slots& s) {
  std::vector<int> v(t.num_cores(), 0);
  for (int p = 0; p < t.num_pus(); ++p) v[t.pu(p).core] += s.capacity[p];
  return v;
}
int sum(const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); }
int used(const std::vector<int>& v) { return static_cast<int>(std::count_if(v.begin(), v.end(), [](int x) { return x > 0; })); }

// "numa:2 core:3 pu:2" restricted to 10 PUs: NUMA 0 has 3 cores, NUMA 1 has 2.
Topology unbalanced() { return Topology::from_synthetic("numa:2 core:3 pu:2").restricted(range(0, 10)); }

}  // namespace

TEST(Slots, UnbalancedTopologyShape) {
  Topology t = unbalanced();
  ASSERT_EQ(t.num_pus(), 10);
  ASSERT_EQ(t.num_numa_nodes(), 2);
  EXPECT_EQ(t.numa_node(0).pus.size(), 6u);
  EXPECT_EQ(t.numa_node(1).pus.size(), 4u);
}

TEST(Slots, Oversubscribed) {
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");  // 32 PUs, 4 NUMA
  for (int T : {32, 33, 48, 64, 97}) {
    Slots s = choose_slots(t, T, {});
    EXPECT_EQ(sum(s.capacity), T);
    for (int c : s.capacity) {
      EXPECT_GE(c, T / 32) << T;
      EXPECT_LE(c, ceil_div(T, 32)) << T;
    }
    std::vector<int> n = per_numa(t, s);
    EXPECT_LE(*std::max_element(n.begin(), n.end()) - *std::min_element(n.begin(), n.end()), 1) << T;
  }
  // 1.5 P: every NUMA node gets exactly 12 and every core 3.
  Slots s = choose_slots(t, 48, {});
  EXPECT_EQ(per_numa(t, s), (std::vector<int>{12, 12, 12, 12}));
  for (int c : per_core(t, s)) EXPECT_EQ(c, 3);
}

TEST(Slots, OversubscribedUnbalanced) {
  Topology t = unbalanced();
  Slots s = choose_slots(t, 13, {});  // 3 extras: in proportion 6:4 -> 2:1
  EXPECT_EQ(per_numa(t, s), (std::vector<int>{8, 5}));
  for (int c : s.capacity) EXPECT_TRUE(c == 1 || c == 2);
  s = choose_slots(t, 15, {});  // 5 extras -> 3:2
  EXPECT_EQ(per_numa(t, s), (std::vector<int>{9, 6}));
}

TEST(Slots, SpreadOnePerCoreEvenOverNuma) {
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");  // 16 cores
  for (int T = 1; T <= 16; ++T) {
    Slots s = choose_slots(t, T, {});
    EXPECT_EQ(sum(s.capacity), T);
    for (int c : per_core(t, s)) EXPECT_LE(c, 1) << T;
    for (int p = 0; p < t.num_pus(); ++p)
      if (s.capacity[p]) {
        EXPECT_EQ(t.core(t.pu(p).core).pus.front(), p) << "sibling used with T=" << T;
      }
    std::vector<int> n = per_numa(t, s);
    EXPECT_LE(*std::max_element(n.begin(), n.end()) - *std::min_element(n.begin(), n.end()), 1) << T;
  }
  // Two tasks: one per package.
  Slots s = choose_slots(t, 2, {});
  EXPECT_EQ(per_numa(t, s), (std::vector<int>{1, 0, 1, 0}));
  // Beyond the cores, siblings are used, again spread.
  s = choose_slots(t, 20, {});
  for (int c : per_core(t, s)) EXPECT_GE(c, 1);
  EXPECT_EQ(per_numa(t, s), (std::vector<int>{5, 5, 5, 5}));
}

TEST(Slots, SpreadUnbalanced) {
  Topology t = unbalanced();
  EXPECT_EQ(per_numa(t, choose_slots(t, 2, {})), (std::vector<int>{1, 1}));
  EXPECT_EQ(per_numa(t, choose_slots(t, 4, {})), (std::vector<int>{2, 2}));
  Slots s = choose_slots(t, 5, {});
  for (int c : per_core(t, s)) EXPECT_EQ(c, 1);
  s = choose_slots(t, 7, {});  // 5 cores + 2 siblings, one per NUMA node
  EXPECT_EQ(per_numa(t, s), (std::vector<int>{4, 3}));
}

TEST(Slots, NonPowerOfTwoArities) {
  Topology t = Topology::from_synthetic("pack:3 numa:1 core:5 pu:3");  // 45 PUs, 15 cores
  for (int T : {1, 7, 14, 15, 16, 44, 45, 46, 100}) {
    Slots s = choose_slots(t, T, {});
    EXPECT_EQ(sum(s.capacity), T);
    for (int c : s.capacity) EXPECT_LE(c, ceil_div(T, 45));
    std::vector<int> n = per_numa(t, s);
    EXPECT_LE(*std::max_element(n.begin(), n.end()) - *std::min_element(n.begin(), n.end()), 1) << T;
  }
}

TEST(Slots, PackFewestNumaNodes) {
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");  // 8 PUs per NUMA node
  for (int T = 1; T < 32; ++T) {
    MapOptions o;
    o.pack = true;
    Slots s = choose_slots(t, T, o);
    EXPECT_EQ(sum(s.capacity), T);
    std::vector<int> n = per_numa(t, s);
    EXPECT_EQ(used(n), ceil_div(T, 8)) << T;
    // Inside, one task per core before any sibling.
    int cores_available = 4 * ceil_div(T, 8);
    for (int c : per_core(t, s)) EXPECT_LE(c, T <= cores_available ? 1 : 2);
  }
  MapOptions o;
  o.pack = true;
  Slots s = choose_slots(t, 6, o);
  EXPECT_EQ(per_numa(t, s), (std::vector<int>{6, 0, 0, 0}));
  EXPECT_EQ(per_core(t, s), (std::vector<int>{2, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  s = choose_slots(t, 10, o);
  EXPECT_EQ(per_numa(t, s), (std::vector<int>{6, 4, 0, 0}));
}

TEST(Slots, PackPicksTheNodeThatHoldsAll) {
  // NUMA 0 has 2 cores (4 PUs), NUMA 1 has 3 (6 PUs): 5 tasks fit in NUMA 1 alone.
  Topology t = Topology::from_synthetic("numa:2 core:3 pu:2").restricted({0, 1, 2, 3, 6, 7, 8, 9, 10, 11});
  ASSERT_EQ(t.numa_node(0).pus.size(), 4u);
  MapOptions o;
  o.pack = true;
  EXPECT_EQ(per_numa(t, choose_slots(t, 5, o)), (std::vector<int>{0, 5}));
  EXPECT_EQ(per_numa(t, choose_slots(t, 4, o)), (std::vector<int>{4, 0}));
  EXPECT_EQ(per_numa(t, choose_slots(t, 7, o)), (std::vector<int>{4, 3}));
}

TEST(Slots, HelpersSmt) {
  // Cores: {0,1} {2} {4,5} {6}: two cores have a sibling.
  Topology t = Topology::from_synthetic("core:4 pu:2").restricted({0, 1, 2, 4, 5, 6});
  MapOptions o;
  o.helpers = Helpers::SMT;
  Slots s = choose_slots(t, 2, o);
  EXPECT_EQ(s.capacity[t.pu_by_os_index(0)], 1);
  EXPECT_EQ(s.capacity[t.pu_by_os_index(4)], 1);
  EXPECT_EQ(sum(s.capacity), 2);
  try {
    choose_slots(t, 3, o);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has 2 such cores"), std::string::npos) << e.what();
  }
  Topology nosmt = Topology::from_synthetic("core:4 pu:1");
  EXPECT_THROW(choose_slots(nosmt, 1, o), Error);
}

TEST(Slots, HelpersSmtSpreadAndPack) {
  Topology t = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");
  MapOptions o;
  o.helpers = Helpers::SMT;
  Slots s = choose_slots(t, 8, o);
  EXPECT_EQ(per_numa(t, s), (std::vector<int>{2, 2, 2, 2}));
  for (int c : per_core(t, s)) EXPECT_LE(c, 1);
  o.pack = true;
  s = choose_slots(t, 8, o);
  EXPECT_EQ(per_numa(t, s), (std::vector<int>{4, 4, 0, 0}));
  for (int c : per_core(t, s)) EXPECT_LE(c, 1);
  EXPECT_THROW(choose_slots(t, 17, o), Error);
}

TEST(Slots, BadTaskCounts) {
  Topology t = Topology::from_synthetic("core:2 pu:1");
  EXPECT_THROW(choose_slots(t, 0, {}), Error);
  EXPECT_THROW(choose_slots(t, -3, {}), Error);
}
