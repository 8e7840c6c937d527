// Locality accounting (per handle, per worker) and where ready tasks run:
// owner computes on a runtime placed on a synthetic machine of two NUMA
// nodes (the handle's location set through the registry's test seam; each
// task records the node of the worker that ran it), affinity hints, and
// nothing of it on a runtime of one node.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "canopy/dataflow.hpp"
#include "canopy/topology.hpp"
#include "test_util.hpp"

using canopy::Data;
using canopy::Runtime;
using namespace dataflow_test;

namespace {

std::uint64_t hinted(const Runtime& rt) {
  std::uint64_t n = 0;
  for (const canopy::WorkerStats& s : rt.stats()) n += s.hinted_here + s.hinted_away;
  return n;
}

struct Totals {
  std::uint64_t local = 0, remote = 0;
};
Totals worker_bytes(const Runtime& rt) {
  Totals t;
  for (const canopy::WorkerStats& s : rt.stats()) {
    t.local += s.bytes_local;
    t.remote += s.bytes_remote;
  }
  return t;
}

// Two NUMA nodes, one core each: worker 0 on node 0, worker 1 on node 1.
Runtime two_node_runtime(canopy::DataAffinity da) {
  canopy::RuntimeOptions o = options(2);
  o.data_affinity = da;
  return Runtime(o, canopy::Topology::from_synthetic("numa:2 core:1 pu:1"));
}

// Two NUMA nodes of two cores: workers 0, 1 on node 0, workers 2, 3 on node 1.
Runtime two_by_two_runtime(canopy::DataAffinity da) {
  canopy::RuntimeOptions o = options(4);
  o.data_affinity = da;
  return Runtime(o, canopy::Topology::from_synthetic("numa:2 core:2 pu:1"));
}

void spin_for(std::chrono::microseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  while (std::chrono::steady_clock::now() < end) {
  }
}

// Worker 0 (this thread) submits `total` tasks; task i writes a 4 KiB
// handle on node i % 2 and reads a 64 KiB handle on the other node, and
// records the NUMA node of the worker running it. At most 8 are queued or
// running at a time, and each takes 1 ms: no node has a surplus to lend
// and each takes its tasks far faster than a stall (docs/runtime.md), so
// the other node's idle workers may not take them. Worker 0 only feeds
// (it runs none until the last wait). Checks that each handle's locality
// counts agree with where its task ran; returns how many ran on the node
// of their writes.
int run_owner_computes(Runtime& rt, int total) {
  constexpr std::size_t kWrite = 4096, kRead = 1 << 16;
  Handles out(static_cast<std::size_t>(total), kWrite);
  Handles in(2, kRead);
  for (int i = 0; i < total; ++i)
    canopy::detail::data_set_location_for_testing(out[i], i % 2 ? std::vector<std::size_t>{0, kWrite}
                                                                 : std::vector<std::size_t>{kWrite, 0});
  canopy::detail::data_set_location_for_testing(in[0], {kRead, 0});
  canopy::detail::data_set_location_for_testing(in[1], {0, kRead});
  std::vector<int> node(static_cast<std::size_t>(total), -1);
  std::atomic<int> done{0};
  rt.run([&] {
    for (int i = 0; i < total; ++i) {
      while (i - done.load() >= 8) std::this_thread::yield();
      canopy::submit({canopy::read(in[1 - i % 2]), canopy::write(out[i])}, [&, i] {
        node[i] = rt.worker_numa_node(Runtime::this_worker_index());
        spin_for(std::chrono::microseconds(1000));
        done.fetch_add(1);
      });
    }
    canopy::wait_all();
  });
  int on_write_node = 0;
  for (int i = 0; i < total; ++i) {
    EXPECT_TRUE(node[i] == 0 || node[i] == 1) << "task " << i << " ran on node " << node[i];
    const bool local = node[i] == i % 2;
    on_write_node += local;
    const canopy::DataLocality l = canopy::data_locality(out[i]);
    EXPECT_EQ(l.local_bytes, local ? kWrite : 0) << "task " << i << " ran on node " << node[i];
    EXPECT_EQ(l.remote_bytes, local ? 0 : kWrite) << "task " << i << " ran on node " << node[i];
  }
  return on_write_node;
}

}  // namespace

TEST(DataflowLocality, PerHandleTotalsCountEveryAccess) {
  Runtime rt(options(2));
  Handles h(2, 4096);
  canopy::detail::data_set_location_for_testing(h[0], {4096});
  canopy::detail::data_set_location_for_testing(h[1], {4096});
  rt.run([&] {
    for (int i = 0; i < 10; ++i) canopy::submit({canopy::read(h[0]), canopy::write(h[1])}, [] {});
    canopy::submit({canopy::read_write(h[1])}, [] {});
    canopy::wait_all();
  });
  const canopy::DataLocality a = canopy::data_locality(h[0]);
  const canopy::DataLocality b = canopy::data_locality(h[1]);
  EXPECT_EQ(a.accesses, 10u);
  EXPECT_EQ(b.accesses, 11u);
  // One node: every byte is local.
  EXPECT_EQ(a.local_bytes, 10u * 4096);
  EXPECT_EQ(b.local_bytes, 11u * 4096);
  EXPECT_EQ(a.remote_bytes + b.remote_bytes, 0u);
  EXPECT_EQ(worker_bytes(rt).local, 21u * 4096);
  EXPECT_EQ(hinted(rt), 0u);  // one node: owner computes costs nothing, queues nothing
}

TEST(DataflowLocality, ANewHandleInAFreedSlotStartsFromZero) {
  Runtime rt(options(1));
  char buf[64];
  const Data d = canopy::data_register(buf, sizeof buf);
  rt.run([&] {
    canopy::submit({canopy::write(d)}, [] {});
    canopy::wait_all();
  });
  EXPECT_EQ(canopy::data_locality(d).accesses, 1u);
  canopy::data_free(d);
  const Data again = canopy::data_register(buf, sizeof buf);
  EXPECT_EQ(canopy::data_locality(again).accesses, 0u);
  rt.run([&] {
    canopy::submit({canopy::read(again)}, [] {});
    canopy::wait_all();
  });
  EXPECT_EQ(canopy::data_locality(again).accesses, 1u);
  canopy::data_free(again);
}

TEST(DataflowLocality, ChildrenCountInTheHandlesTotals) {
  Runtime rt(options(2));
  Handles h(2, 128);
  canopy::detail::data_set_location_for_testing(h[1], {128});
  rt.run([&] {
    canopy::submit({canopy::write(h[0])}, [&] {
      for (int i = 0; i < 5; ++i) canopy::submit({canopy::read(h[1])}, [] {});
    });
    canopy::wait_all();
  });
  EXPECT_EQ(canopy::data_locality(h[1]).accesses, 5u);
  EXPECT_EQ(canopy::data_locality(h[1]).local_bytes, 5u * 128);
}

TEST(DataflowLocality, StrictHintsDecideAndAreCountedLocalOrRemote) {
  Runtime rt = two_node_runtime(canopy::DataAffinity::Write);
  ASSERT_EQ(rt.num_numa_nodes(), 2);
  Handles h(1, 4096);
  canopy::detail::data_set_location_for_testing(h[0], {0, 4096});  // on node 1
  std::vector<int> where;
  rt.run([&] {
    for (int i = 0; i < 10; ++i)
      canopy::submit({canopy::read_write(h[0])}, [&] { where.push_back(Runtime::this_worker_index()); },
                     canopy::Affinity::node(i % 2, /*strict=*/true));
    canopy::wait_all();
  });
  ASSERT_EQ(where.size(), 10u);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(where[i], i % 2) << i;
  const canopy::DataLocality l = canopy::data_locality(h[0]);
  EXPECT_EQ(l.local_bytes, 5u * 4096);
  EXPECT_EQ(l.remote_bytes, 5u * 4096);
  EXPECT_EQ(worker_bytes(rt).local, 5u * 4096);
  EXPECT_EQ(worker_bytes(rt).remote, 5u * 4096);
}

// Owner computes, checked by where each task ran (the worker's NUMA node,
// recorded inside the task), not by the hints it was given. Each task
// writes 4 KiB on one node and reads 64 KiB on the other: by the writes
// (the default) it belongs on the first node, by the reads on the second,
// and with affinity off anywhere (then about half of the tasks run on the
// node of their writes, whichever worker steals them).
TEST(DataflowLocality, OwnerComputesRunsTasksOnTheNodeOfTheirData) {
  constexpr int kTotal = 40;
  for (canopy::DataAffinity da : {canopy::DataAffinity::Write, canopy::DataAffinity::Read, canopy::DataAffinity::None}) {
    SCOPED_TRACE(canopy::to_string(da));
    Runtime rt = two_by_two_runtime(da);
    ASSERT_EQ(rt.worker_numa_node(1), 0);
    ASSERT_EQ(rt.worker_numa_node(2), 1);
    // Timing-based on a shared machine (a preempted worker stalls its node
    // and lets the other node take its tasks): up to five attempts; the
    // best one counts for the owner-computes rules, the worst for none.
    // Measured at load 10-14, four test processes at once: write and read
    // 36-40 of 40 on the first attempt; none 16-22. Under ThreadSanitizer
    // at load 14-18: 35-40 (2 of 8 runs needed a second attempt); none
    // 19-24.
    const bool none = da == canopy::DataAffinity::None;
    int counted = none ? kTotal : 0, attempts = 0;
    while (attempts < 5) {
      ++attempts;
      const int on_write_node = run_owner_computes(rt, kTotal);
      const int on_wanted = da == canopy::DataAffinity::Read ? kTotal - on_write_node : on_write_node;
      counted = none ? std::min(counted, on_wanted) : std::max(counted, on_wanted);
      if (none ? counted <= kTotal * 7 / 10 : counted >= kTotal * 8 / 10) break;
    }
    std::printf("[ locality ] data affinity %s: %d of %d tasks ran on the node %s (%d attempt(s))\n",
                canopy::to_string(da).c_str(), counted, kTotal, none ? "of their writes" : "the rule chose",
                attempts);
    if (none)
      EXPECT_LE(counted, kTotal * 7 / 10) << counted << " of " << kTotal << " ran on the node of their writes";
    else
      EXPECT_GE(counted, kTotal * 8 / 10) << counted << " of " << kTotal << " ran on the node the rule chose";
  }
}
