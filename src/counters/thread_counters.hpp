// Counters of one thread (a worker): the OS events the ORWL paper reported
// (context switches, CPU migrations, page faults) and hardware events
// (cycles, instructions, cache misses, stalled cycles), through the
// kernel's perf_event interface, or, where perf_event is refused, the
// counts the kernel keeps per thread anyway (/proc/self/task/TID: status,
// stat, sched). A counter that neither gives has a reason, never a zero.
//
// Opened for a thread id from any thread of the process (perf_event_open
// takes a tid; /proc is readable by every thread), read from any thread;
// not on any hot path: opened when a runtime or a trace session asks for
// them, read when CANOPY_STATS prints or a session ends.
#pragma once
#include <sys/types.h>

#include <array>
#include <cstdint>
#include <mutex>
#include <string>

namespace canopy::counters {

enum Counter : int {
  kContextSwitches = 0,
  kCpuMigrations,
  kPageFaults,
  kCycles,
  kInstructions,
  kCacheMisses,
  kStalledFrontend,
  kStalledBackend,
  kNumCounters
};
inline constexpr int kNumOsCounters = 3;  // the first three are the OS's

// perf's names ("context-switches", "cycles", ...), as `perf stat` prints them.
const char* counter_name(int c);

// Which counters to read: CANOPY_COUNTERS (os, hardware, energy).
enum CounterSets : unsigned { kSetOs = 1, kSetHardware = 2, kSetEnergy = 4, kSetAll = 7 };
// "all", "none" or a comma-separated list of os, hardware, energy. Throws
// canopy::Error naming `what` (the variable) and the value.
unsigned parse_counter_sets(const std::string& value, const std::string& what);
// CANOPY_COUNTERS (unset or empty: all), read by every runtime when it is
// made and by every trace session when it starts.
unsigned sets_from_env();

// The first perf event of a process enables the kernel's scheduler hooks
// (about 10 ms in this project's VM): a trace session opens one for the
// calling thread before its clock starts and keeps it until it ends, so
// that the trace does not begin with that gap. Returns the fd or -1.
int perf_warm_up();
void perf_warm_down(int fd);

struct Sample {
  std::array<std::uint64_t, kNumCounters> value{};
  std::uint32_t have = 0;  // bit c: value[c] is a count
  bool has(int c) const { return (have >> c) & 1u; }
};
// after - before, counter by counter (counters only in `after` keep their value).
Sample difference(const Sample& after, const Sample& before);

// Test hooks: make perf_event_open fail with `refuse_perf` (an errno), and
// read /proc and /sys (energy) from other roots (fake trees).
struct Probe {
  int refuse_perf = 0;
  std::string proc_root = "/proc";
  std::string sysfs_root = "/sys";
};

class ThreadCounters {
 public:
  ThreadCounters() = default;
  ~ThreadCounters();
  ThreadCounters(const ThreadCounters&) = delete;
  ThreadCounters& operator=(const ThreadCounters&) = delete;

  // Starts counting the events of `sets` for thread `tid` of this process.
  void open(pid_t tid, unsigned sets, const Probe& probe = {});
  // Counts since open(): live while the thread runs, its last counts after
  // finish().
  Sample read();
  // Called by the thread itself just before it ends: keeps its counts (its
  // /proc files go away with it) and closes the perf events.
  void finish();
  // Why counter c has no count ("" when it has one, or was not asked for).
  std::string why_missing(int c);
  // c was counted in user space only (perf_event_paranoid without CAP_PERFMON).
  bool user_only(int c);
  // Where the OS counters came from when perf_event refused them ("" when
  // perf_event counted them): one line for CANOPY_STATS.
  std::string fallback_note();

 private:
  enum Source : std::uint8_t { kNone, kPerf, kProc };
  Sample read_locked();
  Sample read_proc();

  std::mutex mutex_;
  pid_t tid_ = 0;
  std::string task_dir_;  // <proc_root>/self/task/<tid>
  std::array<int, kNumCounters> fd_{-1, -1, -1, -1, -1, -1, -1, -1};
  std::array<Source, kNumCounters> source_{};
  std::array<bool, kNumCounters> user_only_{};
  std::array<std::string, kNumCounters> why_{};
  std::string fallback_note_;
  Sample proc_base_;   // /proc counts at open()
  bool finished_ = false;
  Sample final_;
};

}  // namespace canopy::counters
