// The States' spin lock (src/dataflow/flow.hpp): mutual exclusion, and a
// waiter whose holder keeps the lock long (as a preempted holder does)
// stops spinning, yields, and still gets the lock when it is given back.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "dataflow/flow.hpp"

using canopy::detail::flow::SpinLock;

TEST(DataflowSpinLock, ExcludesAndHandsOver) {
  SpinLock lock;
  long counter = 0;  // plain: a lost update (or ThreadSanitizer) shows a broken lock
  constexpr int kThreads = 4, kIters = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kIters; ++i) {
        lock.lock();
        ++counter;
        lock.unlock();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(counter, static_cast<long>(kThreads) * kIters);
}

TEST(DataflowSpinLock, AWaiterOutlastsALongHolder) {
  SpinLock lock;
  std::atomic<bool> held{false}, got{false};
  lock.lock();
  std::thread waiter([&] {
    held.store(true);
    lock.lock();  // spins kSpins times, then yields until given back
    got.store(true);
    lock.unlock();
  });
  while (!held.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(got.load());
  lock.unlock();
  waiter.join();
  EXPECT_TRUE(got.load());
}
