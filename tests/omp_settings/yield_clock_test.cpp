// YieldClock (src/omp/core/yield_clock.hpp): the cycle counter's ticks in
// a slow yield's time, learnt from (clock, counter) pairs 10 ms or more
// apart; unknown (0) before, and when the counter did not advance.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "omp/core/yield_clock.hpp"

using canopy::omp::YieldClock;

namespace {
constexpr std::int64_t kMs = 1000000;
constexpr std::int64_t kSlowNs = 100000;  // 100 us
}  // namespace

TEST(YieldClock, LearnsTheRateFromPairsTenMillisecondsApart) {
  YieldClock c;
  EXPECT_EQ(c.slow_ticks(), 0);
  c.observe(1 * kMs, 5000, kSlowNs);
  EXPECT_EQ(c.slow_ticks(), 0);
  c.observe(6 * kMs, 5000 + 15 * kMs, kSlowNs);  // 5 ms later: too early
  EXPECT_EQ(c.slow_ticks(), 0);
  c.observe(11 * kMs, 5000 + 30 * kMs, kSlowNs);  // 10 ms, 3 ticks per ns
  EXPECT_EQ(c.slow_ticks(), 3 * kSlowNs);
  c.observe(50 * kMs, 5000, kSlowNs);  // learnt once: later pairs change nothing
  EXPECT_EQ(c.slow_ticks(), 3 * kSlowNs);
}

TEST(YieldClock, ACounterThatDidNotAdvanceLeavesTheClock) {
  YieldClock none;  // no cycle counter: ticks() is 0 everywhere
  none.observe(1 * kMs, 0, kSlowNs);
  none.observe(20 * kMs, 0, kSlowNs);
  EXPECT_EQ(none.slow_ticks(), 0);
  YieldClock back;  // the second pair read on a CPU whose counter is behind
  back.observe(1 * kMs, 1000000, kSlowNs);
  back.observe(20 * kMs, 999000, kSlowNs);
  EXPECT_EQ(back.slow_ticks(), 0);
}

// The machine's own counter against its clock, 20 ms of sleep apart: the
// rate found is that of a counter running between 100 MHz and 10 GHz
// (where there is one).
TEST(YieldClock, TheMachinesCounterGivesAPlausibleRate) {
  if (YieldClock::ticks() == 0) GTEST_SKIP() << "no cycle counter on this architecture";
  auto now_ns = [] {
    return static_cast<std::int64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
  };
  YieldClock c;
  c.observe(now_ns(), YieldClock::ticks(), kSlowNs);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  c.observe(now_ns(), YieldClock::ticks(), kSlowNs);
  EXPECT_GE(c.slow_ticks(), kSlowNs / 10);  // 0.1 ticks per ns
  EXPECT_LE(c.slow_ticks(), kSlowNs * 10);  // 10 ticks per ns
}
