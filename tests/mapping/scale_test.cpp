// Every registered policy (canopy's own included: the list is policies(),
// not a copy of it) at scale, timed.
//
// - Scale.Sparse4096 / SparseOversubscribed / Dense: 4,096 tasks on a
//   4,096-PU machine (6,144 on 4,096 oversubscribed), sparse (2D stencil,
//   permuted, random) and dense (all-to-all): the placement must be valid,
//   and in optimised builds without sanitizers every policy must finish
//   within a loose bound, 10x the slowest policy measured on the 2-core
//   development machine under load (below). In other builds the dense case
//   is 1,024 tasks and times are printed, not checked.
// - Scale.SparseTimeGrowsNearLinearly: a complexity check that needs no
//   machine speed. Each policy maps a permuted stencil of 8,192 and of
//   32,768 tasks (4x the tasks and edges) onto the same 4,096-PU machine
//   (2 and 8 tasks per PU: synthetic machines of more PUs take seconds to
//   build); the time may grow at most 10x (measured 4.4-5.2x: n log n plus
//   cache misses; an n^2 step would be 16x). Both sizes are in the same
//   effort step of canopy's policy (docs/policies/canopy.md). The least of
//   up to 3 runs counts, and 20 ms of slack covers policies too fast to
//   time. Optimised builds only.
// Time: 13-20 s in Release at load 10 (Dense 10-15 s of it); 40 s under
// ASan+UBSan (Debug), of which canopy's full-effort search on the two
// 4,096-task stencils takes 26 s.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "canopy/cost.hpp"
#include "canopy/mapping.hpp"
#include "mapping_test_util.hpp"

using namespace canopy;
using namespace canopy::test;

namespace {

#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
constexpr bool kTimed = true;
constexpr int kDense = 4096;
#else
constexpr bool kTimed = false;
constexpr int kDense = 1024;
#endif

double seconds_since(std::chrono::steady_clock::time_point a) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

// Maps with every policy, checks the placement, prints the time and, in
// timed builds, checks it against `bound` seconds.
void run_all(const Topology& t, const CommMatrix& m, const char* what, double bound) {
  ASSERT_NE(std::find_if(policies().begin(), policies().end(), [](const Policy& p) { return p.name == "canopy"; }),
            policies().end());
  for (const Policy& p : policies()) {
    const auto a = std::chrono::steady_clock::now();
    Placement pl = map_tasks(t, m, p.name);
    const double s = seconds_since(a);
    ASSERT_EQ(pl.num_tasks(), m.size()) << p.name;
    for (int l : loads(t, pl.task_pu)) ASSERT_LE(l, ceil_div(m.size(), t.num_pus())) << p.name;
    std::printf("[ timing   ] %-10s %-9s %5d tasks %5d PUs: %.3f s, weighted cost %.4g\n", what, p.name.c_str(),
                m.size(), t.num_pus(), s, evaluate(t, m, pl).weighted);
    if (kTimed) {
      EXPECT_LE(s, bound) << p.name << " on " << what << ": " << s << " s, bound " << bound << " s";
    }
  }
}

// The least time of `runs` mappings.
double least_time(const Topology& t, const CommMatrix& m, const std::string& policy, int runs) {
  double best = 1e300;
  for (int r = 0; r < runs; ++r) {
    const auto a = std::chrono::steady_clock::now();
    (void)map_tasks(t, m, policy);
    best = std::min(best, seconds_since(a));
  }
  return best;
}

}  // namespace

// Bounds: 10x the slowest policy (canopy) measured on the 2-core development
// machine at load 5-11: 0.5-1.0 s on the 4,096-task stencils, 0.1 s on
// 6,144 tasks oversubscribed, 3.5-4.7 s on the 4,096-task all-to-all.
TEST(Scale, Sparse4096) {
  // Arity 64 under each NUMA node: the large-arity paths of every policy.
  Topology t = Topology::from_synthetic("pack:16 numa:2 core:64 pu:2");
  ASSERT_EQ(t.num_pus(), 4096);
  run_all(t, stencil2d(4096), "stencil", 10);
  run_all(t, permuted(stencil2d(4096)), "permuted", 10);
  run_all(t, random_sparse(4096, 6), "random", 10);
}

TEST(Scale, SparseOversubscribed) {
  Topology t = Topology::from_synthetic("pack:8 numa:2 core:32 pu:8");
  run_all(t, permuted(stencil2d(6144)), "permuted", 10);
}

TEST(Scale, Dense) {
  Topology t = Topology::from_synthetic("pack:16 numa:2 core:64 pu:2");
  run_all(t, all_to_all(kDense), "all-to-all", 50);
}

TEST(Scale, SparseTimeGrowsNearLinearly) {
  if (!kTimed) GTEST_SKIP() << "times are checked in optimised builds without sanitizers only";
  constexpr int kSmall = 8192, kLarge = 4 * kSmall;
  constexpr double kMaxGrowth = 10, kSlack = 0.020;
  const Topology t = Topology::from_synthetic("pack:16 numa:2 core:64 pu:2");
  const CommMatrix small = permuted(stencil2d(kSmall)), large = permuted(stencil2d(kLarge));
  for (const Policy& p : policies()) {
    // One run each, more only while the growth looks too large (a preempted
    // run): the least of up to 3 counts.
    double ts = least_time(t, small, p.name, 1), tl = least_time(t, large, p.name, 1);
    for (int runs = 1; runs < 3 && tl > kMaxGrowth * ts + kSlack; ++runs) {
      ts = std::min(ts, least_time(t, small, p.name, 1));
      tl = std::min(tl, least_time(t, large, p.name, 1));
    }
    std::printf("[ timing   ] %-9s permuted stencil %d -> %d tasks: %.3f -> %.3f s (x%.1f)\n", p.name.c_str(), kSmall,
                kLarge, ts, tl, tl / ts);
    EXPECT_LE(tl, kMaxGrowth * ts + kSlack) << p.name << ": " << ts << " s at " << kSmall << " tasks, " << tl
                                            << " s at " << kLarge << " (at most x" << kMaxGrowth << " + "
                                            << kSlack << " s)";
  }
}
