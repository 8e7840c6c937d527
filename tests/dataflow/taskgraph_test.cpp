// TaskGraph: a random graph recorded once runs as if sequential on every
// run (the version checker of random_graph.hpp); the dependencies found;
// exceptions cancel only dependents, for one run; hints; bad use. Each with
// 1, 2 and 5 workers.
#include "canopy/taskgraph.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "canopy/error.hpp"
#include "canopy/topology.hpp"
#include "random_graph.hpp"
#include "test_util.hpp"

using canopy::Runtime;
using canopy::TaskGraph;
using namespace dataflow_test;

namespace {

class DataflowTaskGraph : public ::testing::TestWithParam<int> {
 protected:
  int workers() const { return GetParam(); }
};

}  // namespace

INSTANTIATE_TEST_SUITE_P(Workers, DataflowTaskGraph, ::testing::ValuesIn(kWorkerCounts),
                         [](const auto& info) { return worker_name(info.param); });

TEST_P(DataflowTaskGraph, RandomGraphRunsAsIfSequentialOnEveryRun) {
  Runtime rt(options(workers()));
  const std::int64_t tasks = 50'000 / kScaleDown;
  for (std::size_t handles : {4u, 64u}) {
    Handles h(handles);
    RandomGraph v(handles);
    TaskGraph graph;
    make_random_graph(v, h, tasks, 777 + handles,
                      [&graph](std::span<const canopy::Access> acc, auto&& f) { graph.add(acc, std::move(f)); });
    ASSERT_EQ(graph.size(), static_cast<std::size_t>(tasks));
    for (int run = 0; run < 3; ++run) {
      v.reset();
      graph.run(rt);
      EXPECT_EQ(v.errors.load(), 0) << handles << " handles, run " << run;
      EXPECT_EQ(v.ran.load(), tasks) << handles << " handles, run " << run;
    }
  }
}

TEST_P(DataflowTaskGraph, RunsFromInsideATaskAndFromOutside) {
  Runtime rt(options(workers()));
  Handles h(1);
  TaskGraph graph;
  std::vector<int> order;
  for (int i = 0; i < 100; ++i) graph.add({canopy::read_write(h[0])}, [&order, i] { order.push_back(i); });
  graph.run(rt);  // from outside the runtime
  rt.run([&] {
    canopy::TaskGroup g(rt);
    g.spawn([&] { graph.run(rt); });  // from a task: its wait helps
    g.wait();
  });
  ASSERT_EQ(order.size(), 200u);
  for (int i = 0; i < 200; ++i) ASSERT_EQ(order[i], i % 100);
}

TEST(DataflowTaskGraphEdges, FoundOncePerOrderedPair) {
  Handles h(2);
  TaskGraph graph;
  auto nop = [] {};
  graph.add({canopy::write(h[0])}, nop);                            // 0
  graph.add({canopy::read(h[0])}, nop);                             // 1 <- 0
  graph.add({canopy::read(h[0]), canopy::read(h[1])}, nop);         // 2 <- 0
  graph.add({canopy::read(h[0])}, nop);                             // 3 <- 0
  graph.add({canopy::write(h[0]), canopy::read(h[0])}, nop);        // 4 <- 1, 2, 3 (a write: repeats merge)
  graph.add({canopy::write(h[0]), canopy::write(h[1])}, nop);       // 5 <- 4, 2
  graph.add({canopy::read(h[1])}, nop);                             // 6 <- 5
  EXPECT_EQ(graph.size(), 7u);
  EXPECT_EQ(graph.edges(), 1u + 1 + 1 + 3 + 2 + 1);
  TaskGraph empty;
  Runtime rt(options(1));
  empty.run(rt);  // nothing to run
  EXPECT_EQ(empty.edges(), 0u);
}

TEST_P(DataflowTaskGraph, ExceptionCancelsOnlyDependentsForOneRun) {
  Runtime rt(options(workers()));
  Handles h(2);
  TaskGraph graph;
  std::atomic<int> first{0}, dependent{0}, other{0}, after_other{0};
  bool fail = true;
  graph.add({canopy::write(h[0])}, [&] {
    ++first;
    if (fail) throw std::runtime_error("task 0 failed");
  });
  graph.add({canopy::read(h[0])}, [&] { ++dependent; });
  graph.add({canopy::read_write(h[0]), canopy::read(h[1])}, [&] { ++dependent; });  // through the cancelled one
  graph.add({canopy::write(h[1])}, [&] { ++other; });  // after task 2's read of h[1] only
  graph.add({canopy::read(h[1])}, [&] { ++after_other; });
  try {
    graph.run(rt);
    ADD_FAILURE() << "run did not rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "task 0 failed");
  }
  EXPECT_EQ(first.load(), 1);
  EXPECT_EQ(dependent.load(), 0);
  // Task 3 writes h[1] after task 2 (cancelled) read it: it depends on a
  // cancelled task, so it is cancelled too, and so is task 4.
  EXPECT_EQ(other.load(), 0);
  EXPECT_EQ(after_other.load(), 0);
  fail = false;
  graph.run(rt);  // usable again: everything runs
  EXPECT_EQ(first.load(), 2);
  EXPECT_EQ(dependent.load(), 2);
  EXPECT_EQ(other.load(), 1);
  EXPECT_EQ(after_other.load(), 1);
}

TEST_P(DataflowTaskGraph, StrictWorkerHintsRunThere) {
  Runtime rt(options(workers()));
  const int w = workers();
  Handles h(static_cast<std::size_t>(w));
  TaskGraph graph;
  const int per_worker = 50;
  std::vector<std::atomic<int>> wrong(static_cast<std::size_t>(w));
  for (int k = 0; k < per_worker; ++k)
    for (int i = 0; i < w; ++i)
      graph.add({canopy::read_write(h[static_cast<std::size_t>(i)])},
                [&wrong, i] {
                  if (Runtime::this_worker_index() != i) ++wrong[static_cast<std::size_t>(i)];
                },
                canopy::Affinity::worker(i, true));
  graph.run(rt);
  for (int i = 0; i < w; ++i) EXPECT_EQ(wrong[static_cast<std::size_t>(i)].load(), 0) << "worker " << i;
}

TEST(DataflowTaskGraphBadUse, ClearErrorsAndTheCallableIsDestroyed) {
  Handles h(1);
  TaskGraph graph;
  auto token = std::make_shared<int>(0);
  auto expect_error = [&](auto&& add_it, const char* what) {
    try {
      add_it();
      ADD_FAILURE() << "no error for " << what;
    } catch (const canopy::Error& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
    }
    EXPECT_EQ(token.use_count(), 1) << "the callable of a refused add was kept: " << what;
  };
  expect_error([&] { graph.add({canopy::read(canopy::Data{})}, [token] {}); }, "null data handle");
  canopy::Data freed = canopy::data_register(token.get(), sizeof(int));
  canopy::data_free(freed);
  expect_error([&] { graph.add({canopy::read(freed)}, [token] {}); }, "after data_free");
  expect_error([&] { graph.add({{h[0], static_cast<canopy::AccessMode>(7)}}, [token] {}); }, "access mode");
  expect_error([&] { graph.add({canopy::read(h[0])}, [token] {}, canopy::Affinity::near(freed)); },
               "affinity near data");
  {
    Handles many(canopy::kMaxAccesses + 1);
    std::vector<canopy::Access> acc;
    for (std::size_t i = 0; i < many.size(); ++i) acc.push_back(canopy::read(many[i]));
    expect_error([&] { graph.add(std::span<const canopy::Access>(acc), [token] {}); }, "at most");
  }
  EXPECT_EQ(graph.size(), 0u);
  // Adding to, or running, a graph that is running.
  Runtime rt(options(2));
  std::string add_error, run_error;
  graph.add({canopy::write(h[0])}, [&] {
    try {
      graph.add({canopy::read(h[0])}, [] {});
    } catch (const canopy::Error& e) {
      add_error = e.what();
    }
    try {
      graph.run(rt);
    } catch (const canopy::Error& e) {
      run_error = e.what();
    }
  });
  graph.run(rt);
  EXPECT_NE(add_error.find("running"), std::string::npos) << add_error;
  EXPECT_NE(run_error.find("already running"), std::string::npos) << run_error;
  EXPECT_EQ(graph.size(), 1u);
}

TEST(DataflowTaskGraphCallables, BigOnesWorkAndEveryOneIsDestroyedOnce) {
  auto token = std::make_shared<int>(0);
  Handles h(1);
  std::atomic<long> sum{0};
  {
    TaskGraph graph;
    struct Big {
      std::shared_ptr<int> keep;
      std::atomic<long>* sum;
      char pad[40000];
      void operator()() const { sum->fetch_add(1 + pad[0]); }
    };
    for (int i = 0; i < 10; ++i) {
      graph.add({canopy::read_write(h[0])}, [token, &sum] { sum.fetch_add(100); });
      Big b{token, &sum, {}};
      graph.add({canopy::read(h[0])}, b);
    }
    EXPECT_EQ(token.use_count(), 21);  // 20 kept copies and ours
    Runtime rt(options(2));
    graph.run(rt);
    graph.run(rt);
    TaskGraph moved = std::move(graph);
    moved.run(rt);
    EXPECT_THROW(graph.run(rt), canopy::Error);  // NOLINT(bugprone-use-after-move): the error is the point
  }
  EXPECT_EQ(sum.load(), 3 * 10 * 101);
  EXPECT_EQ(token.use_count(), 1);
}

// A replay runs its tasks without the data-flow release path, which is what
// counts a task's bytes for its worker (Runtime::stats, CANOPY_STATS): the
// graph counts them itself. One worker on node 0 of a synthetic two-node
// machine, one handle on each node.
TEST(DataflowTaskGraphStats, ReplaysCountLocalAndRemoteBytes) {
  Runtime rt(options(1), canopy::Topology::from_synthetic("numa:2 core:1 pu:1"));
  Handles h(2, 4096);
  canopy::detail::data_set_location_for_testing(h[0], {0, 4096});  // node 1: remote
  canopy::detail::data_set_location_for_testing(h[1], {4096, 0});  // node 0: local
  TaskGraph g;
  int ran = 0;
  g.add({canopy::read(h[0]), canopy::write(h[1])}, [&] { ++ran; });
  g.add({canopy::read(h[1])}, [&] { ++ran; });
  for (int r = 0; r < 3; ++r) g.run(rt);
  EXPECT_EQ(ran, 6);
  std::uint64_t local = 0, remote = 0;
  for (const canopy::WorkerStats& s : rt.stats()) {
    local += s.bytes_local;
    remote += s.bytes_remote;
  }
  EXPECT_EQ(local, 3u * 2 * 4096);
  EXPECT_EQ(remote, 3u * 4096);
}

// First-touch handles filled by the graph's own tasks have no location
// until someone asks the kernel: with CANOPY_STATS (or automatic affinity)
// the graph asks after its first run, so the following runs' bytes count.
TEST(DataflowTaskGraphStats, FirstTouchHandlesAreLocatedAfterTheFirstRun) {
  canopy::RuntimeOptions o = options(1);
  o.stats = true;
  Runtime rt(o);
  const std::size_t bytes = 2 * canopy::data_page_size();
  canopy::Data d = canopy::data_allocate(bytes);
  EXPECT_LT(canopy::data_home_node(d), 0);  // not touched: nowhere yet
  TaskGraph g;
  char* p = static_cast<char*>(canopy::data_ptr(d));
  g.add({canopy::write(d)}, [p, bytes] {
    for (std::size_t i = 0; i < bytes; i += 64) p[i] = 1;
  });
  g.run(rt);
  EXPECT_GE(canopy::data_home_node(d), 0);  // located
  auto total = [&] {
    std::uint64_t t = 0;
    for (const canopy::WorkerStats& s : rt.stats()) t += s.bytes_local + s.bytes_remote;
    return t;
  };
  const std::uint64_t after_first = total();
  g.run(rt);
  EXPECT_EQ(total() - after_first, bytes);
  canopy::data_free(d);
}
