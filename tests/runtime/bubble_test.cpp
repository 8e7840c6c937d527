// Bubbles in the runtime (canopy/bubble.hpp, src/runtime/bubbles.cpp), on
// synthetic machines with unbound workers: a group's tasks run on the
// workers of its subtree unless the group was taken whole; an idle subtree
// takes whole groups from a busy one; nested levels; an unhinted bubble is
// a TaskGroup; exceptions; errors.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "canopy/bubble.hpp"
#include "canopy/error.hpp"
#include "canopy/topology.hpp"
#include "test_util.hpp"

using namespace canopy;

namespace {

// Waits for `cond` for up to 20 s; false when it never held.
template <class C>
bool eventually(C cond) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!cond()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::yield();
  }
  return true;
}

void spin_us(int us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

TEST(Bubble, UnhintedBubbleIsATaskGroup) {
  for (int n : canopy_test::kWorkerCounts) {
    Runtime rt(canopy_test::options(n));
    std::atomic<int> ran{0};
    rt.run([&] {
      Bubble b(rt);
      EXPECT_EQ(b.workers().size(), static_cast<std::size_t>(n));
      for (int i = 0; i < 1000; ++i) b.spawn([&] { ran.fetch_add(1); });
      b.wait();
    });
    EXPECT_EQ(ran.load(), 1000) << n << " workers";
  }
}

TEST(Bubble, GroupsRunInTheirSubtree) {
  // Two NUMA nodes of two cores: two equal groups, one per node. Each
  // task notes its worker; a task outside its group's node is allowed only
  // when the group was taken whole by the other node.
  Runtime rt(canopy_test::options(4), Topology::from_synthetic("numa:2 core:2 pu:1"));
  constexpr int kTasks = 300;
  std::vector<std::atomic<int>> outside(2);
  std::vector<std::uint64_t> taken(2);
  std::vector<std::vector<int>> home(2);
  std::atomic<int> ran{0};
  rt.run([&] {
    Bubble all(rt);
    std::vector<Bubble> g = all.split({{.work = 1}, {.work = 1}});
    for (int k = 0; k < 2; ++k) home[k] = g[k].workers();
    for (int i = 0; i < kTasks; ++i)
      for (int k = 0; k < 2; ++k)
        g[k].spawn([&, k] {
          spin_us(20);
          const int me = Runtime::this_worker_index();
          if (me != home[k][0] && me != home[k][1]) outside[k].fetch_add(1);
          ran.fetch_add(1);
        });
    for (int k = 0; k < 2; ++k) {
      g[k].wait();
      taken[k] = g[k].times_taken();
    }
  });
  EXPECT_EQ(ran.load(), 2 * kTasks);
  EXPECT_EQ(home[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(home[1], (std::vector<int>{2, 3}));
  for (int k = 0; k < 2; ++k)
    if (taken[k] == 0) EXPECT_EQ(outside[k].load(), 0) << "group " << k << " was never taken, yet ran elsewhere";
}

TEST(Bubble, AnIdleSubtreeTakesWholeGroups) {
  // Node 0's workers are busy (worker 1 in a long task, worker 0 spinning
  // here without helping); two groups placed on node 0 are taken whole by
  // node 1's idle workers, and all their tasks run there.
  Runtime rt(canopy_test::options(4), Topology::from_synthetic("numa:2 core:2 pu:1"));
  constexpr int kTasks = 50;
  std::atomic<bool> blocker_running{false}, release{false};
  std::atomic<int> done{0}, on_node1{0};
  std::uint64_t taken[2] = {0, 0};
  bool finished = false;
  rt.run([&] {
    TaskGroup block;
    block.spawn(Affinity::worker(1, true), [&] {
      blocker_running = true;
      while (!release.load()) std::this_thread::yield();
    });
    ASSERT_TRUE(eventually([&] { return blocker_running.load(); }));
    Bubble all(rt);
    // Two groups, both attached to node 0 (a test seam: the placement
    // would put one on each node).
    std::vector<Bubble> g = all.split({{.work = 1}, {.work = 1}});
    for (Bubble& b : g) detail::bubble_attach_for_testing(b, {0, 1});
    ASSERT_EQ(g[0].workers(), (std::vector<int>{0, 1}));
    ASSERT_EQ(g[1].workers(), (std::vector<int>{0, 1}));
    for (int i = 0; i < kTasks; ++i)
      for (int k = 0; k < 2; ++k)
        g[k].spawn([&] {
          spin_us(50);
          if (Runtime::this_worker_index() >= 2) on_node1.fetch_add(1);
          done.fetch_add(1);
        });
    finished = eventually([&] { return done.load() == 2 * kTasks; });
    release = true;
    for (int k = 0; k < 2; ++k) {
      g[k].wait();
      taken[k] = g[k].times_taken();
    }
    block.wait();
  });
  ASSERT_TRUE(finished) << done.load() << " of " << 2 * kTasks << " tasks ran";
  EXPECT_EQ(on_node1.load(), 2 * kTasks);
  EXPECT_GE(taken[0], 1u);
  EXPECT_GE(taken[1], 1u);
}

TEST(Bubble, NestedGroupsStayInsideTheirParent) {
  // pack:2 numa:2 core:2: two outer groups (one package each), each split
  // in two (one NUMA node each).
  Runtime rt(canopy_test::options(8), Topology::from_synthetic("pack:2 numa:2 core:2 pu:1"));
  std::atomic<int> ran{0}, stray{0};
  rt.run([&] {
    Bubble all(rt);
    std::vector<Bubble> outer = all.split({{}, {}});
    EXPECT_EQ(outer[0].workers(), (std::vector<int>{0, 1, 2, 3}));
    EXPECT_EQ(outer[1].workers(), (std::vector<int>{4, 5, 6, 7}));
    std::vector<Bubble> inner;
    for (Bubble& o : outer)
      for (Bubble& b : o.split({{.work = 2}, {.work = 2}})) inner.push_back(std::move(b));
    ASSERT_EQ(inner.size(), 4u);
    std::set<std::vector<int>> distinct;
    for (Bubble& b : inner) {
      EXPECT_EQ(b.workers().size(), 2u);
      distinct.insert(b.workers());
    }
    EXPECT_EQ(distinct.size(), 4u);  // one node each
    for (int i = 0; i < 100; ++i)
      for (Bubble& b : inner) {
        const std::vector<int> ws = b.workers();
        Bubble* bp = &b;
        b.spawn([&, ws, bp] {
          const int me = Runtime::this_worker_index();
          if (me != ws[0] && me != ws[1] && bp->times_taken() == 0) stray.fetch_add(1);
          ran.fetch_add(1);
        });
      }
    for (Bubble& b : inner) b.wait();
  });
  EXPECT_EQ(ran.load(), 400);
  EXPECT_EQ(stray.load(), 0);
}

TEST(Bubble, TasksMaySpawnIntoTheirGroup) {
  Runtime rt(canopy_test::options(4), Topology::from_synthetic("numa:2 core:2 pu:1"));
  std::atomic<int> ran{0};
  rt.run([&] {
    Bubble all(rt);
    std::vector<Bubble> g = all.split({{.work = 1}, {.work = 1}});
    Bubble* b0 = &g[0];
    for (int i = 0; i < 20; ++i)
      b0->spawn([&, b0] {
        ran.fetch_add(1);
        for (int j = 0; j < 5; ++j) b0->spawn([&] { ran.fetch_add(1); });
      });
    g[0].wait();
    g[1].wait();
  });
  EXPECT_EQ(ran.load(), 20 * 6);
}

TEST(Bubble, ExceptionsReachWait) {
  Runtime rt(canopy_test::options(4), Topology::from_synthetic("numa:2 core:2 pu:1"));
  rt.run([&] {
    Bubble all(rt);
    std::vector<Bubble> g = all.split({{.work = 1}, {.work = 1}});
    g[1].spawn([] { throw std::runtime_error("from a group"); });
    EXPECT_THROW(g[1].wait(), std::runtime_error);
    g[1].spawn([] {});
    EXPECT_NO_THROW(g[1].wait());
  });
}

TEST(Bubble, OutsideTheRuntimeIsAnError) {
  Runtime rt(canopy_test::options(2));
  EXPECT_THROW(Bubble b(rt), Error);
}

}  // namespace
