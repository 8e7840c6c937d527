// The Chase-Lev deque alone: LIFO for the owner, FIFO for thieves, growth,
// wrap-around, steal results, and stress tests where the owner pushes and
// pops while thieves steal: every task must be taken exactly once, and a
// stolen slot's copy must be whole.
#include "canopy/detail/deque.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <thread>
#include <vector>

#include "test_util.hpp"

using canopy::detail::Deque;
using canopy::detail::StealResult;
using canopy::detail::TaskSlot;

namespace {

// A task here is an id in word 2, with a check word in 3..7 (a thief's
// copy must carry the same id everywhere).
void push_id(Deque& d, std::uint64_t id) {
  const std::int64_t b = d.bottom();
  TaskSlot* s = d.reserve(b);
  for (int i = 2; i < TaskSlot::kWords; ++i) canopy::detail::store_word(s, i, id * 7 + i);
  d.publish(b);
}

std::optional<std::uint64_t> pop_id(Deque& d) {
  const TaskSlot* s = d.pop();
  if (!s) return std::nullopt;
  return (s->word[2] - 2) / 7;
}

StealResult steal_id(Deque& d, std::uint64_t* id) {
  TaskSlot s;
  const StealResult r = d.steal(&s);
  if (r == StealResult::Ok) {
    *id = (s.word[2] - 2) / 7;
    for (int i = 3; i < TaskSlot::kWords; ++i) EXPECT_EQ(s.word[i], *id * 7 + i) << "torn copy";
  }
  return r;
}

}  // namespace

TEST(Deque, OwnerIsLifoThievesAreFifo) {
  Deque d(4);
  for (std::uint64_t i = 0; i < 6; ++i) push_id(d, i);
  EXPECT_EQ(d.bottom(), 6);
  std::uint64_t id = 99;
  ASSERT_EQ(steal_id(d, &id), StealResult::Ok);
  EXPECT_EQ(id, 0u);
  EXPECT_EQ(pop_id(d), 5u);
  EXPECT_EQ(pop_id(d), 4u);
  ASSERT_EQ(steal_id(d, &id), StealResult::Ok);
  EXPECT_EQ(id, 1u);
  EXPECT_EQ(pop_id(d), 3u);
  EXPECT_EQ(pop_id(d), 2u);
  EXPECT_EQ(pop_id(d), std::nullopt);
  EXPECT_EQ(steal_id(d, &id), StealResult::Empty);
  EXPECT_FALSE(d.looks_nonempty());
  EXPECT_FALSE(d.has_above(0));
}

TEST(Deque, GrowsAndKeepsOrder) {
  Deque d(2);
  std::uint64_t id = 0;
  for (int i = 0; i < 10; ++i) ASSERT_EQ(steal_id(d, &id), StealResult::Empty);
  for (std::uint64_t i = 0; i < 1000; ++i) push_id(d, i);
  EXPECT_GE(d.capacity(), 1000);
  for (std::uint64_t i = 0; i < 500; ++i) {
    ASSERT_EQ(steal_id(d, &id), StealResult::Ok);
    EXPECT_EQ(id, i);
  }
  for (std::uint64_t i = 999; i >= 500; --i) EXPECT_EQ(pop_id(d), i);
  EXPECT_EQ(pop_id(d), std::nullopt);
}

TEST(Deque, WrapsAroundWithoutGrowing) {
  Deque d(8);
  for (int round = 0; round < 100; ++round) {
    for (std::uint64_t i = 0; i < 5; ++i) push_id(d, i);
    std::uint64_t id = 0;
    for (std::uint64_t i = 0; i < 3; ++i) {
      ASSERT_EQ(steal_id(d, &id), StealResult::Ok);
      EXPECT_EQ(id, i);
    }
    EXPECT_EQ(pop_id(d), 4u);
    EXPECT_EQ(pop_id(d), 3u);
  }
  EXPECT_EQ(d.capacity(), 8);
}

TEST(Deque, HasAboveSeesOnlyNewerTasks) {
  Deque d(8);
  push_id(d, 1);
  const std::int64_t base = d.bottom();
  EXPECT_FALSE(d.has_above(base));
  push_id(d, 2);
  EXPECT_TRUE(d.has_above(base));
  std::uint64_t id = 0;
  ASSERT_EQ(steal_id(d, &id), StealResult::Ok);  // takes 1
  ASSERT_EQ(steal_id(d, &id), StealResult::Ok);  // takes 2
  EXPECT_FALSE(d.has_above(base));  // stolen: nothing to pop above base
}

// The owner pushes and pops; thieves steal. Each task is taken exactly once,
// and thieves see empty/lost-race/ok results. A small deque wraps around
// often, so slots are rewritten while slow thieves may still copy them.
TEST(Deque, StressWithConcurrentThieves) {
  const int kTasks = static_cast<int>(200000 / canopy_test::kScaleDown) + 1000;
  const int kThieves = 3;
  std::vector<std::atomic<int>> taken(kTasks);
  Deque d(16);  // small: growth happens under contention
  std::atomic<bool> done{false};
  std::atomic<long> steals{0}, races{0};
  std::vector<std::thread> thieves;
  for (int k = 0; k < kThieves; ++k)
    thieves.emplace_back([&] {
      std::uint64_t id = 0;
      while (!done.load(std::memory_order_acquire)) {
        const StealResult r = steal_id(d, &id);
        if (r == StealResult::Ok) {
          taken[id].fetch_add(1);
          steals.fetch_add(1, std::memory_order_relaxed);
        } else if (r == StealResult::LostRace) {
          races.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  int next = 0;
  std::uint64_t rng = 12345;
  while (next < kTasks) {
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    const int burst = 1 + static_cast<int>((rng >> 33) % 8);
    for (int i = 0; i < burst && next < kTasks; ++i) push_id(d, static_cast<std::uint64_t>(next++));
    const int pops = static_cast<int>((rng >> 40) % 6);
    for (int i = 0; i < pops; ++i)
      if (auto id = pop_id(d)) taken[*id].fetch_add(1);
  }
  while (auto id = pop_id(d)) taken[*id].fetch_add(1);
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
  Deque d(4);
  std::atomic<int> round{-1};
  std::atomic<int> thief_got{0};
  std::atomic<int> thief_seen{-1};
  std::thread thief([&] {
    std::uint64_t id = 0;
    for (int r = 0; r < kRounds; ++r) {
      while (round.load(std::memory_order_acquire) < r) std::this_thread::yield();
      if (steal_id(d, &id) == StealResult::Ok) thief_got.fetch_add(1);
      thief_seen.store(r, std::memory_order_release);
    }
  });
  int owner_got = 0;
  for (int r = 0; r < kRounds; ++r) {
    push_id(d, 5);
    round.store(r, std::memory_order_release);
    if (pop_id(d)) ++owner_got;
    while (thief_seen.load(std::memory_order_acquire) < r) std::this_thread::yield();
  }
  thief.join();
  EXPECT_EQ(owner_got + thief_got.load(), kRounds);
}
