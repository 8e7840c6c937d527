// Counters of threads and workers (src/counters): a thread that migrates on
// purpose (hops CPUs with sched_setaffinity, sleeps to switch out, touches
// fresh pages) counts migrations, context switches and page faults, through
// perf_event and through /proc where perf_event is refused; every counter
// has a count or a reason, never a silent zero; CANOPY_STATS prints them;
// a runtime that nobody asks for counters opens none.
#include <errno.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "canopy/runtime.hpp"
#include "canopy/trace.hpp"
#include "counters/run_counters.hpp"
#include "counters/thread_counters.hpp"
#include "runtime/runtime_core.hpp"

namespace {

namespace fs = std::filesystem;
using namespace canopy::counters;

pid_t gettid_() { return static_cast<pid_t>(syscall(SYS_gettid)); }

canopy::RuntimeOptions two_workers(bool stats) {
  canopy::RuntimeOptions o;
  o.num_threads = 2;
  o.bind = canopy::BindMode::None;
  o.stats = stats;
  return o;
}

// The CPUs this thread may run on.
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  return cpus;
}

// Hops between the allowed CPUs (a migration each time it lands on another
// one), sleeping in between (a context switch each time), then touches
// fresh pages (a fault each); puts the thread's CPUs back.
void migrate_sleep_and_touch(const std::vector<int>& cpus) {
  for (int i = 0; i < 20 && cpus.size() > 1; ++i) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[i % cpus.size()], &one);
    sched_setaffinity(0, sizeof one, &one);
    usleep(200);
  }
  usleep(1000);
  const std::size_t bytes = 64 * 4096;
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  madvise(p, bytes, MADV_NOHUGEPAGE);  // a fault per page, not one per huge page
  std::memset(p, 1, bytes);
  munmap(p, bytes);
  cpu_set_t all;
  CPU_ZERO(&all);
  for (int c : cpus) CPU_SET(c, &all);
  sched_setaffinity(0, sizeof all, &all);
}

// Counts a thread that migrates, with `probe`, read after the thread ended
// (it finished its counters itself, as a worker does).
struct Counted {
  Sample sample;
  std::array<std::string, kNumCounters> why;
  std::string note;
};
Counted count_migrating_thread(unsigned sets, const Probe& probe) {
  ThreadCounters tc;
  std::atomic<pid_t> tid{0};
  std::atomic<bool> opened{false};
  const std::vector<int> cpus = allowed_cpus();
  std::thread t([&] {
    tid.store(gettid_());
    while (!opened.load()) std::this_thread::yield();
    migrate_sleep_and_touch(cpus);
    tc.finish();
  });
  while (tid.load() == 0) std::this_thread::yield();
  tc.open(tid.load(), sets, probe);  // from another thread, as a runtime does
  opened.store(true);
  t.join();
  Counted c;
  c.sample = tc.read();
  for (int k = 0; k < kNumCounters; ++k) c.why[k] = tc.why_missing(k);
  c.note = tc.fallback_note();
  return c;
}

void expect_os_counts(const Counted& c) {
  EXPECT_TRUE(c.sample.has(kContextSwitches)) << c.why[kContextSwitches];
  EXPECT_GT(c.sample.value[kContextSwitches], 0u);
  EXPECT_TRUE(c.sample.has(kPageFaults)) << c.why[kPageFaults];
  EXPECT_GE(c.sample.value[kPageFaults], 64u);
  if (allowed_cpus().size() < 2) GTEST_SKIP() << "one CPU: the thread cannot migrate";
  if (c.sample.has(kCpuMigrations)) {
    EXPECT_GT(c.sample.value[kCpuMigrations], 0u);
  } else {  // only a kernel without scheduler statistics, and then it says so
    EXPECT_NE(c.why[kCpuMigrations].find("CONFIG_SCHED_DEBUG"), std::string::npos) << c.why[kCpuMigrations];
  }
}

TEST(Counters, AThreadThatMigratesCountsMigrationsSwitchesAndFaults) {
  const Counted c = count_migrating_thread(kSetOs, Probe{});
  expect_os_counts(c);
}

// perf_event refused (an unprivileged user under perf_event_paranoid >= 2
// would count context switches and migrations as 0 in user space): the
// counts come from /proc/self/task/TID, and a note says so.
TEST(Counters, RefusedPerfEventFallsBackToProc) {
  Probe refused;
  refused.refuse_perf = EACCES;
  const Counted c = count_migrating_thread(kSetOs | kSetHardware, refused);
  EXPECT_NE(c.note.find("from /proc/self/task/TID"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("perf_event_paranoid"), std::string::npos) << c.note;
  for (int k = kNumOsCounters; k < kNumCounters; ++k) {
    EXPECT_FALSE(c.sample.has(k)) << counter_name(k);
    EXPECT_NE(c.why[k].find("perf_event_open refused (EACCES"), std::string::npos) << c.why[k];
  }
  expect_os_counts(c);
}

// Hardware events: a count, or a reason (this VM: ENOENT, no PMU).
TEST(Counters, HardwareCountersHaveACountOrAReason) {
  const Counted c = count_migrating_thread(kSetHardware, Probe{});
  for (int k = kNumOsCounters; k < kNumCounters; ++k)
    EXPECT_TRUE(c.sample.has(k) != !c.why[k].empty()) << counter_name(k) << ": " << c.why[k];
  for (int k = 0; k < kNumOsCounters; ++k) EXPECT_FALSE(c.sample.has(k)) << "not asked for: " << counter_name(k);
  Probe no_pmu;
  no_pmu.refuse_perf = ENOENT;
  const Counted v = count_migrating_thread(kSetHardware, no_pmu);
  for (int k = kNumOsCounters; k < kNumCounters; ++k)
    EXPECT_NE(v.why[k].find("ENOENT: no hardware performance counters"), std::string::npos) << v.why[k];
}

// A fake /proc: the counts are the differences since open(), parsed from
// status and stat; a missing sched file leaves migrations with a reason.
TEST(Counters, ProcFallbackParsesTheKernelsFilesAndSaysWhatIsMissing) {
  const fs::path root = fs::temp_directory_path() / ("canopy_counters_proc_" + std::to_string(getpid()));
  fs::remove_all(root);
  const fs::path task = root / "self/task/4242";
  fs::create_directories(task);
  fs::create_directories(root / "sys/kernel");
  std::ofstream(root / "sys/kernel/perf_event_paranoid") << "2\n";
  auto write = [&](int vol, int invol, int minflt, int majflt) {
    std::ofstream(task / "status") << "Name:\tx\nvoluntary_ctxt_switches:\t" << vol
                                   << "\nnonvoluntary_ctxt_switches:\t" << invol << "\n";
    std::ofstream(task / "stat") << "4242 (a (strange) name) S 1 2 3 4 5 6 " << minflt << " 0 " << majflt
                                 << " 0 7 8\n";
  };
  write(5, 3, 100, 2);
  Probe p;
  p.refuse_perf = EPERM;
  p.proc_root = root.string();
  ThreadCounters tc;
  tc.open(4242, kSetOs, p);
  write(9, 4, 150, 3);
  const Sample s = tc.read();
  ASSERT_TRUE(s.has(kContextSwitches));
  EXPECT_EQ(s.value[kContextSwitches], 5u);  // (9 + 4) - (5 + 3)
  ASSERT_TRUE(s.has(kPageFaults));
  EXPECT_EQ(s.value[kPageFaults], 51u);  // (150 + 3) - (100 + 2)
  EXPECT_FALSE(s.has(kCpuMigrations));
  const std::string why = tc.why_missing(kCpuMigrations);
  EXPECT_NE(why.find("perf_event_paranoid is 2"), std::string::npos) << why;
  EXPECT_NE(why.find("se.nr_migrations"), std::string::npos) << why;
  EXPECT_NE(why.find("CONFIG_SCHED_DEBUG"), std::string::npos) << why;
  // The thread is gone before anyone read its final counts: a reason.
  fs::remove_all(task);
  const Sample gone = tc.read();
  EXPECT_FALSE(gone.has(kContextSwitches));
  EXPECT_NE(tc.why_missing(kContextSwitches).find("ended before its counts were read"), std::string::npos);
  fs::remove_all(root);
}

// CANOPY_COUNTERS is read by every runtime when it is made: a bad value is
// that runtime's error, naming the variable and the value.
TEST(Counters, BadCanopyCountersIsAnErrorOfTheRuntime) {
  for (const char* bad : {"cycles", "none,os", "os,,energy"}) {
    setenv("CANOPY_COUNTERS", bad, 1);
    try {
      canopy::Runtime rt(two_workers(false));
      ADD_FAILURE() << bad << " was accepted";
    } catch (const canopy::Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("CANOPY_COUNTERS='") + bad + "': unknown word"),
                std::string::npos)
          << e.what();
    }
    unsetenv("CANOPY_COUNTERS");
  }
}

TEST(Counters, CounterSetsParseAndBadValuesNameTheVariable) {
  EXPECT_EQ(parse_counter_sets("all", "V"), unsigned{kSetAll});
  EXPECT_EQ(parse_counter_sets("none", "V"), 0u);
  EXPECT_EQ(parse_counter_sets("os, energy", "V"), unsigned{kSetOs | kSetEnergy});
  EXPECT_EQ(parse_counter_sets("hardware", "V"), unsigned{kSetHardware});
  for (const char* bad : {"cycles", "os,", "ALL", "none,os"}) {
    try {
      parse_counter_sets(bad, "CANOPY_COUNTERS");
      ADD_FAILURE() << bad << " was accepted";
    } catch (const canopy::Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("CANOPY_COUNTERS='") + bad + "'"), std::string::npos)
          << e.what();
    }
  }
}


// CANOPY_STATS: worker 0 (the thread that made the runtime) migrates inside
// run(), worker 1 in a task bound to it; the table shows their counts, and every counter asked for has a
// column or an "unavailable" line naming it.
TEST(Counters, StatsPrintEveryCounterOrWhyNot) {
  std::string text;
  {
    canopy::Runtime rt(two_workers(true));
    rt.run([] { migrate_sleep_and_touch(allowed_cpus()); });
    {
      canopy::TaskGroup g(rt);
      g.spawn(canopy::Affinity::worker(1, /*strict=*/true), [] { migrate_sleep_and_touch(allowed_cpus()); });
      g.wait();
    }
    // Worker 1's thread is counted too: the same, in a task only it may run.
    for (int w = 0; w < 2; ++w) {
      const Sample s = canopy::detail::worker_counters(rt.core(), w);
      EXPECT_TRUE(s.has(kContextSwitches) && s.has(kPageFaults)) << w;
      EXPECT_GT(s.value[kContextSwitches], 0u) << w;
      EXPECT_GE(s.value[kPageFaults], 64u) << w;
      if (allowed_cpus().size() > 1 && s.has(kCpuMigrations)) {
        EXPECT_GT(s.value[kCpuMigrations], 0u) << w;
      }
    }
    std::ostringstream out;
    rt.print_stats(out);
    text = out.str();
  }
  EXPECT_NE(text.find("counters per worker"), std::string::npos) << text;
  std::vector<std::string> lines;
  {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
  }
  std::string header;  // the line after "counters per worker"
  for (std::size_t i = 0; i + 1 < lines.size(); ++i)
    if (lines[i].find("counters per worker") != std::string::npos) header = lines[i + 1] + " ";
  for (int k = 0; k < kNumCounters; ++k) {
    const std::string name = counter_name(k);
    const bool column = header.find(" " + name + " ") != std::string::npos ||
                        header.find(" " + name + ":u ") != std::string::npos;
    bool reason = false;
    for (const std::string& l : lines)
      reason |= l.rfind("canopy stats: counters ", 0) == 0 && l.find(name) != std::string::npos &&
                l.find(" unavailable: ") != std::string::npos;
    EXPECT_TRUE(column != reason) << name << " must be counted or explained (once):\n" << text;
  }
  EXPECT_NE(text.find("canopy stats: energy"), std::string::npos) << text;
}

// perf_event refused for the whole runtime: the hardware counters get one
// line with the reason, the OS counters a note on where they came from.
TEST(Counters, StatsSayWhichCountersAreUnavailableAndWhy) {
  Probe refused;
  refused.refuse_perf = EACCES;
  set_test_probe(&refused);
  std::ostringstream out;
  {
    canopy::Runtime rt(two_workers(true));
    rt.run([] { migrate_sleep_and_touch(allowed_cpus()); });
    rt.print_stats(out);
  }
  set_test_probe(nullptr);
  const std::string text = out.str();
  EXPECT_NE(text.find("canopy stats: counters cycles, instructions, cache-misses, stalled-cycles-frontend, "
                      "stalled-cycles-backend unavailable: perf_event_open refused (EACCES"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("from /proc/self/task/TID"), std::string::npos) << text;
  EXPECT_NE(text.find("context-switches"), std::string::npos) << text;
}

// Nobody asked (no CANOPY_STATS, no trace): no counter is opened.
TEST(Counters, NoCountersWhenNeitherStatsNorTraceAskForThem) {
  ASSERT_FALSE(canopy::trace_active());
  canopy::Runtime rt(two_workers(false));
  rt.run([] {});
  EXPECT_EQ(rt.core()->counters.load(), nullptr);
  EXPECT_EQ(canopy::detail::worker_counters(rt.core(), 0).have, 0u);
  setenv("CANOPY_COUNTERS", "none", 1);
  canopy::Runtime quiet(two_workers(true));
  unsetenv("CANOPY_COUNTERS");
  std::ostringstream out;
  quiet.print_stats(out);
  EXPECT_EQ(out.str().find("counters"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("energy"), std::string::npos) << out.str();
}

}  // namespace
