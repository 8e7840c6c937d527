// Futex waiting and waking on a 32-bit atomic word, and the budgets of the
// spin-then-yield-then-sleep wait every blocking point of the OpenMP
// runtime uses. Spinning is skipped when the process is oversubscribed
// (more OpenMP threads in teams than usable PUs): then a spinning waiter only steals
// the CPU from the thread it waits for; it yields instead.
#pragma once
#include <atomic>
#include <cstdint>

namespace canopy::omp {

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected);
// The same, returning after at most `ns` nanoseconds.
void futex_wait_for(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::int64_t ns);
void futex_wake(std::atomic<std::uint32_t>& word, int count);  // count < 0: all
// A wait that only wake-ups naming one of `bits` end (FUTEX_WAIT_BITSET),
// and the wake-up of every waiter on `word` whose bits meet `bits`: threads
// waiting on one word for different values, woken one value at a time.
void futex_wait_bits(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::uint32_t bits);
void futex_wake_bits(std::atomic<std::uint32_t>& word, std::uint32_t bits);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// More OpenMP threads in teams (live threads not idle in the pool) than
// usable PUs.
bool oversubscribed();
// Recomputes what oversubscribed() and spin_budget() answer: after any
// change of the runtime's live or idle thread counts or of its spin count.
struct Runtime;
void refresh_wait_state(Runtime& rt);

// How many times a waiter polls before sleeping: 0 when oversubscribed.
int spin_budget();

// How many times a waiter for a lock held only briefly (SpinMutex: a
// parent's dependence map) polls before sleeping: spin_budget(), and when
// the process is oversubscribed (where spin_budget() is 0) still a short
// poll, about a microsecond, unless OMP_WAIT_POLICY=passive. The holder
// is usually running on another CPU and about to let go, and a sleep
// costs a futex wait and wake and two context switches: one thread
// creating chains of dependent tasks that 15 others finish, on 2 cores
// (`canopy_bench_omp_kmp_overhead 100000 7 100`, 16 threads), slept on
// the map's lock 44,000 times and took 3.3 us per task (libomp 2.2);
// polling 64 times, 250 sleeps and 1.1 us.
int lock_spin_budget();
// lock_spin_budget() from the wait state: `spin_budget` (spin_budget()),
// oversubscribed(), OMP_WAIT_POLICY=passive.
constexpr int kOversubscribedLockSpins = 64;  // cpu_relax() rounds: 1 us on the 2-core test machine (16 ns each)
constexpr int lock_spins(int spin_budget, bool oversubscribed, bool passive) {
  return spin_budget > 0 || !oversubscribed || passive ? spin_budget : kOversubscribedLockSpins;
}

// How many times an oversubscribed waiter (spin_budget() == 0 because the
// process has more OpenMP threads than usable PUs) calls yield_cpu before
// sleeping: 256 times the threads per PU, a few milliseconds of the team's
// own hand-overs (a yield hands the CPU to another runnable thread on it,
// often one the waiter waits for, at the cost of a context switch but
// without the futex wake-up that a sleeper needs, and a CPU left idle
// meanwhile). 0 when not oversubscribed, under OMP_WAIT_POLICY=passive,
// and for a while after a yield that lost the CPU to another process
// (futex.cpp).
int yield_budget();
// sched_yield; false when the yield took so long that the CPU went to
// another process (yielding is then off for a while: yield_budget() is 0;
// the caller should sleep).
bool yield_cpu();

// What one wait does before it sleeps: poll `spins` times, then yield its
// yield budget (asked for only once polling is over, as it reads shared
// counters). step() does one of them; false once both are used up.
class WaitSteps {
 public:
  explicit WaitSteps(int spins) : spins_(spins) {}
  bool step() {
    if (spins_ > 0) {
      --spins_;
      cpu_relax();
      return true;
    }
    if (yields_ < 0) yields_ = yield_budget();
    if (yields_ > 0) {
      --yields_;
      if (!yield_cpu()) yields_ = 0;
      return true;
    }
    return false;
  }

 private:
  int spins_;
  int yields_ = -1;
};

}  // namespace canopy::omp
