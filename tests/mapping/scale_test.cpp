// Every policy at scale: 4,096 tasks on a 4,096-PU machine, sparse (2D
// stencil, permuted) and dense (all-to-all). Times are printed, not asserted
// (CI machines are shared); the test fails only on an invalid placement or
// an exception. The dense case is 4,096 tasks in optimised builds without
// sanitizers, 1,024 otherwise, to keep the suite fast.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "canopy/cost.hpp"
#include "canopy/mapping.hpp"
#include "mapping_test_util.hpp"

using namespace canopy;
using namespace canopy::test;

namespace {

#if defined(NDEBUG) && !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
constexpr int kDense = 4096;
#else
constexpr int kDense = 1024;
#endif

const char* kAll[] = {"compact", "scatter", "treematch", "eagermap", "choicemap"};

void run_all(const Topology& t, const CommMatrix& m, const char* what) {
  for (const char* p : kAll) {
    auto a = std::chrono::steady_clock::now();
    Placement pl = map_tasks(t, m, p);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    ASSERT_EQ(pl.num_tasks(), m.size());
    for (int l : loads(t, pl.task_pu)) ASSERT_LE(l, ceil_div(m.size(), t.num_pus()));
    std::printf("[ timing   ] %-10s %-9s %5d tasks %5d PUs: %.3f s, weighted cost %.4g\n", what, p, m.size(),
                t.num_pus(), s, evaluate(t, m, pl).weighted);
  }
}

}  // namespace

TEST(Scale, Sparse4096) {
  // Arity 64 under each NUMA node: the large-arity paths of every policy.
  Topology t = Topology::from_synthetic("pack:16 numa:2 core:64 pu:2");
  ASSERT_EQ(t.num_pus(), 4096);
  run_all(t, stencil2d(4096), "stencil");
  run_all(t, permuted(stencil2d(4096)), "permuted");
  run_all(t, random_sparse(4096, 6), "random");
}

TEST(Scale, SparseOversubscribed) {
  Topology t = Topology::from_synthetic("pack:8 numa:2 core:32 pu:8");
  run_all(t, permuted(stencil2d(6144)), "permuted");
}

TEST(Scale, Dense) {
  Topology t = Topology::from_synthetic("pack:16 numa:2 core:64 pu:2");
  run_all(t, all_to_all(kDense), "all-to-all");
}
