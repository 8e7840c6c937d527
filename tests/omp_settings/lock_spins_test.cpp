// lock_spins (src/omp/core/futex.hpp): how long a waiter for a briefly
// held lock (a parent's dependence map) polls before sleeping. The runtime's
// spin budget where there is one; when the process is oversubscribed (spin
// budget 0) still a short poll, because a sleep there cost a futex wait,
// a wake and two context switches per collision (16 threads on 2 cores
// finishing one thread's dependent tasks: 3.3 us per task instead of 1.1);
// nothing under OMP_WAIT_POLICY=passive.
#include <gtest/gtest.h>

#include "omp/core/futex.hpp"

using canopy::omp::kOversubscribedLockSpins;
using canopy::omp::lock_spins;

TEST(LockSpins, TheSpinBudgetWhereThereIsOne) {
  EXPECT_EQ(lock_spins(20000, false, false), 20000);
  EXPECT_EQ(lock_spins(300, false, false), 300);  // kmp_set_blocktime / GOMP_SPINCOUNT
}

TEST(LockSpins, OversubscribedStillPollsBriefly) {
  EXPECT_GT(kOversubscribedLockSpins, 0);
  EXPECT_LE(kOversubscribedLockSpins, 1024);  // microseconds, not a time slice
  EXPECT_EQ(lock_spins(0, true, false), kOversubscribedLockSpins);
}

TEST(LockSpins, PassiveOrNotOversubscribedWithoutBudgetSleepsAtOnce) {
  EXPECT_EQ(lock_spins(0, true, true), 0);   // OMP_WAIT_POLICY=passive
  EXPECT_EQ(lock_spins(0, false, false), 0);  // a spin count of 0 asked for
}
