// Which of the tasks that one release makes ready runs first
// (src/dataflow/run.cpp, finish): the one submitted first runs next on the
// worker that made them ready, and the others are popped there in
// submission order. Running the oldest first keeps step-by-step graphs
// (factorizations) on their critical path; before, the newest ran first.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "canopy/dataflow.hpp"
#include "test_util.hpp"

using canopy::Runtime;
using namespace dataflow_test;

namespace {

constexpr int kReaders = 6;

// A task's start: the thread, and how many tasks that thread started before.
struct Start {
  std::thread::id thread;
  long index;
};

thread_local long tl_started = 0;

Start started() { return {std::this_thread::get_id(), tl_started++}; }

}  // namespace

// One worker: a writer of `a`, then readers of `a` (each writing its own
// handle). The writer has a hint (worker 0), so that it is queued rather
// than run at submission, as a one-worker runtime does with a ready task
// without one; the readers wait for it. Its release makes every reader
// ready at once, and they must run in submission order.
TEST(DataflowReadyOrder, OneWorkerRunsReadersInSubmissionOrder) {
  Runtime rt(options(1));
  Handles h(1 + kReaders);
  std::vector<int> order;
  bool writer_ran_first = false;
  rt.run([&] {
    canopy::submit({canopy::write(h[0])}, [&] { writer_ran_first = order.empty(); }, canopy::Affinity::worker(0));
    for (int i = 0; i < kReaders; ++i)
      canopy::submit({canopy::read(h[0]), canopy::write(h[1 + i])}, [&, i] { order.push_back(i); });
    EXPECT_TRUE(order.empty()) << "a reader ran at submission: the test no longer reaches the release";
    canopy::wait_all();
  });
  EXPECT_TRUE(writer_ran_first);
  std::vector<int> expected;
  for (int i = 0; i < kReaders; ++i) expected.push_back(i);
  EXPECT_EQ(order, expected);
}

// Several workers: the writer (taken by another worker) waits until every
// reader is submitted, so that its release is what makes them ready; the
// first reader then runs next on the writer's thread (thieves may take the
// others, never that one).
class DataflowReadyOrderWorkers : public ::testing::TestWithParam<int> {};

INSTANTIATE_TEST_SUITE_P(Workers, DataflowReadyOrderWorkers, ::testing::Values(2, 5),
                         [](const auto& info) { return worker_name(info.param); });

TEST_P(DataflowReadyOrderWorkers, OldestReadyTaskRunsNextOnTheSameWorker) {
  Runtime rt(options(GetParam()));
  Handles h(1 + kReaders);
  for (int round = 0; round < 20; ++round) {
    Start writer{}, first{};
    std::atomic<bool> submitted{false};
    bool timed_out = false;
    rt.run([&] {
      canopy::submit({canopy::write(h[0])}, [&] {
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!submitted.load())
          if (std::chrono::steady_clock::now() > deadline) {
            timed_out = true;
            break;
          }
        writer = started();
      });
      for (int i = 0; i < kReaders; ++i)
        canopy::submit({canopy::read(h[0]), canopy::write(h[1 + i])}, [&, i] {
          const Start s = started();
          if (i == 0) first = s;
        });
      submitted.store(true);
      canopy::wait_all();
    });
    ASSERT_FALSE(timed_out) << "the writer never saw the readers submitted";
    ASSERT_EQ(first.thread, writer.thread) << "round " << round;
    ASSERT_EQ(first.index, writer.index + 1) << "round " << round;
  }
}
