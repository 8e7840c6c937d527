// Tells, from slow sched_yield calls, whether another process competes for
// the CPUs (then an oversubscribed team should stop yielding and sleep).
//
// Yielding pays only while the CPU goes to the team's own threads. When
// other processes compete for the CPUs, a yield hands the CPU to one of
// them for a whole time slice (milliseconds, where a hand-over inside the
// team takes microseconds), and a yielding thread, never sleeping, gets no
// wake-up preference from the scheduler: measured on the loaded 2-core
// machine with pinned threads, 8-thread barriers went from 15-40 us
// (sleeping) to 70-1600 us (yielding); beside two CPU hogs an 8-thread
// region took 7,500 us when yielding, 22 us when yields stop.
//
// The evidence is a slow yield (over kSlowYieldNs) during which the process
// got under kOwnShare of the PUs (its CPU time against the wall time): the
// CPU went elsewhere. A slow yield whose time went to the team's own
// threads is no reason to stop (session 12: on a quiet machine, stopping at
// every slow yield left the CPUs idle 45% of the time, 150 us per 8-thread
// region where libomp, which yields for 200 ms, took 11 us). Thresholds,
// 8-thread regions quiet / beside two hogs: 0.9: 118 / - us, 0.7: 71 /
// 163, 0.5: 32 / 22, never stopping: 33 / 7,500.
//
// One slow yield is only a suspicion: a machine may stop the whole process
// for a few milliseconds (session 13, quiet virtual machine, 16 threads:
// 2.9 ms yields with a share of 0.03 and every thread awake, a few times a
// second), and when each one stopped yields for 200 ms, 16-thread regions
// cost 230 us instead of 29. A competitor is confirmed when the share is
// low over a window from one slow yield to another at least kConfirmNs
// later (and at most kStaleNs: an older window starts again). The clocks
// are read only after slow yields (the process CPU clock is a system call
// that sums over the threads: not for every yield). And a low share may be
// CPUs left idle by the process's own sleeping threads (a serial part, a
// region of fewer threads): so a window counts only if more of its threads
// than PUs were awake at both ends and none began to sleep in between (the
// scheduler leaves no CPU idle while more threads than PUs are runnable).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>

namespace canopy::omp {

// The end of a slow yield: the wall and process CPU clocks (ns), the
// process's threads awake (not asleep in a futex), the sleeps they began
// so far, and the PUs the process may use.
struct SlowYield {
  std::int64_t wall_ns, cpu_ns;
  int awake;
  std::uint64_t sleeps;
  int pus;
};

class CompetitorWatch {
 public:
  static constexpr double kOwnShare = 0.5;
  static constexpr std::int64_t kSlowYieldNs = 100000;  // 100 us
  static constexpr std::int64_t kConfirmNs = 10000000;  // 10 ms
  static constexpr std::int64_t kStaleNs = 100000000;   // 100 ms

  // True when this slow yield confirms a competitor. Threads may call it
  // at once: a lost or mixed update only delays or drops one window.
  bool confirms(const SlowYield& y) {
    const std::int64_t since = since_.load(std::memory_order_acquire);
    const std::int64_t wall = y.wall_ns - since;
    if (since != 0 && wall < kConfirmNs) return false;
    const bool busy = y.awake > y.pus;
    const bool low = since != 0 && wall <= kStaleNs && busy && since_busy_.load(std::memory_order_relaxed) &&
                     y.sleeps == since_sleeps_.load(std::memory_order_relaxed) &&
                     static_cast<double>(y.cpu_ns - since_cpu_.load(std::memory_order_relaxed)) <
                         kOwnShare * static_cast<double>(wall) * std::max(1, y.pus);
    // The next window starts here.
    since_cpu_.store(y.cpu_ns, std::memory_order_relaxed);
    since_sleeps_.store(y.sleeps, std::memory_order_relaxed);
    since_busy_.store(busy, std::memory_order_relaxed);
    since_.store(y.wall_ns, std::memory_order_release);
    return low;
  }

 private:
  // The window's start (0: none yet), and then: the process CPU time, the
  // sleeps begun, more threads awake than PUs.
  std::atomic<std::int64_t> since_{0};
  std::atomic<std::int64_t> since_cpu_{0};
  std::atomic<std::uint64_t> since_sleeps_{0};
  std::atomic<bool> since_busy_{false};
};

}  // namespace canopy::omp
