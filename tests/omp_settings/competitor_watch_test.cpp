// CompetitorWatch (src/omp/core/competitor_watch.hpp): when an
// oversubscribed OpenMP team stops yielding. Slow yields are fed with
// made-up clocks: a process that keeps under half of the PUs for 10 ms with
// more threads awake than PUs has a competitor; one pause of the whole
// machine, CPUs left idle by sleeping threads, or the team's own work do
// not.
#include <gtest/gtest.h>

#include "omp/core/competitor_watch.hpp"

using canopy::omp::CompetitorWatch;
using canopy::omp::SlowYield;

namespace {
constexpr std::int64_t kMs = 1000000;
constexpr int kPus = 2;

// A slow yield at `ms` milliseconds after the process used `cpu_ms` of CPU
// time, with `awake` threads awake and `sleeps` sleeps begun so far.
SlowYield at(double ms, double cpu_ms, int awake = 16, std::uint64_t sleeps = 0) {
  return {static_cast<std::int64_t>(ms * kMs), static_cast<std::int64_t>(cpu_ms * kMs), awake, sleeps, kPus};
}
}  // namespace

TEST(CompetitorWatch, AShareUnderHalfKeptForTenMillisecondsIsACompetitor) {
  CompetitorWatch w;
  EXPECT_FALSE(w.confirms(at(100, 50)));  // opens a window
  EXPECT_FALSE(w.confirms(at(105, 52)));  // 5 ms: too early to tell
  EXPECT_TRUE(w.confirms(at(112, 55)));   // 12 ms at 5 of 24 ms of CPU: 0.21 of the PUs
}

TEST(CompetitorWatch, TheTeamsOwnThreadsOnTheCpusAreNoCompetitor) {
  CompetitorWatch w;
  EXPECT_FALSE(w.confirms(at(100, 50)));
  EXPECT_FALSE(w.confirms(at(115, 78)));  // 28 of 30 ms
  EXPECT_FALSE(w.confirms(at(130, 100)));
}

TEST(CompetitorWatch, OnePauseOfTheWholeMachineIsNoCompetitor) {
  // Seen on a quiet virtual machine: every thread's yield took 2.9 ms with
  // a share of 0.03, then the process had both CPUs again.
  CompetitorWatch w;
  EXPECT_FALSE(w.confirms(at(100, 50)));
  EXPECT_FALSE(w.confirms(at(102.9, 50.2)));  // the pause, seen by several threads
  EXPECT_FALSE(w.confirms(at(102.9, 50.2)));
  EXPECT_FALSE(w.confirms(at(111, 66)));  // 11 ms, 16 of 22 ms of CPU: 0.73
}

TEST(CompetitorWatch, CpusLeftIdleBySleepingThreadsAreNoCompetitor) {
  CompetitorWatch one_awake, slept_between;
  // No more threads awake than PUs at the window's end, or at its start.
  EXPECT_FALSE(one_awake.confirms(at(100, 50, 16)));
  EXPECT_FALSE(one_awake.confirms(at(120, 55, 2)));
  EXPECT_FALSE(one_awake.confirms(at(140, 60, 16)));
  // Threads began to sleep during the window (a serial part in between).
  EXPECT_FALSE(slept_between.confirms(at(100, 50, 16, 7)));
  EXPECT_FALSE(slept_between.confirms(at(120, 55, 16, 22)));
  // The next window, with no sleep in it, counts.
  EXPECT_TRUE(slept_between.confirms(at(140, 60, 16, 22)));
}

TEST(CompetitorWatch, AnOldWindowStartsAgain) {
  CompetitorWatch w;
  EXPECT_FALSE(w.confirms(at(100, 50)));
  EXPECT_FALSE(w.confirms(at(300, 60)));  // 200 ms later: stale, a new window
  EXPECT_TRUE(w.confirms(at(311, 62)));
}
