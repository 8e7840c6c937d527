// The Chase-Lev deque alone: LIFO for the owner, FIFO for thieves, growth,
// steal results, and a stress test where the owner pushes and pops while
// thieves steal: every task must be taken exactly once.
#include "canopy/detail/deque.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "test_util.hpp"

using canopy::detail::Deque;
using canopy::detail::StealResult;
using canopy::detail::Task;

namespace {

std::vector<Task> make_tasks(int n) { return std::vector<Task>(static_cast<std::size_t>(n)); }

}  // namespace

TEST(Deque, OwnerIsLifoThievesAreFifo) {
  Deque d(4);
  auto tasks = make_tasks(6);
  for (auto& t : tasks) d.push(&t);
  EXPECT_EQ(d.bottom(), 6);
  auto s = d.steal();
  ASSERT_EQ(s.result, StealResult::Ok);
  EXPECT_EQ(s.task, &tasks[0]);
  EXPECT_EQ(d.pop(), &tasks[5]);
  EXPECT_EQ(d.pop(), &tasks[4]);
  s = d.steal();
  ASSERT_EQ(s.result, StealResult::Ok);
  EXPECT_EQ(s.task, &tasks[1]);
  EXPECT_EQ(d.pop(), &tasks[3]);
  EXPECT_EQ(d.pop(), &tasks[2]);
  EXPECT_EQ(d.pop(), nullptr);
  EXPECT_EQ(d.steal().result, StealResult::Empty);
  EXPECT_FALSE(d.looks_nonempty());
}

TEST(Deque, GrowsAndKeepsOrder) {
  Deque d(2);
  auto tasks = make_tasks(1000);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(d.steal().result, StealResult::Empty);
  for (auto& t : tasks) d.push(&t);
  EXPECT_GE(d.capacity(), 1000);
  for (int i = 0; i < 500; ++i) {
    auto s = d.steal();
    ASSERT_EQ(s.result, StealResult::Ok);
    EXPECT_EQ(s.task, &tasks[i]);
  }
  for (int i = 999; i >= 500; --i) EXPECT_EQ(d.pop(), &tasks[i]);
  EXPECT_EQ(d.pop(), nullptr);
}

TEST(Deque, WrapsAroundWithoutGrowing) {
  Deque d(8);
  auto tasks = make_tasks(8);
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < 5; ++i) d.push(&tasks[i]);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(d.steal().task, &tasks[i]);
    EXPECT_EQ(d.pop(), &tasks[4]);
    EXPECT_EQ(d.pop(), &tasks[3]);
  }
  EXPECT_EQ(d.capacity(), 8);
}

// The owner pushes and pops; thieves steal. Each task is taken exactly once,
// and thieves see empty/lost-race/ok results.
TEST(Deque, StressWithConcurrentThieves) {
  const int kTasks = static_cast<int>(200000 / canopy_test::kScaleDown) + 1000;
  const int kThieves = 3;
  auto tasks = make_tasks(kTasks);
  std::vector<std::atomic<int>> taken(kTasks);
  Deque d(16);  // small: growth happens under contention
  std::atomic<bool> done{false};
  std::atomic<long> steals{0}, races{0};
  auto index = [&](Task* t) { return static_cast<int>(t - tasks.data()); };
  std::vector<std::thread> thieves;
  for (int k = 0; k < kThieves; ++k)
    thieves.emplace_back([&] {
      while (!done.load(std::memory_order_acquire)) {
        auto s = d.steal();
        if (s.result == StealResult::Ok) {
          taken[index(s.task)].fetch_add(1);
          steals.fetch_add(1, std::memory_order_relaxed);
        } else if (s.result == StealResult::LostRace) {
          races.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  int next = 0;
  std::uint64_t rng = 12345;
  while (next < kTasks) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    const int burst = 1 + static_cast<int>((rng >> 33) % 8);
    for (int i = 0; i < burst && next < kTasks; ++i) d.push(&tasks[next++]);
    const int pops = static_cast<int>((rng >> 40) % 6);
    for (int i = 0; i < pops; ++i)
      if (Task* t = d.pop()) taken[index(t)].fetch_add(1);
  }
  while (Task* t = d.pop()) taken[index(t)].fetch_add(1);
  // Whatever is left goes to thieves; wait until the deque is empty.
  while (d.looks_nonempty()) std::this_thread::yield();
  done.store(true, std::memory_order_release);
  for (auto& t : thieves) t.join();
  for (int i = 0; i < kTasks; ++i) ASSERT_EQ(taken[i].load(), 1) << "task " << i;
  RecordProperty("steals", static_cast<int>(steals.load()));
  RecordProperty("lost_races", static_cast<int>(races.load()));
}

// Only the last task is contended between the owner and thieves: exactly
// one of them gets it, every time.
TEST(Deque, LastTaskGoesToExactlyOne) {
  const int kRounds = static_cast<int>(20000 / canopy_test::kScaleDown) + 200;
  Task task;
  Deque d(4);
  std::atomic<int> round{-1};
  std::atomic<int> thief_got{0};
  std::atomic<int> thief_seen{-1};
  std::thread thief([&] {
    for (int r = 0; r < kRounds; ++r) {
      while (round.load(std::memory_order_acquire) < r) std::this_thread::yield();
      auto s = d.steal();
      if (s.result == StealResult::Ok) thief_got.fetch_add(1);
      thief_seen.store(r, std::memory_order_release);
    }
  });
  int owner_got = 0;
  for (int r = 0; r < kRounds; ++r) {
    d.push(&task);
    round.store(r, std::memory_order_release);
    if (d.pop() == &task) ++owner_got;
    while (thief_seen.load(std::memory_order_acquire) < r) std::this_thread::yield();
  }
  thief.join();
  EXPECT_EQ(owner_got + thief_got.load(), kRounds);
}
