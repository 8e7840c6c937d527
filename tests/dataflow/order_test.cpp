// Dependency order: a checker on random task graphs (random_graph.hpp), chains,
// parallelism of independent tasks and of readers, concurrent submitters,
// and submission from outside the runtime. Each with 1, 2 and 5 workers.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <initializer_list>
#include <random>
#include <thread>
#include <vector>

#include "canopy/dataflow.hpp"
#include "random_graph.hpp"
#include "test_util.hpp"

using canopy::Data;
using canopy::Runtime;
using namespace dataflow_test;

namespace {

class DataflowOrder : public ::testing::TestWithParam<int> {
 protected:
  int workers() const { return GetParam(); }
};

// Waits up to ~10 s for `flag`, so that a test of parallelism fails
// instead of hanging when the other task never runs concurrently.
bool wait_for(const std::atomic<int>& flag, int value) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (flag.load() < value)
    if (std::chrono::steady_clock::now() > deadline) return false;
    else std::this_thread::yield();
  return true;
}

// Random graphs (random_graph.hpp) of `tasks` tasks over each handle
// count, submitted from worker 0: every task must see the sequential order.
void check_random_graphs(Runtime& rt, std::int64_t tasks, std::initializer_list<std::size_t> handle_counts,
                         std::uint64_t seed, int width, bool repeats) {
  for (std::size_t handles : handle_counts) {
    Handles h(handles);
    RandomGraph g(handles);
    rt.run([&] {
      make_random_graph(
          g, h, tasks, seed + handles,
          [](std::span<const canopy::Access> acc, auto&& f) { canopy::submit(acc, std::move(f)); }, width, repeats);
      canopy::wait_all();
    });
    EXPECT_EQ(g.errors.load(), 0) << handles << " handles";
    EXPECT_EQ(g.ran.load(), tasks);
  }
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Workers, DataflowOrder, ::testing::ValuesIn(kWorkerCounts),
                         [](const auto& info) { return worker_name(info.param); });

TEST_P(DataflowOrder, RandomGraphsRunAsIfSequential) {
  Runtime rt(options(workers()));
  check_random_graphs(rt, 100'000 / kScaleDown, {4u, 64u}, 12345, 4, false);
}

// Tasks of up to 80 accesses in random order, a handle possibly listed
// several times: past 16 records submit stops inserting in order and sorts
// and merges once (submit.cpp, sort_and_merge).
TEST_P(DataflowOrder, WideTasksInAnyOrderWithRepeats) {
  Runtime rt(options(workers()));
  check_random_graphs(rt, 5'000 / kScaleDown, {24u, 200u}, 99, 80, true);
}

TEST_P(DataflowOrder, RandomGraphFromOutsideTheRuntime) {
  Runtime rt(options(workers()));
  const std::int64_t tasks = 20'000 / kScaleDown;
  Handles h(16);
  RandomGraph g(16);
  // Not a worker: each call enters the runtime (worker 0's slot) and leaves.
  std::mt19937_64 rng(7);
  std::vector<std::int64_t> predicted(16, 0);
  for (std::int64_t t = 0; t < tasks; ++t) {
    const auto i = static_cast<std::uint32_t>(rng() % 16);
    const bool write = rng() % 2;
    const std::int64_t expect = predicted[i];
    if (write) ++predicted[i];
    canopy::submit(rt, {{h[i], write ? canopy::AccessMode::ReadWrite : canopy::AccessMode::Read}}, [&g, i, expect, write] {
      if (g.version[i].load() != expect) ++g.errors;
      if (write) g.version[i].store(expect + 1);
      ++g.ran;
    });
  }
  canopy::wait_all(rt);
  EXPECT_EQ(g.errors.load(), 0);
  EXPECT_EQ(g.ran.load(), tasks);
}

TEST_P(DataflowOrder, ChainOnOneHandleKeepsProgramOrder) {
  Runtime rt(options(workers()));
  Handles h(1);
  std::vector<int> order;
  const int n = 2000;
  rt.run([&] {
    for (int i = 0; i < n; ++i) canopy::submit({canopy::read_write(h[0])}, [&order, i] { order.push_back(i); });
    canopy::wait_all();
  });
  ASSERT_EQ(order.size(), static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ASSERT_EQ(order[i], i);
}

TEST_P(DataflowOrder, WriteAfterReadsWaitsForEveryReader) {
  Runtime rt(options(workers()));
  Handles h(1);
  std::atomic<int> readers_done{0};
  int seen = -1;
  int value = 0;
  rt.run([&] {
    canopy::submit({canopy::write(h[0])}, [&] { value = 1; });
    for (int i = 0; i < 50; ++i)
      canopy::submit({canopy::read(h[0])}, [&] {
        if (value == 1) ++readers_done;
      });
    canopy::submit({canopy::write(h[0])}, [&] {
      seen = readers_done.load();
      value = 2;
    });
    canopy::submit({canopy::read(h[0])}, [&] {
      if (value != 2) seen = -2;
    });
    canopy::wait_all();
  });
  EXPECT_EQ(seen, 50);
}

TEST_P(DataflowOrder, RepeatedHandleInOneTaskIsOneAccess) {
  Runtime rt(options(workers()));
  Handles h(2);
  int x = 0;
  std::vector<int> log;
  rt.run([&] {
    canopy::submit({canopy::read(h[0]), canopy::write(h[0])}, [&] { log.push_back(x++); });
    canopy::submit({canopy::read(h[0]), canopy::read(h[0]), canopy::read(h[1])}, [&] { log.push_back(x * 10); });
    canopy::submit({canopy::write(h[0]), canopy::write(h[0])}, [&] { log.push_back(x++ * 100); });
    canopy::wait_all();
  });
  EXPECT_EQ(log, (std::vector<int>{0, 10, 100}));
}

TEST_P(DataflowOrder, IndependentTasksRunInParallel) {
  if (workers() < 2) GTEST_SKIP() << "needs two workers";
  Runtime rt(options(workers()));
  Handles h(2);
  std::atomic<int> started{0};
  bool a_saw_b = false, b_saw_a = false;
  rt.run([&] {
    canopy::submit({canopy::write(h[0])}, [&] {
      ++started;
      a_saw_b = wait_for(started, 2);
    });
    canopy::submit({canopy::write(h[1])}, [&] {
      ++started;
      b_saw_a = wait_for(started, 2);
    });
    canopy::wait_all();
  });
  EXPECT_TRUE(a_saw_b && b_saw_a);
}

TEST_P(DataflowOrder, ReadersOfOneHandleRunInParallel) {
  if (workers() < 2) GTEST_SKIP() << "needs two workers";
  Runtime rt(options(workers()));
  Handles h(1);
  std::atomic<int> started{0};
  std::atomic<int> ok{0};
  rt.run([&] {
    for (int i = 0; i < 2; ++i)
      canopy::submit({canopy::read(h[0])}, [&] {
        ++started;
        if (wait_for(started, 2)) ++ok;
      });
    canopy::wait_all();
  });
  EXPECT_EQ(ok.load(), 2);
}

TEST_P(DataflowOrder, ConcurrentSubmittersStaySerializable) {
  Runtime rt(options(workers()));
  Handles h(3);
  // Two outside threads each add to a shared counter (read-write on h[2])
  // and keep a private sequence (h[0] or h[1]) in order; the shared handle
  // is listed after or before the private one to mix lock orders.
  long shared = 0;
  std::vector<int> seq[2];
  const int n = 5000 / static_cast<int>(kScaleDown > 1 ? 5 : 1);
  auto submitter = [&](int t) {
    rt.run([&] {
      for (int i = 0; i < n; ++i) {
        auto body = [&shared, &seq, t, i] {
          ++shared;
          seq[t].push_back(i);
        };
        if (t == 0)
          canopy::submit({canopy::read_write(h[0]), canopy::read_write(h[2])}, body);
        else
          canopy::submit({canopy::read_write(h[2]), canopy::read_write(h[1])}, body);
      }
      canopy::wait_all();
    });
  };
  std::thread a(submitter, 0), b(submitter, 1);
  a.join();
  b.join();
  canopy::wait_all(rt);
  EXPECT_EQ(shared, 2L * n);
  for (int t = 0; t < 2; ++t) {
    ASSERT_EQ(seq[t].size(), static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) ASSERT_EQ(seq[t][i], i);
  }
}

TEST_P(DataflowOrder, BigCallablesAndManyAccessesUseTheHeapPath) {
  Runtime rt(options(workers()));
  Handles h(40);
  std::array<char, 600> big{};
  big[599] = 7;
  std::vector<canopy::Access> acc;
  for (std::size_t i = 0; i < h.size(); ++i) acc.push_back(canopy::read_write(h[i]));
  int sum = 0;
  rt.run([&] {
    for (int k = 0; k < 100; ++k)
      canopy::submit(std::span<const canopy::Access>(acc), [big, &sum] { sum += big[599]; });
    canopy::wait_all();
  });
  EXPECT_EQ(sum, 700);
}
