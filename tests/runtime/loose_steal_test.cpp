// When a worker of another NUMA node may take a task hinted (loosely) to a
// worker (affinity.cpp, worker_lends): not because it has been idle for a
// while, only when the target stalls or holds more than its node would
// start soon (node_may_lend). A target that works through its queue at the
// pace its tasks run keeps them; one stuck in a long task gives them up.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "canopy/affinity.hpp"
#include "canopy/runtime.hpp"
#include "canopy/topology.hpp"
#include "test_util.hpp"

using canopy::Affinity;
using canopy::Runtime;
using canopy::TaskGroup;

namespace {

// Two nodes of two workers: workers 0 and 1 on node 0, 2 and 3 on node 1.
Runtime two_nodes() {
  return Runtime(canopy_test::options(4), canopy::Topology::from_synthetic("numa:2 core:2 pu:1"));
}

void busy_us(int us) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < end) {
  }
}

// Holds worker 1 (node 0) in a task of `g` until `release`; returns once
// that task runs.
void hold_worker_1(TaskGroup& g, const std::atomic<bool>& release) {
  std::atomic<bool> started{false};
  g.spawn(Affinity::worker(1, true), [&started, &release] {
    started = true;
    while (!release.load()) std::this_thread::yield();
  });
  while (!started.load()) std::this_thread::yield();
}

// One round: worker 1 is held (only worker 0 of node 0 works) while
// `queue(mine, remote)` spawns tasks for worker 0 into `mine`, whose tasks
// count in `remote` when they run on node 1. Returns that count.
template <class Queue>
int tasks_run_on_the_other_node(Runtime& rt, Queue&& queue) {
  std::atomic<int> remote{0};
  std::atomic<bool> release{false};
  rt.run([&] {
    TaskGroup g;
    hold_worker_1(g, release);
    TaskGroup mine;
    queue(mine, remote);
    mine.wait();
    release = true;
    g.wait();
  });
  return remote.load();
}

// Counts a task that runs off node 0.
void count_if_remote(Runtime& rt, std::atomic<int>& remote) {
  if (rt.worker_numa_node(Runtime::this_worker_index()) != 0) remote.fetch_add(1);
}

}  // namespace

TEST(LooseSteal, ATargetThatKeepsPaceKeepsItsTasks) {
  Runtime rt = two_nodes();
  ASSERT_EQ(rt.worker_numa_node(0), 0);
  ASSERT_EQ(rt.worker_numa_node(2), 1);
  // Ten tasks of 300 us for worker 0 (fewer than its node's surplus of
  // kLendPerWorker per worker): worker 0 takes one every 300 us, so its
  // queue never stalls for the 1 ms the rule asks; the workers of node 1,
  // idle all along, used to take them after 200 us of idleness.
  constexpr int kTasks = 10;
  int on_other_node = 0;
  constexpr int kRounds = 6;
  for (int round = 0; round < kRounds; ++round)
    on_other_node += tasks_run_on_the_other_node(rt, [&](TaskGroup& mine, std::atomic<int>& remote) {
      for (int i = 0; i < kTasks; ++i)
        mine.spawn(Affinity::worker(0), [&] {
          count_if_remote(rt, remote);
          busy_us(300);
        });
    });
  // A loaded machine may deschedule worker 0 for a millisecond now and then
  // (a stall: then a task may go): a few. (Measured on the 2-core
  // development VM under load: 1 of 30 with this rule, 6 and 9 of 30 with
  // the old one, which let idle workers of other nodes take them.)
  EXPECT_LE(on_other_node, kRounds * kTasks / 10) << "tasks of a worker that kept pace went to another node";
}

// A worker busy in a task of 15 ms (or whose CPU the machine gave to another
// thread for as long: a vCPU of the NUMA VMs on a loaded host) has not
// stalled: the tasks queued behind it stay on its node. With the node's
// stall rule alone (16 task times, at least 4 ms) the idle workers of node 1
// took them after 4 ms; a worker's queue now lends on a stall after 50 ms
// only (automatic affinity's lk23 in the 4-node VM: up to 11% of its
// placed tasks went to other nodes).
TEST(LooseSteal, ATargetBusyForAFewMillisecondsKeepsItsTasks) {
  Runtime rt = two_nodes();
  constexpr int kRounds = 3, kShort = 3;
  int on_other_node = 0;
  for (int round = 0; round < kRounds; ++round)
    on_other_node += tasks_run_on_the_other_node(rt, [&](TaskGroup& mine, std::atomic<int>& remote) {
      mine.spawn(Affinity::worker(0), [] { busy_us(15'000); });
      for (int i = 0; i < kShort; ++i) mine.spawn(Affinity::worker(0), [&] { count_if_remote(rt, remote); });
    });
  // (A loaded machine may take worker 0's CPU for 50 ms now and then: one.)
  EXPECT_LE(on_other_node, 1) << "tasks queued behind a 15 ms task went to another node";
}

TEST(LooseSteal, AStalledTargetGivesItsTasksUp) {
  Runtime rt = two_nodes();
  std::atomic<bool> release{false};
  std::atomic<int> done{0};
  rt.run([&] {
    TaskGroup g;
    // Worker 1 (node 0) is held, then worker 0 queues tasks for itself and
    // blocks in a long task of its own: only node 1 can run them.
    hold_worker_1(g, release);
    for (int i = 0; i < 4; ++i) g.spawn(Affinity::worker(0), [&] { done.fetch_add(1); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (done.load() < 4 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    release = true;
    g.wait();
  });
  EXPECT_EQ(done.load(), 4);
}
