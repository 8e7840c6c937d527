// Linux futex system calls for the runtime's waits (see futex.hpp).
#include "futex.hpp"

#include <algorithm>
#include <climits>
#include <linux/futex.h>
#include <sched.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "competitor_watch.hpp"
#include "runtime.hpp"
#include "yield_clock.hpp"

namespace canopy::omp {

namespace {
// Threads of this process asleep in a futex wait, and the sleeps begun
// (CompetitorWatch needs both). One line, written only around sleeps.
struct alignas(64) SleepCounts {
  std::atomic<int> asleep{0};
  std::atomic<std::uint64_t> begun{0};
};
SleepCounts sleep_counts;
struct CountSleep {
  CountSleep() {
    sleep_counts.begun.fetch_add(1, std::memory_order_relaxed);
    sleep_counts.asleep.fetch_add(1, std::memory_order_relaxed);
  }
  ~CountSleep() { sleep_counts.asleep.fetch_sub(1, std::memory_order_relaxed); }
};
}  // namespace

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  CountSleep asleep;
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wait_for(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t ns) {
  const timespec timeout{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  CountSleep asleep;
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, &timeout, nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>& word, int count) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, count < 0 ? INT_MAX : count,
          nullptr, nullptr, 0);
}

void futex_wait_bits(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::uint32_t bits) {
  CountSleep asleep;
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_BITSET_PRIVATE, expected, nullptr, nullptr,
          bits);
}

void futex_wake_bits(std::atomic<std::uint32_t>& word, std::uint32_t bits) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, nullptr, nullptr,
          bits);
}

// Threads in teams, not those idle in the pool (they sleep): after one
// large region, smaller teams are not oversubscribed.
static int busy_threads(Runtime& rt) {
  return rt.live_threads.load(std::memory_order_relaxed) - rt.idle_workers.load(std::memory_order_relaxed);
}

bool oversubscribed() { return runtime().oversubscribed_now.load(std::memory_order_relaxed); }

int spin_budget() { return runtime().spins_now.load(std::memory_order_relaxed); }

// 32, 128 and 256 polls measured the same as 64 in the loop of futex.hpp's comment.
int lock_spin_budget() {
  return lock_spins(spin_budget(), oversubscribed(), runtime().settings.wait_policy == WaitPolicy::Passive);
}

// Two threads refreshing at once may store in the wrong order; each one
// checks again after its own stores, so the last to store corrects them.
void refresh_wait_state(Runtime& rt) {
  for (;;) {
    const bool over = busy_threads(rt) > rt.usable_pus;
    const int spins = over ? 0 : rt.spin_count.load(std::memory_order_relaxed);
    if (rt.oversubscribed_now.load(std::memory_order_relaxed) != over)
      rt.oversubscribed_now.store(over, std::memory_order_relaxed);
    if (rt.spins_now.load(std::memory_order_relaxed) != spins) rt.spins_now.store(spins, std::memory_order_relaxed);
    const bool again = busy_threads(rt) > rt.usable_pus;
    if (again == over && (again ? 0 : rt.spin_count.load(std::memory_order_relaxed)) == spins) return;
  }
}

namespace {

std::int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Once CompetitorWatch confirms another process on the CPUs, yielding is
// off for the whole process for kYieldOffNs: waiters sleep at once.
constexpr std::int64_t kYieldOffNs = 200000000;  // 200 ms
std::atomic<std::int64_t> yield_off_until{0};
CompetitorWatch competitor_watch;

std::int64_t process_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

}  // namespace

int yield_budget() {
  Runtime& rt = runtime();
  if (rt.settings.wait_policy == WaitPolicy::Passive) return 0;
  if (!oversubscribed()) return 0;
  // The clock is read only while yields are off (after a confirmed
  // competitor): once that time has passed the mark goes back to 0.
  std::int64_t off = yield_off_until.load(std::memory_order_relaxed);
  if (off != 0) {
    if (off > now_ns()) return 0;
    yield_off_until.compare_exchange_strong(off, 0, std::memory_order_relaxed);
  }
  const int busy = busy_threads(rt);
  return std::min(1 << 14, 256 * ((busy + rt.usable_pus - 1) / rt.usable_pus));
}

// The runtime's threads not asleep in a futex wait.
static int awake_threads() {
  return runtime().live_threads.load(std::memory_order_relaxed) - sleep_counts.asleep.load(std::memory_order_relaxed);
}

namespace {

// A yield of more than kSlowYieldNs that ended at t1 (clock ns): false
// when it confirms a competitor (yields are then off for kYieldOffNs).
bool after_slow_yield(std::int64_t t1) {
  const SlowYield y{t1, process_cpu_ns(), awake_threads(), sleep_counts.begun.load(std::memory_order_relaxed),
                    runtime().usable_pus};
  if (!competitor_watch.confirms(y)) return true;
  yield_off_until.store(t1 + kYieldOffNs, std::memory_order_relaxed);
  return false;
}

YieldClock yield_clock;

}  // namespace

bool yield_cpu() {
  const std::int64_t slow_ticks = yield_clock.slow_ticks();
  if (slow_ticks > 0) {  // timed by the cycle counter; the clock only when it looks slow
    const std::uint64_t c0 = YieldClock::ticks();
    sched_yield();
    if (static_cast<std::int64_t>(YieldClock::ticks() - c0) <= slow_ticks) return true;
    return after_slow_yield(now_ns());
  }
  const std::int64_t t0 = now_ns();
  yield_clock.observe(t0, YieldClock::ticks(), CompetitorWatch::kSlowYieldNs);
  sched_yield();
  const std::int64_t t1 = now_ns();
  if (t1 - t0 <= CompetitorWatch::kSlowYieldNs) return true;
  return after_slow_yield(t1);
}

}  // namespace canopy::omp
