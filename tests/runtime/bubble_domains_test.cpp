// Domains of a runtime's workers and the placement of groups on them
// (src/runtime/domains.hpp), on synthetic machines: which subtrees exist,
// each worker's domains, the share of workers a group's expected work asks
// for, and the longest-processing-time placement.
#include <gtest/gtest.h>

#include <numeric>

#include "canopy/topology.hpp"
#include "runtime/domains.hpp"

using namespace canopy;
using namespace canopy::detail;

namespace {

// One worker on the first PU of each core.
std::vector<int> one_per_core(const Topology& t) {
  std::vector<int> out;
  for (const CoreInfo& c : t.cores()) out.push_back(c.pus.front());
  return out;
}

std::vector<int> range(int a, int b) {
  std::vector<int> v(b - a);
  std::iota(v.begin(), v.end(), a);
  return v;
}

TEST(BubbleDomains, TwoPackagesTwoNodesFourCores) {
  const Topology t = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");
  const std::vector<Domain> d = build_domains(t, one_per_core(t));
  // root, 2 packages, 4 NUMA nodes, 16 cores (the PUs below a core have the
  // same single worker: merged into the core).
  ASSERT_EQ(d.size(), 1u + 2 + 4 + 16);
  EXPECT_EQ(d[0].workers, range(0, 16));
  EXPECT_EQ(d[0].children.size(), 2u);
  const Domain& pack1 = d[d[0].children[1]];
  EXPECT_EQ(pack1.workers, range(8, 16));
  EXPECT_EQ(pack1.depth, 1);
  const Domain& numa3 = d[pack1.children[1]];
  EXPECT_EQ(numa3.workers, range(12, 16));
  EXPECT_EQ(numa3.children.size(), 4u);
  for (std::size_t i = 1; i < d.size(); ++i) {
    EXPECT_LT(d[i].parent, static_cast<int>(i));  // parents first
    EXPECT_LT(d[i].workers.size(), d[d[i].parent].workers.size());  // strictly smaller
  }
  const auto of = domains_of_workers(d, 16);
  ASSERT_EQ(of[13].size(), 4u);  // core, NUMA node, package, root
  EXPECT_EQ(d[of[13][0]].workers, std::vector<int>{13});
  EXPECT_EQ(d[of[13][1]].workers, range(12, 16));
  EXPECT_EQ(d[of[13][2]].workers, range(8, 16));
  EXPECT_EQ(of[13][3], 0);
}

TEST(BubbleDomains, SingleChildLevelsMerge) {
  // One package of one NUMA node: the package and node are the root's
  // workers; only the cores are domains below it.
  const Topology t = Topology::from_synthetic("pack:1 numa:1 core:3 pu:1");
  const std::vector<Domain> d = build_domains(t, one_per_core(t));
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].children.size(), 3u);
  // Two workers on one PU share every domain down to that PU.
  const std::vector<Domain> e = build_domains(t, {0, 0, 1});
  ASSERT_EQ(e.size(), 3u);  // root, core 0 (workers 0, 1), core 1 (worker 2)
  EXPECT_EQ(e[1].workers, (std::vector<int>{0, 1}));
}

TEST(BubbleDomains, ShareOfWorkers) {
  EXPECT_EQ(group_share(1, 4, 16), 4);
  EXPECT_EQ(group_share(1, 3, 16), 6);   // 5.33 -> 6
  EXPECT_EQ(group_share(1, 100, 16), 1);  // at least one
  EXPECT_EQ(group_share(5, 4, 16), 16);  // at most all
  EXPECT_EQ(group_share(0, 4, 16), 1);
  EXPECT_EQ(group_share(1, 1, 1), 1);
}

TEST(BubbleDomains, EqualGroupsSpreadOverTheNodes) {
  const Topology t = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");
  const std::vector<Domain> d = build_domains(t, one_per_core(t));
  // Four equal groups: 4 workers each, one per NUMA node.
  const std::vector<int> at = place_groups(d, 0, {1, 1, 1, 1});
  std::vector<std::vector<int>> ws;
  for (int x : at) ws.push_back(d[x].workers);
  // The packages alternate: node 0, node 2 (the other package), node 1, node 3.
  EXPECT_EQ(ws, (std::vector<std::vector<int>>{range(0, 4), range(8, 12), range(4, 8), range(12, 16)}));
  // Two: one package each.
  const std::vector<int> two = place_groups(d, 0, {3, 3});
  EXPECT_EQ(d[two[0]].workers, range(0, 8));
  EXPECT_EQ(d[two[1]].workers, range(8, 16));
  // Eight unknown: 2 workers each, which only a node holds (a core has
  // one): two per node.
  const std::vector<int> eight = place_groups(d, 0, std::vector<double>(8, 0));
  std::vector<int> per_node(4, 0);
  for (int x : eight) {
    ASSERT_EQ(d[x].workers.size(), 4u);
    per_node[d[x].workers[0] / 4]++;
  }
  EXPECT_EQ(per_node, (std::vector<int>{2, 2, 2, 2}));
}

TEST(BubbleDomains, ExpectedWorkBalancesTheGroups) {
  // BT-MZ-like zones of unequal work on two NUMA nodes of 4 cores: each
  // zone's share is below a node, the largest go first on the least loaded
  // domain, and the nodes end with equal work.
  const Topology t = Topology::from_synthetic("numa:2 core:4 pu:1");
  const std::vector<Domain> d = build_domains(t, one_per_core(t));
  const std::vector<double> work = {8, 1, 1, 6, 2, 2, 4, 4};  // total 28
  std::vector<double> load;
  const std::vector<int> at = place_groups(d, 0, work, &load);
  double node0 = 0, node1 = 0;
  for (std::size_t i = 0; i < work.size(); ++i) (d[at[i]].workers[0] < 4 ? node0 : node1) += work[i];
  EXPECT_EQ(node0, 14);
  EXPECT_EQ(node1, 14);
  // The largest (8 of 28 over 8 workers: 2.3 -> 3 workers) needs a whole node.
  EXPECT_EQ(d[at[0]].workers.size(), 4u);
  // The smallest (1 -> 0.29 -> 1 worker) a core.
  EXPECT_EQ(d[at[1]].workers.size(), 1u);
  // The load carried: 28 over 8 workers.
  EXPECT_DOUBLE_EQ(std::accumulate(load.begin(), load.end(), 0.0), 28.0);
}

TEST(BubbleDomains, NestedLevelsStayInTheirParent) {
  const Topology t = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");
  const std::vector<Domain> d = build_domains(t, one_per_core(t));
  const std::vector<int> outer = place_groups(d, 0, {1, 1});
  for (int o : outer) {
    const std::vector<int> inner = place_groups(d, o, {3, 1, 1, 1});
    for (int i : inner) EXPECT_TRUE(domain_within(d, i, o));
    // 3 of 6 over 8 workers = 4: a node; the others 1.33 -> 2 workers: a node too
    // (no smaller domain holds 2), on the other node first (less loaded).
    EXPECT_EQ(d[inner[0]].workers.size(), 4u);
    EXPECT_NE(d[inner[1]].workers, d[inner[0]].workers);
  }
}

TEST(BubbleDomains, EarlierLoadCounts) {
  const Topology t = Topology::from_synthetic("numa:2 core:2 pu:1");
  const std::vector<Domain> d = build_domains(t, one_per_core(t));
  std::vector<double> load;
  const std::vector<int> first = place_groups(d, 0, {1, 1, 1, 1}, &load);  // one core each
  // Then one more group: on a core, any (all equal); then after loading
  // node 0 more, a node-sized group goes to node 1.
  load[0] += 10;
  load[1] += 10;
  const std::vector<int> next = place_groups(d, 0, {1}, &load);  // share 4: the root
  EXPECT_EQ(next[0], 0);
  const std::vector<int> node = place_groups(d, 0, {2, 1, 1}, &load);  // share 2: a node
  EXPECT_EQ(d[node[0]].workers, (std::vector<int>{2, 3}));
  (void)first;
}

}  // namespace
