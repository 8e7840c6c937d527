// Times an oversubscribed waiter's sched_yield calls cheaply.
//
// yield_cpu (futex.cpp) times every yield, to catch the slow ones that may
// mean another process took the CPU (competitor_watch.hpp). Two
// clock_gettime calls per yield were 5% of the samples of an 8-thread loop
// of empty regions on the 2-core machine (`perf record`), where the
// cycle counter (rdtsc) costs a few nanoseconds. Its rate is learnt from
// the clock itself: the first (clock, counter) pair a yield offers, then
// the first at least kCalibrationNs later. Until then, and where there is
// no cycle counter, slow_ticks() is 0 and yields are timed by the clock.
// The counter only has to tell a yield of microseconds from one of 100 us
// or more: an error of a few percent in its rate, or a counter that differs
// between CPUs by less than that, changes nothing. And a yield that looks
// slow when it was not only makes CompetitorWatch read the clocks it
// judges by (the process's share of the CPUs over a window of 10 ms or
// more): it cannot stop yields by itself.
#pragma once
#include <atomic>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace canopy::omp {

class YieldClock {
 public:
  static constexpr std::int64_t kCalibrationNs = 10000000;  // 10 ms

  // The cycle counter; 0 where there is none.
  static std::uint64_t ticks() {
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return 0;
#endif
  }

  // Counter ticks in `slow_ns` nanoseconds once the rate is known, else 0.
  std::int64_t slow_ticks() const { return slow_ticks_.load(std::memory_order_relaxed); }

  // A pair read together (clock ns, counter); learns the rate of ticks for
  // `slow_ns` from the first pair and one at least kCalibrationNs later.
  // Threads may offer pairs at once: the first pair is taken by one of
  // them, and any of the later ones gives the same rate.
  void observe(std::int64_t ns, std::uint64_t tick, std::int64_t slow_ns) {
    if (slow_ticks_.load(std::memory_order_relaxed) != 0) return;
    std::int64_t first = first_ns_.load(std::memory_order_acquire);
    if (first == 0) {
      if (first_ns_.compare_exchange_strong(first, -1, std::memory_order_acq_rel)) {
        first_tick_.store(tick, std::memory_order_relaxed);
        first_ns_.store(ns, std::memory_order_release);
      }
      return;
    }
    if (first < 0 || ns - first < kCalibrationNs) return;  // being recorded, or too early
    const std::uint64_t t0 = first_tick_.load(std::memory_order_relaxed);
    if (tick <= t0) return;  // no counter, or it went back (another CPU's): the clock stays
    const double per_ns = static_cast<double>(tick - t0) / static_cast<double>(ns - first);
    const auto slow = static_cast<std::int64_t>(per_ns * static_cast<double>(slow_ns));
    if (slow > 0) slow_ticks_.store(slow, std::memory_order_relaxed);
  }

 private:
  std::atomic<std::int64_t> slow_ticks_{0};
  std::atomic<std::int64_t> first_ns_{0};  // 0: none yet, -1: being recorded
  std::atomic<std::uint64_t> first_tick_{0};
};

}  // namespace canopy::omp
