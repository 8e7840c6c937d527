// Helper threads (canopy/helpers.hpp) on synthetic and XML machines: with SMT
// the siblings of the workers' PUs take the helpers, spread before they
// double up; without a free PU helpers share the core with the fewest
// helpers and the choice never fails; register_helper_thread counts each
// helper of a runtime (and binds only a runtime that binds its workers).
#include "canopy/helpers.hpp"

#include <gtest/gtest.h>

#include "canopy/runtime.hpp"
#include "canopy/topology.hpp"
#include "test_util.hpp"

using canopy::choose_helper_pu;
using canopy::Topology;

namespace {

// The logical PUs of the first `n` workers in compact order (one per core first).
std::vector<int> compact_workers(const Topology& t, int n) {
  std::vector<int> order;
  for (std::size_t r = 0; order.size() < static_cast<std::size_t>(t.num_pus()); ++r)
    for (const canopy::CoreInfo& c : t.cores())
      if (r < c.pus.size()) order.push_back(c.pus[r]);
  order.resize(n);
  return order;
}

}  // namespace

TEST(HelperThreads, SmtSiblingsTakeTheHelpersSpreadFirst) {
  const Topology t = Topology::from_synthetic("pack:1 core:4 pu:2");
  const std::vector<int> workers = compact_workers(t, 4);  // PUs 0, 2, 4, 6
  std::vector<int> helpers(t.num_pus(), 0);
  std::vector<int> got;
  for (int k = 0; k < 6; ++k) {
    const canopy::HelperPlacement h = choose_helper_pu(t, workers, helpers);
    EXPECT_FALSE(h.shared);
    ++helpers[h.pu];
    got.push_back(h.pu);
  }
  EXPECT_EQ(got, (std::vector<int>{1, 3, 5, 7, 1, 3}));
}

TEST(HelperThreads, WithoutAFreePuTheLeastLoadedCoreIsShared) {
  const Topology t = Topology::from_synthetic("pack:2 core:2 pu:1");
  const std::vector<int> workers = compact_workers(t, 4);
  std::vector<int> helpers(t.num_pus(), 0);
  std::vector<int> got;
  for (int k = 0; k < 5; ++k) {
    const canopy::HelperPlacement h = choose_helper_pu(t, workers, helpers);
    EXPECT_TRUE(h.shared);
    ++helpers[h.pu];
    got.push_back(h.pu);
  }
  EXPECT_EQ(got, (std::vector<int>{0, 1, 2, 3, 0}));
  // Fewer workers than cores: the idle cores' PUs are free.
  const canopy::HelperPlacement h = choose_helper_pu(t, compact_workers(t, 2), std::vector<int>(4, 0));
  EXPECT_FALSE(h.shared);
  EXPECT_EQ(h.pu, 2);
}

TEST(HelperThreads, XmlMachineWithSmt) {
  const Topology t = Topology::from_xml_file(std::string(CANOPY_TEST_DATA) + "/topologies/two-socket.xml");
  if (t.num_pus() == t.num_cores()) GTEST_SKIP() << "two-socket.xml has no SMT";
  const std::vector<int> workers = compact_workers(t, t.num_cores());
  const canopy::HelperPlacement h = choose_helper_pu(t, workers, {});
  EXPECT_FALSE(h.shared);
  EXPECT_EQ(t.pu(h.pu).core, t.pu(workers[0]).core);  // the first worker's sibling
  EXPECT_NE(h.pu, workers[0]);
}

TEST(HelperThreads, ARuntimeCountsItsHelpers) {
  canopy::Runtime rt(canopy_test::options(2), Topology::from_synthetic("core:2 pu:2"));
  const canopy::HelperPlacement a = canopy::register_helper_thread(rt);
  const canopy::HelperPlacement b = canopy::register_helper_thread(rt);
  EXPECT_FALSE(a.shared);
  EXPECT_EQ(a.pu, 1);
  EXPECT_EQ(b.pu, 3);
  EXPECT_TRUE(a.cpus.empty());  // workers not bound: helpers neither
}
