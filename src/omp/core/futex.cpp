// Linux futex system calls for the runtime's waits (see futex.hpp).
#include "futex.hpp"

#include <algorithm>
#include <climits>
#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runtime.hpp"

namespace canopy::omp {

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
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

bool oversubscribed() {
  Runtime& rt = runtime();
  return busy_threads(rt) > rt.usable_pus;
}

int spin_budget() { return oversubscribed() ? 0 : runtime().spin_count; }

int yield_budget() {
  Runtime& rt = runtime();
  if (rt.settings.wait_policy == WaitPolicy::Passive) return 0;
  if (!oversubscribed()) return 0;
  const int busy = busy_threads(rt);
  return std::min(64, 2 * ((busy + rt.usable_pus - 1) / rt.usable_pus));
}

void yield_cpu() { sched_yield(); }

}  // namespace canopy::omp
