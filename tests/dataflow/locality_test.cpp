// Locality accounting (per handle, per worker) and where ready tasks go:
// owner computes on a runtime placed on a synthetic machine of two NUMA
// nodes (the handle's location set through the registry's test seam),
// affinity hints, and nothing of it on a runtime of one node.
#include <gtest/gtest.h>

#include <atomic>
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

TEST(DataflowLocality, OwnerComputesQueuesTasksForTheNodeOfTheirData) {
  for (canopy::DataAffinity da : {canopy::DataAffinity::Write, canopy::DataAffinity::None}) {
    Runtime rt = two_node_runtime(da);
    Handles h(20, 4096);
    Handles src(1, 4096);
    for (std::size_t i = 0; i < h.size(); ++i) canopy::detail::data_set_location_for_testing(h[i], {0, 4096});
    canopy::detail::data_set_location_for_testing(src[0], {4096, 0});
    std::atomic<int> ran{0};
    rt.run([&] {
      // From worker 0 (node 0): each task writes data on node 1 and reads
      // data on node 0; the writes decide.
      for (std::size_t i = 0; i < h.size(); ++i)
        canopy::submit({canopy::read(src[0]), canopy::write(h[i])}, [&] { ++ran; });
      canopy::wait_all();
    });
    EXPECT_EQ(ran.load(), 20);
    EXPECT_EQ(hinted(rt), da == canopy::DataAffinity::Write ? 20u : 0u);
  }
}

TEST(DataflowLocality, OwnerComputesByReadsWhenAsked) {
  Runtime rt = two_node_runtime(canopy::DataAffinity::Read);
  Handles h(10, 4096);
  Handles big(1, 1 << 16);
  for (std::size_t i = 0; i < h.size(); ++i) canopy::detail::data_set_location_for_testing(h[i], {4096, 0});
  canopy::detail::data_set_location_for_testing(big[0], {0, 1 << 16});
  rt.run([&] {
    // Reads of node 1 outweigh the writes on node 0 (the submitter's node).
    for (std::size_t i = 0; i < h.size(); ++i) canopy::submit({canopy::read(big[0]), canopy::write(h[i])}, [] {});
    canopy::wait_all();
  });
  EXPECT_EQ(hinted(rt), 10u);
}
