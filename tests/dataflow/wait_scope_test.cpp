// What the waits without a runtime cover (issue 19): wait_all() and
// wait(Data) called after submit(rt, ...) to an explicit runtime wait for
// those tasks (they used to wait on the default runtime and return at once,
// leaving every result stale); a data-flow task that submits to another
// runtime waits for those tasks with its own wait_all(); data_free waits for
// the tasks of any runtime that still use the handle (and refuses, inside a
// task, what it cannot wait for). Each with 1, 2 and 5 workers, repeated to
// catch the race; tests/capi/capi_dataflow_test.cpp has the C equivalents.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "canopy/dataflow.hpp"
#include "canopy/error.hpp"
#include "random_graph.hpp"
#include "test_util.hpp"

using canopy::Data;
using canopy::Runtime;
using namespace dataflow_test;

namespace {

class DataflowWaitScope : public ::testing::TestWithParam<int> {
 protected:
  int workers() const { return GetParam(); }
};

// The issue's check, smaller and repeated: a random graph submitted from
// outside any runtime to an explicit one, then the no-argument wait. With
// `hinted`, every task carries an affinity hint for worker 0, which keeps it
// off the one-worker inline path: queued there, it runs only when a thread
// waits in that runtime (so 1 worker is checked too).
void random_graph_then_plain_wait(Runtime& rt, bool hinted, int rounds, std::int64_t tasks) {
  for (int round = 0; round < rounds; ++round) {
    Handles h(64);
    RandomGraph g(64);
    make_random_graph(g, h, tasks, 1000 + round, [&](std::span<const canopy::Access> acc, auto&& f) {
      canopy::submit(rt, acc, std::move(f), hinted ? canopy::Affinity::worker(0) : canopy::Affinity{});
    });
    canopy::wait_all();
    ASSERT_EQ(g.ran.load(), tasks) << "round " << round << ": wait_all() returned before the tasks of rt ran";
    ASSERT_EQ(g.errors.load(), 0) << "round " << round;
  }
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Workers, DataflowWaitScope, ::testing::ValuesIn(kWorkerCounts),
                         [](const auto& info) { return worker_name(info.param); });

TEST_P(DataflowWaitScope, PlainWaitAllWaitsForAnExplicitRuntime) {
  Runtime rt(options(workers()));
  random_graph_then_plain_wait(rt, false, 30, 4'000 / kScaleDown);
}

TEST_P(DataflowWaitScope, PlainWaitAllWaitsForHintedTasksOfAnExplicitRuntime) {
  Runtime rt(options(workers()));
  random_graph_then_plain_wait(rt, true, 10, 5'000 / kScaleDown);
}

// Submitted by worker 0 inside Runtime::run, waited for after run returned.
TEST_P(DataflowWaitScope, PlainWaitAllAfterRunReturned) {
  Runtime rt(options(workers()));
  for (int round = 0; round < 10; ++round) {
    Handles h(4);
    std::atomic<int> done{0};
    const int n = 2000 / static_cast<int>(kScaleDown > 1 ? 10 : 1);
    rt.run([&] {
      for (int i = 0; i < n; ++i)
        canopy::submit({canopy::read_write(h[i % 4])}, [&done] { ++done; }, canopy::Affinity::worker(0));
    });
    canopy::wait_all();
    ASSERT_EQ(done.load(), n) << "round " << round;
  }
}

TEST_P(DataflowWaitScope, PlainWaitAllCoversTwoRuntimes) {
  Runtime a(options(workers())), b(options(2));
  Handles h(2);
  std::atomic<int> done_a{0}, done_b{0};
  for (int i = 0; i < 200; ++i) {
    canopy::submit(a, {canopy::read_write(h[0])}, [&] { ++done_a; }, canopy::Affinity::worker(0));
    canopy::submit(b, {canopy::read_write(h[1])}, [&] {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
      ++done_b;
    });
  }
  canopy::wait_all();
  EXPECT_EQ(done_a.load(), 200);
  EXPECT_EQ(done_b.load(), 200);
}

TEST_P(DataflowWaitScope, PlainWaitDataWaitsInTheRuntimeItWasSubmittedTo) {
  Runtime rt(options(workers()));
  Handles h(2);
  for (int round = 0; round < 10; ++round) {
    std::atomic<int> done{0};
    for (int i = 0; i < 20; ++i)
      canopy::submit(rt, {canopy::read_write(h[0])}, [&done] {
        std::this_thread::sleep_for(std::chrono::microseconds(100));
        ++done;
      }, canopy::Affinity::worker(0));
    canopy::wait(h[0]);
    ASSERT_EQ(done.load(), 20) << "round " << round;
  }
  canopy::wait_all();
}

TEST_P(DataflowWaitScope, PlainWaitAllRethrowsAnExplicitRuntimesException) {
  Runtime rt(options(workers()));
  Handles h(1);
  canopy::submit(rt, {canopy::write(h[0])}, [] { throw std::runtime_error("task of rt failed"); });
  EXPECT_THROW(
      {
        try {
          canopy::wait_all();
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "task of rt failed");
          throw;
        }
      },
      std::runtime_error);
  canopy::wait_all();  // reported once
}

// Nothing submitted anywhere: the plain waits return without making the
// default runtime (when this process had not made it already).
TEST(DataflowWaitScopeDefault, PlainWaitsMakeNoDefaultRuntime) {
  const bool before = canopy::detail::default_core_if_any() != nullptr;
  Handles h(1);
  canopy::wait_all();
  canopy::wait(h[0]);
  if (!before) {
    EXPECT_EQ(canopy::detail::default_core_if_any(), nullptr);
  }
}

// A task that submits to another runtime waits for those tasks with its
// own wait_all() (they are not its children, but the thread submitted them).
TEST_P(DataflowWaitScope, TaskWaitAllCoversWhatItSubmittedToAnotherRuntime) {
  Runtime rt(options(workers())), other(options(2));
  Handles h(2);
  for (int round = 0; round < 5; ++round) {
    std::atomic<int> done{0};
    int seen = -1;
    rt.run([&] {
      canopy::submit({canopy::write(h[0])}, [&] {
        for (int i = 0; i < 10; ++i)
          canopy::submit(other, {canopy::read_write(h[1])}, [&done] {
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            ++done;
          });
        canopy::wait_all();
        seen = done.load();
      });
      canopy::wait_all();
    });
    ASSERT_EQ(seen, 10) << "round " << round;
  }
}

// data_free of a handle that tasks of a runtime the caller is not in still
// use: it waits for them (the handle stays live until the last has run).
TEST_P(DataflowWaitScope, FreeWaitsForTasksOfAnotherRuntime) {
  Runtime rt(options(workers()));
  for (int round = 0; round < 10; ++round) {
    std::vector<char> storage(256);
    const Data d = canopy::data_register(storage.data(), storage.size());
    std::atomic<int> done{0}, stale{0};
    for (int i = 0; i < 3; ++i)
      canopy::submit(rt, {canopy::read_write(d)}, [d, &done, &stale, &storage] {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        try {
          static_cast<char*>(canopy::data_ptr(d))[0] = 1;
        } catch (const canopy::Error&) {
          ++stale;  // freed under the task
        }
        storage[1] = 1;
        ++done;
      }, round % 2 ? canopy::Affinity::worker(0) : canopy::Affinity{});
    canopy::data_free(d);
    ASSERT_EQ(done.load(), 3) << "round " << round << ": data_free returned while tasks still used the handle";
    ASSERT_EQ(stale.load(), 0) << "round " << round;
  }
}

// Inside a task, data_free refuses a handle the task lists (waiting would
// wait for itself) and one that tasks elsewhere still use; the handle stays.
TEST_P(DataflowWaitScope, FreeInsideATaskRefusesWhatItCannotWaitFor) {
  Runtime rt(options(workers())), other(options(2));
  Handles h(2);
  std::string own, busy;
  std::atomic<bool> release{false};
  std::atomic<bool> started{false};
  // A task of `other` holds h[1] until released.
  canopy::submit(other, {canopy::write(h[1])}, [&] {
    started = true;
    while (!release.load()) std::this_thread::yield();
  });
  while (!started.load()) std::this_thread::yield();
  rt.run([&] {
    canopy::submit({canopy::write(h[0])}, [&] {
      try {
        canopy::data_free(h[0]);
      } catch (const canopy::Error& e) {
        own = e.what();
      }
      try {
        canopy::data_free(h[1]);
      } catch (const canopy::Error& e) {
        busy = e.what();
      }
    });
    canopy::wait_all(rt);
  });
  release = true;
  canopy::wait_all();
  EXPECT_NE(own.find("data handle #" + std::to_string(h[0].index) + " is listed by the running"), std::string::npos)
      << own;
  EXPECT_NE(busy.find("data handle #" + std::to_string(h[1].index) + " is still used"), std::string::npos) << busy;
  EXPECT_NO_THROW(canopy::data_size(h[0]));
  EXPECT_NO_THROW(canopy::data_size(h[1]));
}

// The same trap for task groups is loud already: a group made on one
// runtime refuses spawns from a thread inside another runtime and waits
// from another thread (canopy::Error), so its tasks are never left behind.
TEST_P(DataflowWaitScope, TaskGroupOfAnotherRuntimeIsRefused) {
  Runtime rt(options(workers())), other(options(2));
  std::atomic<int> done{0};
  canopy::TaskGroup g(rt);
  g.spawn([&done] { ++done; });
  other.run([&] { EXPECT_THROW(g.spawn([&done] { ++done; }), canopy::Error); });
  std::thread([&] { EXPECT_THROW(g.wait(), canopy::Error); }).join();
  g.wait();
  EXPECT_EQ(done.load(), 1);
}
