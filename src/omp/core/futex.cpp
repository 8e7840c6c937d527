// Linux futex system calls for the runtime's waits (see futex.hpp).
#include "futex.hpp"

#include <algorithm>
#include <climits>
#include <linux/futex.h>
#include <sched.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime.hpp"

namespace canopy::omp {

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}

void futex_wait_for(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t ns) {
  const timespec timeout{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, &timeout, nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>& word, int count) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, count < 0 ? INT_MAX : count,
          nullptr, nullptr, 0);
}

// Threads in teams, not those idle in the pool (they sleep): after one
// large region, smaller teams are not oversubscribed.
static int busy_threads(Runtime& rt) {
  return rt.live_threads.load(std::memory_order_relaxed) - rt.idle_workers.load(std::memory_order_relaxed);
}

bool oversubscribed() { return runtime().oversubscribed_now.load(std::memory_order_relaxed); }

int spin_budget() { return runtime().spins_now.load(std::memory_order_relaxed); }

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

// Yielding pays only while the CPU goes to the team's own threads. When
// other processes compete for the CPUs, a yield hands the CPU to one of
// them for a whole time slice (milliseconds, where a hand-over inside the
// team takes microseconds), and a yielding thread, never sleeping, gets no
// wake-up preference from the scheduler: measured on the loaded 2-core
// machine with pinned threads, 8-thread barriers went from 15-40 us
// (sleeping) to 70-1600 us (yielding). So a yield that took longer than
// kSlowYieldNs while this process got less than kOwnShare of the CPUs
// (its CPU time against the wall time: another process had them) turns
// yielding off for the whole process for kYieldOffNs: waiters sleep at
// once, as without yields. A slow yield whose time went to the team's own
// threads is no reason to stop: on a quiet machine (session 12, 8 threads
// on 2 cores) turning yields off at every slow yield left the CPUs idle
// 45% of the time (sleeping threads, slow to wake on a virtual CPU) and a
// parallel region cost 150 us (libomp, which yields for 200 ms: 11 us).
// The share of slow yields is 0.5-0.9 with no other process and lower
// beside CPU hogs: 8-thread regions per threshold, quiet / beside two hogs:
// 0.9: 118 / - us, 0.7: 71 / 163 us, 0.5: 32 / 22 us, never off: 33 / 7,500
// us (sleeping at once: 151-163 / 49 us).
constexpr double kOwnShare = 0.5;
constexpr std::int64_t kSlowYieldNs = 100000;   // 100 us
constexpr std::int64_t kYieldOffNs = 200000000;  // 200 ms
std::atomic<std::int64_t> yield_off_until{0};

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
  if (yield_off_until.load(std::memory_order_relaxed) > now_ns()) return 0;
  const int busy = busy_threads(rt);
  return std::min(1 << 14, 256 * ((busy + rt.usable_pus - 1) / rt.usable_pus));
}

bool yield_cpu() {
  const std::int64_t t0 = now_ns(), c0 = process_cpu_ns();
  sched_yield();
  const std::int64_t t1 = now_ns();
  if (t1 - t0 <= kSlowYieldNs) return true;
  const double own = static_cast<double>(process_cpu_ns() - c0) /
                     (static_cast<double>(t1 - t0) * std::max(1, runtime().usable_pus));
  if (own >= kOwnShare) return true;
  yield_off_until.store(t1 + kYieldOffNs, std::memory_order_relaxed);
  return false;
}

}  // namespace canopy::omp
