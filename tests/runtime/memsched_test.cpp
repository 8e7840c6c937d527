// The memory scheduler (src/runtime/memsched.hpp): the decision on
// synthetic domains and page locations (which domain each group gets, which
// handles migrate under a given cost model), and Bubble::split on a
// synthetic two-node runtime with page locations injected
// (data_set_location_for_testing): the groups go to their data's node.
// Real migrations are checked in the NUMA VMs (tests/numa/check/memsched_checks.cpp).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "canopy/bubble.hpp"
#include "canopy/data.hpp"
#include "canopy/runtime.hpp"
#include "canopy/topology.hpp"
#include "runtime/memsched.hpp"
#include "test_util.hpp"

using namespace canopy;
using namespace canopy::detail;

namespace {

constexpr std::size_t kMB = 1 << 20;

// Domains 0 (both nodes), 1 (node 0), 2 (node 1), as a two-node machine's.
const std::vector<std::vector<int>> kTwoNodes = {{0, 1}, {0}, {1}};
// Domains 0 (all), 1..4 (nodes 0..3).
const std::vector<std::vector<int>> kFourNodes = {{0, 1, 2, 3}, {0}, {1}, {2}, {3}};

// A model where a remote read costs twice a local one, a local read 0.1 ns/B
// and a migration 10 us + 0.5 ns/B: migrating 8 MB pays from 6 passes on.
MemModel model() {
  MemModel m;
  m.can_migrate = true;
  m.fixed_ns = 10'000;
  m.migrate_ns_per_byte = 0.5;
  m.read_ns_per_byte = 0.1;
  return m;
}

// Three vectors of `mb` MB, on the given nodes.
MemGroup three(int domain, std::vector<int> nodes, double passes, int num_nodes = 2, std::size_t mb = 8) {
  MemGroup g;
  g.work = 1;
  g.domain = domain;
  g.passes = passes;
  for (int n : nodes) {
    std::vector<std::size_t> per(static_cast<std::size_t>(num_nodes), 0);
    per[static_cast<std::size_t>(n)] = mb * kMB;
    g.handle_bytes.push_back(per);
  }
  return g;
}

TEST(Memsched, Twisted100MovesTheWorkAndNoData) {
  // Phase 2 of Twisted-STREAM on two nodes: each group's three vectors are
  // all on the other node: the groups trade nodes, nothing migrates.
  const MemPlan p = plan_memory(kTwoNodes, {three(1, {1, 1, 1}, 20), three(2, {0, 0, 0}, 20)}, model());
  EXPECT_EQ(p.domain, (std::vector<int>{2, 1}));
  EXPECT_EQ(p.groups_moved, 2);
  EXPECT_TRUE(p.moves.empty());
  EXPECT_EQ(p.attached, 48 * kMB);
  EXPECT_EQ(p.local_before, 0u);
  EXPECT_EQ(p.local_placed, 48 * kMB);
}

TEST(Memsched, Twisted66MovesTheWorkThenTheRemoteThird) {
  // Two of three vectors on the other node: the groups go there, and the
  // one vector left behind migrates (20 passes: worth it).
  const MemPlan p = plan_memory(kTwoNodes, {three(1, {1, 1, 0}, 20), three(2, {0, 0, 1}, 20)}, model());
  EXPECT_EQ(p.domain, (std::vector<int>{2, 1}));
  ASSERT_EQ(p.moves.size(), 2u);
  for (const MemMove& m : p.moves) {
    EXPECT_EQ(m.handle, 2);
    EXPECT_EQ(m.bytes, 8 * kMB);
    EXPECT_EQ(m.node, m.group == 0 ? 1 : 0);
  }
}

TEST(Memsched, WorkThatCannotMoveMigratesOnlyTheRemoteVector) {
  // One group per node, each with one vector on the other node: trading
  // would make things worse (the node is taken by a group of equal work
  // whose data is there): both stay, each migrates its one remote vector.
  const MemPlan p = plan_memory(kTwoNodes, {three(1, {0, 0, 1}, 20), three(2, {1, 1, 0}, 20)}, model());
  EXPECT_EQ(p.domain, (std::vector<int>{1, 2}));
  EXPECT_EQ(p.groups_moved, 0);
  ASSERT_EQ(p.moves.size(), 2u);
  EXPECT_EQ(p.moves[0].handle, 2);
  EXPECT_EQ(p.moves[1].handle, 2);
}

TEST(Memsched, TheModelKeepsDataWhenReadsAreFew) {
  // One pass: moving 8 MB (4.2 ms) costs more than reading it remotely
  // once (0.84 ms): no migration; 5 passes is the break-even, 6 migrates.
  for (double passes : {1.0, 4.0})
    EXPECT_TRUE(plan_memory(kTwoNodes, {three(1, {0, 0, 1}, passes)}, model()).moves.empty()) << passes;
  EXPECT_EQ(plan_memory(kTwoNodes, {three(1, {0, 0, 1}, 6)}, model()).moves.size(), 1u);
  MemModel off = model();
  off.can_migrate = false;
  EXPECT_TRUE(plan_memory(kTwoNodes, {three(1, {0, 0, 1}, 100)}, off).moves.empty());
  // A larger distance makes remote reads dearer: 3 passes suffice at 3x.
  MemModel far = model();
  far.factor = {{1, 3}, {3, 1}};
  EXPECT_EQ(plan_memory(kTwoNodes, {three(1, {0, 0, 1}, 3)}, far).moves.size(), 1u);
}

TEST(Memsched, FourNodesRotatedDataFollowsTheRotation) {
  // Phase 2 on four nodes: group g's data on node g+1: group g goes there.
  std::vector<MemGroup> gs;
  for (int g = 0; g < 4; ++g) gs.push_back(three(1 + g, {(g + 1) % 4, (g + 1) % 4, (g + 1) % 4}, 20, 4));
  const MemPlan p = plan_memory(kFourNodes, gs, model());
  EXPECT_EQ(p.domain, (std::vector<int>{2, 3, 4, 1}));
  EXPECT_TRUE(p.moves.empty());
}

TEST(Memsched, OnlyEqualWorkGroupsTradeDomains) {
  // The heavy group's data is on node 1, where the light one was put: they
  // do not trade (the load per worker would change); the heavy one stays and
  // migrates what the model says, the light one too.
  MemGroup heavy = three(1, {1, 1, 1}, 20);
  heavy.work = 3;
  const MemPlan p = plan_memory(kTwoNodes, {heavy, three(2, {0, 0, 0}, 20)}, model());
  EXPECT_EQ(p.domain, (std::vector<int>{1, 2}));
  EXPECT_EQ(p.moves.size(), 6u);
}

TEST(Memsched, GroupsWithoutDataKeepTheirPlace) {
  MemGroup none;
  none.work = 1;
  none.domain = 1;
  const MemPlan p = plan_memory(kTwoNodes, {none, three(2, {1, 1, 1}, 20)}, model());
  EXPECT_EQ(p.domain, (std::vector<int>{1, 2}));
  EXPECT_EQ(p.groups_moved, 0);
  EXPECT_TRUE(p.moves.empty());
}

TEST(Memsched, SplitSendsEachGroupToItsDataNode) {
  // A synthetic two-node runtime; the handles' pages are said (test seam)
  // to be on node 1 for the first group and node 0 for the second: the
  // first group gets node 1's workers, the second node 0's, and the stats
  // count the phase with 0% -> 100% local. Nothing migrates (this machine
  // has one node; the VMs check real migrations).
  Runtime rt(canopy_test::options(4), Topology::from_synthetic("numa:2 core:2 pu:1"));
  std::vector<Data> d;
  for (int i = 0; i < 4; ++i) d.push_back(data_allocate(1 << 16));
  detail::data_set_location_for_testing(d[0], {0, 1 << 16});
  detail::data_set_location_for_testing(d[1], {0, 1 << 16});
  detail::data_set_location_for_testing(d[2], {1 << 16, 0});
  detail::data_set_location_for_testing(d[3], {1 << 16, 0});
  const MemorySchedulerStats before = memory_scheduler_stats();
  std::vector<std::vector<int>> where;
  rt.run([&] {
    Bubble all(rt);
    std::vector<Bubble> g = all.split({{.work = 1, .data = {d[0], d[1]}}, {.work = 1, .data = {d[2], d[3]}}});
    for (int k = 0; k < 2; ++k) {
      where.push_back(g[k].workers());
      g[k].spawn([] {});
    }
    for (Bubble& b : g) b.wait();
    // Without data, the same split keeps placement by expected work.
    std::vector<Bubble> plain = all.split({{.work = 1}, {.work = 1}});
    EXPECT_EQ(plain[0].workers(), (std::vector<int>{0, 1}));
  });
  const MemorySchedulerStats after = memory_scheduler_stats();
  EXPECT_EQ(where[0], (std::vector<int>{2, 3}));
  EXPECT_EQ(where[1], (std::vector<int>{0, 1}));
  EXPECT_EQ(after.phases - before.phases, 1u);
  EXPECT_EQ(after.groups_moved - before.groups_moved, 2u);
  EXPECT_EQ(after.bytes_attached - before.bytes_attached, 4u << 16);
  EXPECT_EQ(after.bytes_local_before - before.bytes_local_before, 0u);
  EXPECT_EQ(after.bytes_local_after - before.bytes_local_after, 4u << 16);
  EXPECT_EQ(after.bytes_migrated, before.bytes_migrated);
  for (Data x : d) data_free(x);
}

TEST(Memsched, AGroupWithDataIsNotTakenWholeByAnotherNode) {
  // As Bubble.AnIdleSubtreeTakesWholeGroups (node 0 busy, node 1 idle, two
  // groups on node 0), but the groups carry data: node 1 leaves them alone
  // (they would run away from their data), and once node 0 is free every
  // task runs there.
  Runtime rt(canopy_test::options(4), Topology::from_synthetic("numa:2 core:2 pu:1"));
  Data d = data_allocate(1 << 16);
  detail::data_set_location_for_testing(d, {1 << 16, 0});
  constexpr int kTasks = 20;
  std::atomic<bool> blocker_running{false}, release{false};
  std::atomic<int> done{0}, on_node1{0};
  std::uint64_t taken = 0;
  rt.run([&] {
    TaskGroup block;
    block.spawn(Affinity::worker(1, true), [&] {
      blocker_running = true;
      while (!release.load()) std::this_thread::yield();
    });
    while (!blocker_running.load()) std::this_thread::yield();
    Bubble all(rt);
    std::vector<Bubble> g = all.split({{.work = 1, .data = {d}}, {.work = 1, .data = {d}}});
    for (Bubble& b : g) detail::bubble_attach_for_testing(b, {0, 1});
    for (int i = 0; i < kTasks; ++i)
      for (Bubble& b : g)
        b.spawn([&] {
          if (Runtime::this_worker_index() >= 2) on_node1.fetch_add(1);
          done.fetch_add(1);
        });
    // Node 1 idles far longer than the 200 us after which it would take them.
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    EXPECT_EQ(done.load(), 0);
    release = true;
    for (Bubble& b : g) {
      b.wait();
      taken += b.times_taken();
    }
    block.wait();
  });
  EXPECT_EQ(done.load(), 2 * kTasks);
  EXPECT_EQ(on_node1.load(), 0);
  EXPECT_EQ(taken, 0u);
  data_free(d);
}

}  // namespace
