// The `canopy` policy: valid placements that fill the engine's slots exactly
// on balanced, unbalanced and SMT-less machines in every regime (spread,
// pack, full, 1.5x and 3x+1 oversubscription); the same placement every
// time; the same quality whatever the task numbering; the brute-force
// optimum on small cases; pairs that should share a core do; sparse input
// maps without n^2 memory. Algorithm pieces (exact bisection, FM, the
// refinements) are tested in canopy_parts_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <numeric>
#include <string>

#include "canopy/comm_matrix.hpp"
#include "canopy/cost.hpp"
#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "canopy/topology.hpp"
#include "mapping/canopy/canopy_policy.hpp"
#include "mapping_test_util.hpp"

using namespace canopy;
using canopy::test::range;

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// The policy as the engine calls it: resolved weights, the engine's slots.
struct Mapped {
  Slots slots;
  std::vector<int> task_pu;
  double cost = 0;
};

Mapped run_canopy(const Topology& topo, const CommMatrix& m, bool pack = false) {
  MapOptions o;
  o.pack = pack;
  o.weights = resolve_weights(topo, {});
  Mapped r;
  r.slots = choose_slots(topo, m.size(), o);
  r.task_pu = policy::canopy(topo, m, o, r.slots);
  r.cost = evaluate(topo, m, r.task_pu).weighted;
  return r;
}

// Every task on a PU of the machine, every PU holding exactly its slots.
void expect_fills_slots(const Topology& topo, const Mapped& r, const std::string& what) {
  ASSERT_EQ(r.task_pu.size(), static_cast<size_t>(std::accumulate(r.slots.capacity.begin(), r.slots.capacity.end(), 0)))
      << what;
  std::vector<int> load(topo.num_pus(), 0);
  for (int p : r.task_pu) {
    ASSERT_GE(p, 0) << what;
    ASSERT_LT(p, topo.num_pus()) << what;
    ++load[p];
  }
  for (int p = 0; p < topo.num_pus(); ++p) EXPECT_EQ(load[p], r.slots.capacity[p]) << what << ", PU " << p;
}

double brute_force_optimum(const Topology& topo, const CommMatrix& m) {
  // All placements of the tasks onto the PUs (one per PU): next_permutation
  // over the PU list.
  std::vector<int> pus = range(0, topo.num_pus());
  double best = 1e300;
  do {
    std::vector<int> task_pu(pus.begin(), pus.begin() + m.size());
    best = std::min(best, evaluate(topo, m, task_pu).weighted);
  } while (std::next_permutation(pus.begin(), pus.end()));
  return best;
}

// The least cost over every filling of the given slots (permutations of the
// slot list): the optimum of the regime, not of the whole machine.
double brute_force_in_slots(const Topology& topo, const CommMatrix& m, const Slots& slots) {
  std::vector<int> list;
  for (int p = 0; p < topo.num_pus(); ++p)
    for (int k = 0; k < slots.capacity[p]; ++k) list.push_back(p);
  double best = 1e300;
  do {
    best = std::min(best, evaluate(topo, m, list).weighted);
  } while (std::next_permutation(list.begin(), list.end()));
  return best;
}

CommMatrix random_dense(int n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> w(0, 100);
  std::vector<Edge> e;
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      if (int x = w(rng); x > 40) e.push_back({i, j, static_cast<double>(x * x)});
  return CommMatrix::from_edges(n, e);
}

CommMatrix stencil3d(int nx, int ny, int nz, double w = 100) {
  std::vector<Edge> e;
  auto id = [&](int x, int y, int z) { return (z * ny + y) * nx + x; };
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        if (x + 1 < nx) e.push_back({id(x, y, z), id(x + 1, y, z), w});
        if (y + 1 < ny) e.push_back({id(x, y, z), id(x, y + 1, z), w});
        if (z + 1 < nz) e.push_back({id(x, y, z), id(x, y, z + 1), w});
      }
  return CommMatrix::from_edges(nx * ny * nz, e);
}

long vm_hwm_kb() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

}  // namespace

TEST(CanopyPolicy, IsRegisteredAndDefault) {
  EXPECT_NO_THROW(find_policy("canopy"));
  EXPECT_EQ(default_policy(), "canopy");
  Topology topo = Topology::from_synthetic("pack:2 core:4 pu:2");
  Placement p = map_tasks(topo, test::stencil2d(16), "canopy");
  EXPECT_EQ(p.policy, "canopy");
  EXPECT_EQ(p.num_tasks(), 16);
}

TEST(CanopyPolicy, FillsSlotsInEveryRegime) {
  const std::vector<std::string> machines = {"pack:2 core:4 pu:2", "numa:3 core:4 pu:4", "pack:3 numa:2 core:3 pu:1",
                                             "pack:2 numa:2 l3:2 core:2 pu:2"};
  for (const std::string& desc : machines) {
    Topology topo = Topology::from_synthetic(desc);
    const int P = topo.num_pus();
    // Under sanitizers (10-30x slower) a subset: spread, full, oversubscribed.
    const std::vector<int> counts = kSanitized ? std::vector<int>{1, P / 2 + 1, P, P + P / 2}
                                               : std::vector<int>{1, 3, P / 3, P / 2 + 1, P - 1, P, P + P / 2, 3 * P + 1};
    for (int T : counts) {
      for (bool pack : {false, true}) {
        if (pack && T >= P) continue;
        for (int kind = 0; kind < 2; ++kind) {
          CommMatrix m = kind == 0 ? test::random_sparse(T, 6, T) : test::pipeline(T);
          const std::string what = desc + ", T=" + std::to_string(T) + (pack ? " pack" : "") + " kind " +
                                   std::to_string(kind);
          Mapped r = run_canopy(topo, m, pack);
          expect_fills_slots(topo, r, what);
        }
      }
    }
  }
}

TEST(CanopyPolicy, UnbalancedTrees) {
  // 17 + 16 cores (like KNL's uneven tiles), and a machine with a core missing
  // here and there.
  Topology knl_like = Topology::from_synthetic("numa:2 core:17 pu:2").restricted(range(0, 66));
  Topology holes = Topology::from_synthetic("pack:2 core:4 pu:2").restricted({0, 1, 2, 3, 6, 7, 8, 9, 10, 11, 14});
  for (const Topology* topo : {&knl_like, &holes}) {
    const int P = topo->num_pus();
    for (int T : kSanitized ? std::vector<int>{P / 2, P} : std::vector<int>{P / 2, P, 2 * P - 1}) {
      Mapped r = run_canopy(*topo, test::random_sparse(T, 8, 5));
      expect_fills_slots(*topo, r, topo->source() + " T=" + std::to_string(T));
      Mapped s = run_canopy(*topo, test::stencil2d(T));
      expect_fills_slots(*topo, s, topo->source() + " stencil T=" + std::to_string(T));
    }
  }
}

TEST(CanopyPolicy, Deterministic) {
  Topology topo = Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");
  const int dense = kSanitized ? 12 : 24;  // all-to-all is the slowest input under sanitizers
  for (const CommMatrix& m :
       {test::permuted(test::stencil2d(32)), test::random_sparse(40, 8, 2), test::all_to_all(dense)}) {
    Mapped a = run_canopy(topo, m);
    Mapped b = run_canopy(topo, m);
    EXPECT_EQ(a.task_pu, b.task_pu);
  }
}

TEST(CanopyPolicy, IndependentOfTaskNumbering) {
  // A stencil and the same stencil with its task ids shuffled: the policy
  // sees the same graph, so it must reach the same cost (within noise), and
  // TreeMatch-like numbering effects (1.3x-2.6x) must not appear.
  struct Case {
    std::string topo;
    CommMatrix m;
  };
  const std::vector<Case> cases = {{"pack:2 core:8 pu:2", test::stencil2d(32)},
                                   {"pack:6 core:8 pu:2", test::stencil2d(96)},
                                   {"pack:4 numa:2 core:4 pu:2", stencil3d(4, 4, 4)}};
  for (const Case& c : cases) {
    Topology topo = Topology::from_synthetic(c.topo);
    const double plain = run_canopy(topo, c.m).cost;
    for (unsigned seed : {1u, 2u}) {
      const double shuffled = run_canopy(topo, test::permuted(c.m, seed)).cost;
      EXPECT_LT(shuffled, plain * 1.04) << c.topo << " seed " << seed;
      EXPECT_GT(shuffled, plain / 1.04) << c.topo << " seed " << seed;
    }
  }
}

TEST(CanopyPolicy, ReachesBruteForceOptimum) {
  // 8 tasks on 8 PUs (8! placements) and 6 tasks on an arity-3 machine.
  Topology two = Topology::from_synthetic("pack:2 core:2 pu:2");
  Topology three = Topology::from_synthetic("pack:3 core:2 pu:1");
  for (unsigned seed = 1; seed <= 6; ++seed) {
    CommMatrix m = random_dense(8, seed);
    EXPECT_DOUBLE_EQ(run_canopy(two, m).cost, brute_force_optimum(two, m)) << "seed " << seed;
    CommMatrix m6 = random_dense(6, seed + 100);
    EXPECT_DOUBLE_EQ(run_canopy(three, m6).cost, brute_force_optimum(three, m6)) << "seed " << seed;
  }
  CommMatrix pipe = test::pipeline(8);
  EXPECT_DOUBLE_EQ(run_canopy(two, pipe).cost, brute_force_optimum(two, pipe));
}

TEST(CanopyPolicy, ReachesBruteForceOptimumWhenSpread) {
  // Spread regime, fewer tasks than PUs: one core holds two tasks, the others
  // one. Sparse random graphs where the seeded starts alone stopped 3-30%
  // above the optimum; the iterated local search (mapper.cpp) reaches it.
  struct Case {
    const char* topo;
    int tasks;
    unsigned seed;
  };
  for (const Case& c : {Case{"pack:3 core:2 pu:2", 7, 19}, Case{"pack:3 core:2 pu:2", 7, 14},
                        Case{"pack:3 core:2 pu:2", 8, 18}, Case{"pack:2 core:3 pu:2", 7, 1},
                        Case{"pack:2 core:3 pu:2", 8, 3}, Case{"pack:3 core:4 pu:2", 7, 15}}) {
    Topology topo = Topology::from_synthetic(c.topo);
    CommMatrix m = test::random_sparse(c.tasks, 4, c.seed);
    Mapped r = run_canopy(topo, m);
    EXPECT_DOUBLE_EQ(r.cost, brute_force_in_slots(topo, m, r.slots)) << c.topo << " " << c.tasks << " tasks, seed " << c.seed;
  }
}

TEST(CanopyPolicy, PairsThatShouldShareACoreDo) {
  // Heavy pairs (2k, 2k+1), light traffic between pairs, ids shuffled: every
  // heavy pair must end on one core, in every regime that has two slots per
  // core; with one task per core (spread, half the PUs) they share a package.
  const CommMatrix m = test::permuted(test::blocks(32, {1000, 10, 1}), 4);
  std::vector<int> partner(32);
  {
    std::vector<Edge> e = m.edges();
    for (const Edge& x : e)
      if (x.weight == 1000) {
        partner[x.i] = x.j;
        partner[x.j] = x.i;
      }
  }
  Topology topo = Topology::from_synthetic("pack:2 core:8 pu:2");
  Mapped r = run_canopy(topo, m);
  for (int t = 0; t < 32; ++t) EXPECT_EQ(topo.pu(r.task_pu[t]).core, topo.pu(r.task_pu[partner[t]]).core) << t;

  Topology big = Topology::from_synthetic("pack:2 core:16 pu:2");
  Mapped s = run_canopy(big, m);  // spread: one task per core
  for (int t = 0; t < 32; ++t)
    EXPECT_GE(big.common_level(s.task_pu[t], s.task_pu[partner[t]]), 1) << "pair of " << t << " split across packages";
}

TEST(CanopyPolicy, OversubscribedPairsSharePus) {
  // 2 tasks per PU: the heavy pairs of a shuffled pairs matrix share PUs.
  const CommMatrix m = test::permuted(test::blocks(64, {1000, 10, 1}), 9);
  Topology topo = Topology::from_synthetic("pack:2 core:8 pu:2");
  Mapped r = run_canopy(topo, m);
  expect_fills_slots(topo, r, "2x");
  std::vector<Edge> e = m.edges();
  for (const Edge& x : e)
    if (x.weight == 1000) EXPECT_EQ(r.task_pu[x.i], r.task_pu[x.j]) << x.i << "-" << x.j;
}

TEST(CanopyPolicy, BeatsCompactOnShuffledStencil) {
  Topology topo = Topology::from_synthetic("pack:4 numa:2 core:8 pu:2");
  CommMatrix m = test::permuted(test::stencil2d(128), 3);
  MapOptions o;
  o.weights = resolve_weights(topo, {});
  Slots s = choose_slots(topo, 128, o);
  const double compact = evaluate(topo, m, find_policy("compact").map(topo, m, o, s)).weighted;
  const double ours = run_canopy(topo, m).cost;
  EXPECT_LT(ours, 0.5 * compact);
}

TEST(CanopyPolicy, UserWeightsChangeTheObjective) {
  // With all the weight on crossing packages, the packages' cut is what
  // counts; with it on the core level, pairs per core count.
  Topology topo = Topology::from_synthetic("pack:2 core:4 pu:2");
  CommMatrix m = random_dense(16, 77);
  MapOptions o;
  o.weights = {0, 100, 0, 0};
  Slots s = choose_slots(topo, 16, o);
  std::vector<int> pkg = policy::canopy(topo, m, o, s);
  o.weights = {0, 0, 100, 0};
  std::vector<int> core = policy::canopy(topo, m, o, s);
  EXPECT_LE(evaluate(topo, m, pkg, {0, 100, 0, 0}).weighted, evaluate(topo, m, core, {0, 100, 0, 0}).weighted);
  EXPECT_LE(evaluate(topo, m, core, {0, 0, 100, 0}).weighted, evaluate(topo, m, pkg, {0, 0, 100, 0}).weighted);
}

TEST(CanopyPolicy, NoCommunicationAndTinyInputs) {
  Topology topo = Topology::from_synthetic("pack:2 core:2 pu:2");
  for (int T : {1, 2, 5, 8, 17}) {
    Mapped r = run_canopy(topo, CommMatrix(T));
    expect_fills_slots(topo, r, "no edges T=" + std::to_string(T));
  }
  Topology one = Topology::from_synthetic("pu:1");
  Mapped r = run_canopy(one, test::stencil2d(6));
  expect_fills_slots(one, r, "one PU");
}

// The run-time effort (canopy_lean, automatic affinity's) on a small graph:
// the video pipeline's 70 recurring tasks on 4 NUMA nodes must cross at
// most 1.05x the NUMA volume of the best placement `canopy compare` finds
// (the full effort: 687,360 bytes, in 0.5 s; `canopy compare --input
// 'numa:4 core:2 pu:1' --matrix data/matrices/video_stream_70.edges`).
// One start crossed 740,192 (1.08x); the best of 8, which small graphs get
// now, 710,880.
TEST(CanopyPolicy, RunTimeEffortOnASmallGraphIsWithin5PercentOfTheBest) {
  const CommMatrix m = read_matrix(std::string(CANOPY_SOURCE_DIR) + "/data/matrices/video_stream_70.edges");
  ASSERT_EQ(m.size(), 70);
  Topology topo = Topology::from_synthetic("numa:4 core:2 pu:1");
  MapOptions o;
  o.weights = resolve_weights(topo, {});
  const Slots slots = choose_slots(topo, m.size(), o);
  const std::vector<int> pu = policy::canopy_lean(topo, m, o, slots);
  EXPECT_LE(evaluate(topo, m, pu, o.weights).numa_crossing, 1.05 * 687360);
}

TEST(CanopyPolicy, RejectsSlotsThatDoNotMatch) {
  Topology topo = Topology::from_synthetic("pack:2 core:2 pu:2");
  CommMatrix m = test::stencil2d(8);
  MapOptions o;
  Slots wrong_size{std::vector<int>(7, 1)};
  EXPECT_THROW(policy::canopy(topo, m, o, wrong_size), Error);
  Slots wrong_sum{std::vector<int>(8, 2)};
  try {
    policy::canopy(topo, m, o, wrong_sum);
    FAIL() << "expected canopy::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("16"), std::string::npos) << e.what();
  }
  Slots negative{std::vector<int>{2, 2, 2, 2, 2, -1, -1, -0}};
  EXPECT_THROW(policy::canopy(topo, m, o, negative), Error);
}

TEST(CanopyPolicy, SparseInputWithoutQuadraticMemory) {
  // A 100,000-task stencil (20,000 under sanitizers): n^2 doubles would be
  // 80 GB; the policy must stay within a small multiple of the edges.
  const int nx = kSanitized ? 20 : 50, ny = 40, nz = kSanitized ? 25 : 50;
  CommMatrix m = stencil3d(nx, ny, nz);
  Topology topo = Topology::from_synthetic("pack:4 numa:2 core:16 pu:2");
  const long before = vm_hwm_kb();
  const auto t0 = std::chrono::steady_clock::now();
  Mapped r = run_canopy(topo, m);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  expect_fills_slots(topo, r, "large stencil");
  const long after = vm_hwm_kb();
  if (!kSanitized && before > 0) EXPECT_LT(after - before, 400 * 1024) << "kB of peak memory added";
  RecordProperty("seconds", std::to_string(secs));
}
