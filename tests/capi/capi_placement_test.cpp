// C API: the policy registry, placements computed by every policy and given
// by the caller, their accessors, formats and cost -- each checked against
// the C++ API it wraps -- and every error status.
#include <numeric>
#include <set>

#include "canopy/comm_matrix.hpp"
#include "canopy/cost.hpp"
#include "canopy/formats.hpp"
#include "canopy/mapping.hpp"
#include "canopy/topology.hpp"
#include "capi_test_util.hpp"

using namespace capi_test;

namespace {

const char* kMachine = "pack:2 numa:1 core:3 pu:2";

// A ring of 6 tasks with uneven weights, in both APIs.
canopy::CommMatrix ring_cpp() {
  std::vector<canopy::Edge> e;
  for (int i = 0; i < 6; ++i) e.push_back({i, (i + 1) % 6, 1.0 + i});
  return canopy::CommMatrix::from_edges(6, e);
}

Matrix ring_c() {
  std::vector<canopy_edge_t> e;
  for (int i = 0; i < 6; ++i) e.push_back({i, (i + 1) % 6, 1.0 + i});
  canopy_matrix_t* m = nullptr;
  EXPECT_EQ(canopy_matrix_create_from_edges(&m, 6, e.data(), e.size(), nullptr), CANOPY_OK);
  return Matrix(m);
}

Place make(const canopy_topology_t* t, const canopy_matrix_t* m, const char* policy, unsigned flags = 0) {
  canopy_map_options_t o = {flags, nullptr, 0};
  canopy_placement_t* p = nullptr;
  EXPECT_CANOPY_OK(canopy_placement_create(&p, t, m, policy, &o));
  return Place(p);
}

std::string str(canopy_status_t (*f)(const canopy_placement_t*, char*, size_t, size_t*), const canopy_placement_t* p) {
  size_t needed = 0;
  EXPECT_EQ(f(p, nullptr, 0, &needed), CANOPY_OK);
  std::string s(needed, '\0');
  EXPECT_EQ(f(p, s.data(), s.size(), nullptr), CANOPY_OK);
  s.resize(needed ? needed - 1 : 0);
  return s;
}

}  // namespace

TEST(CapiPolicy, ListMatchesTheRegistry) {
  size_t count = 0;
  EXPECT_CANOPY_OK(canopy_policy_count(&count));
  ASSERT_EQ(count, canopy::policies().size());
  ASSERT_GE(count, 2u);
  std::set<std::string> names;
  for (size_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    const char* description = nullptr;
    EXPECT_CANOPY_OK(canopy_policy_get(i, &name, &description));
    EXPECT_EQ(name, canopy::policies()[i].name);
    EXPECT_EQ(description, canopy::policies()[i].description);
    EXPECT_FALSE(std::string(description).empty());
    names.insert(name);
    // Static strings: the same pointer each time.
    const char* again = nullptr;
    EXPECT_CANOPY_OK(canopy_policy_get(i, &again, nullptr));
    EXPECT_EQ(again, name);
  }
  EXPECT_TRUE(names.count("compact"));
  const char* def = nullptr;
  EXPECT_CANOPY_OK(canopy_policy_default(&def));
  EXPECT_EQ(def, canopy::default_policy());

  const char* name = nullptr;
  EXPECT_CANOPY_ERROR(canopy_policy_get(count, &name, nullptr), CANOPY_ERANGE, "canopy_policy_get",
                      std::to_string(count));
  EXPECT_CANOPY_ERROR(canopy_policy_get(0, nullptr, nullptr), CANOPY_EINVAL, "canopy_policy_get", "both NULL");
  EXPECT_CANOPY_ERROR(canopy_policy_count(nullptr), CANOPY_EINVAL, "canopy_policy_count", "count is NULL");
  EXPECT_CANOPY_ERROR(canopy_policy_default(nullptr), CANOPY_EINVAL, "canopy_policy_default", "name is NULL");
}

TEST(CapiPlacement, EveryPolicyAgreesWithTheCppApi) {
  Topo t = synthetic(kMachine);
  Matrix m = ring_c();
  canopy::Topology topo = canopy::Topology::from_synthetic(kMachine);
  canopy::CommMatrix cm = ring_cpp();
  size_t count = 0;
  canopy_policy_count(&count);
  for (size_t i = 0; i < count; ++i) {
    const char* name = nullptr;
    canopy_policy_get(i, &name, nullptr);
    if (std::string(name).rfind("capi-test-", 0) == 0) continue;  // the throwing test policies
    Place p = make(t.get(), m.get(), name);
    ASSERT_TRUE(p) << name;
    canopy::Placement cpp = canopy::map_tasks(topo, cm, name);
    int n = 0;
    EXPECT_CANOPY_OK(canopy_placement_num_tasks(p.get(), &n));
    ASSERT_EQ(n, 6);
    const char* pname = nullptr;
    EXPECT_CANOPY_OK(canopy_placement_policy(p.get(), &pname));
    EXPECT_STREQ(pname, name);
    for (int k = 0; k < n; ++k) {
      int pu = -1, os = -1, helper = 0;
      EXPECT_CANOPY_OK(canopy_placement_task_pu(p.get(), k, &pu));
      EXPECT_CANOPY_OK(canopy_placement_task_pu_os(p.get(), k, &os));
      EXPECT_CANOPY_OK(canopy_placement_helper_pu(p.get(), k, &helper));
      EXPECT_EQ(pu, cpp.task_pu[k]) << name << " task " << k;
      EXPECT_EQ(os, topo.pu(pu).os_index);
      EXPECT_EQ(helper, -1);
    }
    EXPECT_EQ(str(canopy_placement_omp_places, p.get()), canopy::omp_places(topo, cpp)) << name;
    canopy_cost_t c{};
    EXPECT_CANOPY_OK(canopy_placement_cost(p.get(), m.get(), nullptr, 0, &c));
    canopy::Cost cc = canopy::evaluate(topo, cm, cpp);
    EXPECT_DOUBLE_EQ(c.hop_bytes, cc.hop_bytes);
    EXPECT_DOUBLE_EQ(c.weighted, cc.weighted);
    EXPECT_DOUBLE_EQ(c.numa_crossing, cc.numa_crossing);
  }
  // NULL policy = the default one.
  canopy_placement_t* raw = nullptr;
  ASSERT_EQ(canopy_placement_create(&raw, t.get(), m.get(), nullptr, nullptr), CANOPY_OK) << canopy_last_error();
  Place d(raw);
  const char* pname = "";
  EXPECT_CANOPY_OK(canopy_placement_policy(d.get(), &pname));
  EXPECT_EQ(std::string(pname), canopy::default_policy());
}

TEST(CapiPlacement, FlagsReachTheEngine) {
  Topo t = synthetic(kMachine);
  canopy::Topology topo = canopy::Topology::from_synthetic(kMachine);
  Matrix m = empty_matrix(2);
  canopy::MapOptions opt;
  opt.granularity = canopy::Granularity::Core;
  opt.helpers = canopy::Helpers::SMT;
  opt.pack = true;
  canopy::Placement cpp = canopy::map_tasks(topo, canopy::CommMatrix(2), "compact", opt);
  Place p = make(t.get(), m.get(), "compact",
                 CANOPY_MAP_GRANULARITY_CORE | CANOPY_MAP_HELPERS_SMT | CANOPY_MAP_PACK);
  ASSERT_TRUE(p);
  for (int k = 0; k < 2; ++k) {
    int helper = -2;
    EXPECT_CANOPY_OK(canopy_placement_helper_pu(p.get(), k, &helper));
    EXPECT_EQ(helper, cpp.helper_pu.at(k));
    EXPECT_GE(helper, 0);
    // Core granularity: the task is bound to both PUs of its core.
    int cpus[4] = {-1, -1, -1, -1};
    size_t n = 0;
    EXPECT_CANOPY_OK(canopy_placement_task_binding(p.get(), k, cpus, 4, &n));
    std::vector<int> want;
    for (int pu : cpp.binding(topo, k)) want.push_back(topo.pu(pu).os_index);
    EXPECT_EQ(std::vector<int>(cpus, cpus + n), want);
    EXPECT_EQ(n, 2u);
    // Too small: the count is still given.
    int one = -1;
    EXPECT_CANOPY_ERROR(canopy_placement_task_binding(p.get(), k, &one, 1, &n), CANOPY_ENOBUFS,
                        "canopy_placement_task_binding", "too small");
    EXPECT_EQ(n, 2u);
    EXPECT_EQ(one, want[0]);
    EXPECT_CANOPY_OK(canopy_placement_task_binding(p.get(), k, nullptr, 0, &n));
  }
  EXPECT_EQ(str(canopy_placement_omp_places, p.get()), canopy::omp_places(topo, cpp));
}

TEST(CapiPlacement, UnknownFlagBitsAndBadOptions) {
  Topo t = synthetic(kMachine);
  Matrix m = empty_matrix(3);
  canopy_placement_t* raw = nullptr;
  canopy_map_options_t o = {1u << 7, nullptr, 0};
  EXPECT_CANOPY_ERROR(canopy_placement_create(&raw, t.get(), m.get(), "compact", &o), CANOPY_EINVAL,
                      "canopy_placement_create", "unknown flag bits 0x80");
  o.flags = CANOPY_MAP_PACK | (1u << 31);
  EXPECT_CANOPY_ERROR(canopy_placement_create(&raw, t.get(), m.get(), "compact", &o), CANOPY_EINVAL,
                      "canopy_placement_create", "0x80000000");
  o.flags = 0;
  o.num_weights = 2;
  EXPECT_CANOPY_ERROR(canopy_placement_create(&raw, t.get(), m.get(), "compact", &o), CANOPY_EINVAL,
                      "canopy_placement_create", "weights is NULL");
  const double negative[] = {-1, 1, 1, 1};
  o.weights = negative;
  o.num_weights = 4;
  EXPECT_EQ(canopy_placement_create(&raw, t.get(), m.get(), "compact", &o), CANOPY_EINVAL);
  EXPECT_CANOPY_ERROR(canopy_placement_create(&raw, t.get(), m.get(), "no-such-policy", nullptr), CANOPY_EINVAL,
                      "canopy_placement_create", "compact");  // the message lists the known policies
  EXPECT_CANOPY_ERROR(canopy_placement_create(&raw, nullptr, m.get(), "compact", nullptr), CANOPY_EINVAL,
                      "canopy_placement_create", "topo is NULL");
  EXPECT_CANOPY_ERROR(canopy_placement_create(&raw, t.get(), nullptr, "compact", nullptr), CANOPY_EINVAL,
                      "canopy_placement_create", "matrix is NULL");
  EXPECT_CANOPY_ERROR(canopy_placement_create(nullptr, t.get(), m.get(), "compact", nullptr), CANOPY_EINVAL,
                      "canopy_placement_create", "out is NULL");
  EXPECT_EQ(raw, nullptr);
}

TEST(CapiPlacement, WeightsChangeTheWeightedCost) {
  Topo t = synthetic(kMachine);
  Matrix m = ring_c();
  Place p = make(t.get(), m.get(), "compact");
  int levels = 0;
  canopy_topology_num_levels(t.get(), &levels);
  std::vector<double> zero(levels, 0.0);
  canopy_cost_t c{};
  EXPECT_CANOPY_OK(canopy_placement_cost(p.get(), m.get(), zero.data(), zero.size(), &c));
  EXPECT_EQ(c.weighted, 0.0);
  canopy_map_options_t o = {0, zero.data(), zero.size()};
  canopy_placement_t* raw = nullptr;
  EXPECT_CANOPY_OK(canopy_placement_create(&raw, t.get(), m.get(), "compact", &o));
  canopy_placement_destroy(raw);
  EXPECT_CANOPY_ERROR(canopy_placement_cost(p.get(), m.get(), nullptr, 3, &c), CANOPY_EINVAL,
                      "canopy_placement_cost", "weights is NULL");
}

TEST(CapiPlacement, FormatsMatchTheCppFormats) {
  Topo t = synthetic(kMachine);
  Matrix m = ring_c();
  canopy::Topology topo = canopy::Topology::from_synthetic(kMachine);
  canopy::CommMatrix cm = ring_cpp();
  canopy::Placement cpp = canopy::map_tasks(topo, cm, "compact");
  Place p = make(t.get(), m.get(), "compact");
  for (const std::string& f : canopy::placement_format_names()) {
    for (const canopy_matrix_t* with : {static_cast<const canopy_matrix_t*>(nullptr),
                                        static_cast<const canopy_matrix_t*>(m.get())}) {
      size_t needed = 0;
      EXPECT_CANOPY_OK(canopy_placement_format(p.get(), f.c_str(), with, nullptr, 0, &needed));
      std::string s(needed, '\0');
      EXPECT_CANOPY_OK(canopy_placement_format(p.get(), f.c_str(), with, s.data(), s.size(), nullptr));
      s.resize(needed - 1);
      EXPECT_EQ(s, canopy::format_placement(topo, cpp, canopy::parse_placement_format(f), with ? &cm : nullptr)) << f;
    }
  }
  char buf[16];
  EXPECT_CANOPY_ERROR(canopy_placement_format(p.get(), "bmp", nullptr, buf, sizeof buf, nullptr), CANOPY_EINVAL,
                      "canopy_placement_format", "bmp");
  Matrix other = empty_matrix(2);
  EXPECT_CANOPY_ERROR(canopy_placement_format(p.get(), "table", other.get(), buf, sizeof buf, nullptr),
                      CANOPY_EINVAL, "canopy_placement_format", "2 tasks but the placement has 6");
  EXPECT_CANOPY_ERROR(canopy_placement_format(p.get(), nullptr, nullptr, buf, sizeof buf, nullptr), CANOPY_EINVAL,
                      "canopy_placement_format", "format is NULL");
  EXPECT_CANOPY_ERROR(canopy_placement_omp_places(p.get(), buf, 3, nullptr), CANOPY_ENOBUFS,
                      "canopy_placement_omp_places", "too small");
}

TEST(CapiPlacement, TasksPerNuma) {
  Topo t = synthetic("pack:1 numa:3 core:2 pu:1");
  Matrix m = empty_matrix(6);
  Place p = make(t.get(), m.get(), "compact");
  int counts[3] = {0, 0, 0};
  size_t n = 0;
  EXPECT_CANOPY_OK(canopy_placement_tasks_per_numa(p.get(), counts, 3, &n));
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(counts[0] + counts[1] + counts[2], 6);
  EXPECT_EQ(counts[0], 2);  // six tasks on six PUs: two per node
  EXPECT_CANOPY_ERROR(canopy_placement_tasks_per_numa(p.get(), counts, 2, &n), CANOPY_ENOBUFS,
                      "canopy_placement_tasks_per_numa", "3 needed");
  EXPECT_CANOPY_ERROR(canopy_placement_tasks_per_numa(p.get(), nullptr, 2, &n), CANOPY_EINVAL,
                      "canopy_placement_tasks_per_numa", "NULL");
}

TEST(CapiPlacement, GivenByTheCaller) {
  Topo t = synthetic(kMachine);  // 12 PUs
  const int pus[] = {11, 0, 5};
  canopy_placement_t* raw = nullptr;
  EXPECT_CANOPY_OK(canopy_placement_create_from_pus(&raw, t.get(), pus, 3, 0));
  Place p(raw);
  const char* name = nullptr;
  canopy_placement_policy(p.get(), &name);
  EXPECT_STREQ(name, "given");
  int pu = -1;
  EXPECT_CANOPY_OK(canopy_placement_task_pu(p.get(), 0, &pu));
  EXPECT_EQ(pu, 11);
  EXPECT_EQ(str(canopy_placement_omp_places, p.get()), "{11},{0},{5}");
  // Cost of a given placement.
  const canopy_edge_t e[] = {{0, 1, 10.0}};
  canopy_matrix_t* m = nullptr;
  ASSERT_EQ(canopy_matrix_create_from_edges(&m, 3, e, 1, nullptr), CANOPY_OK);
  Matrix mm(m);
  canopy_cost_t c{};
  EXPECT_CANOPY_OK(canopy_placement_cost(p.get(), mm.get(), nullptr, 0, &c));
  EXPECT_GT(c.hop_bytes, 0.0);
  // Core granularity.
  EXPECT_CANOPY_OK(canopy_placement_create_from_pus(&raw, t.get(), pus, 3, CANOPY_MAP_GRANULARITY_CORE));
  Place core(raw);
  EXPECT_EQ(str(canopy_placement_omp_places, core.get()), "{10,11},{0,1},{4,5}");

  const int outside[] = {0, 12};
  EXPECT_CANOPY_ERROR(canopy_placement_create_from_pus(&raw, t.get(), outside, 2, 0), CANOPY_ERANGE,
                      "canopy_placement_create_from_pus", "task 1 has PU 12");
  const int crowded[] = {3, 3};
  EXPECT_CANOPY_ERROR(canopy_placement_create_from_pus(&raw, t.get(), crowded, 2, 0), CANOPY_EINVAL,
                      "canopy_placement_create_from_pus", "PU 3");
  EXPECT_CANOPY_ERROR(canopy_placement_create_from_pus(&raw, t.get(), pus, 3, CANOPY_MAP_PACK), CANOPY_EINVAL,
                      "canopy_placement_create_from_pus", "unknown flag bits 0x1");
  EXPECT_CANOPY_ERROR(canopy_placement_create_from_pus(&raw, t.get(), pus, -1, 0), CANOPY_EINVAL,
                      "canopy_placement_create_from_pus", "negative");
  EXPECT_CANOPY_ERROR(canopy_placement_create_from_pus(&raw, t.get(), nullptr, 2, 0), CANOPY_EINVAL,
                      "canopy_placement_create_from_pus", "task_pu is NULL");
  EXPECT_EQ(raw, nullptr);
}

TEST(CapiPlacement, AccessorErrors) {
  Topo t = synthetic(kMachine);
  Matrix m = empty_matrix(2);
  Place p = make(t.get(), m.get(), "compact");
  int v = 0;
  const char* s = nullptr;
  EXPECT_CANOPY_ERROR(canopy_placement_task_pu(p.get(), 2, &v), CANOPY_ERANGE, "canopy_placement_task_pu",
                      "task 2 is outside [0, 2)");
  EXPECT_CANOPY_ERROR(canopy_placement_task_pu_os(p.get(), -1, &v), CANOPY_ERANGE, "canopy_placement_task_pu_os",
                      "task -1");
  EXPECT_CANOPY_ERROR(canopy_placement_helper_pu(p.get(), 9, &v), CANOPY_ERANGE, "canopy_placement_helper_pu",
                      "task 9");
  EXPECT_CANOPY_ERROR(canopy_placement_task_binding(p.get(), 5, nullptr, 0, nullptr), CANOPY_ERANGE,
                      "canopy_placement_task_binding", "task 5");
  EXPECT_CANOPY_ERROR(canopy_placement_num_tasks(nullptr, &v), CANOPY_EINVAL, "canopy_placement_num_tasks",
                      "placement is NULL");
  EXPECT_CANOPY_ERROR(canopy_placement_num_tasks(p.get(), nullptr), CANOPY_EINVAL, "canopy_placement_num_tasks",
                      "out is NULL");
  EXPECT_CANOPY_ERROR(canopy_placement_policy(nullptr, &s), CANOPY_EINVAL, "canopy_placement_policy", "NULL");
  EXPECT_CANOPY_ERROR(canopy_placement_task_pu(p.get(), 0, nullptr), CANOPY_EINVAL, "canopy_placement_task_pu",
                      "pu is NULL");
  EXPECT_CANOPY_ERROR(canopy_placement_omp_places(nullptr, nullptr, 0, nullptr), CANOPY_EINVAL,
                      "canopy_placement_omp_places", "placement is NULL");
  canopy_cost_t c;
  Matrix three = empty_matrix(3);
  EXPECT_CANOPY_ERROR(canopy_placement_cost(p.get(), three.get(), nullptr, 0, &c), CANOPY_EINVAL,
                      "canopy_placement_cost", "3 tasks but the placement has 2");
  EXPECT_CANOPY_ERROR(canopy_placement_cost(p.get(), m.get(), nullptr, 0, nullptr), CANOPY_EINVAL,
                      "canopy_placement_cost", "cost is NULL");
  EXPECT_CANOPY_ERROR(canopy_placement_cost(p.get(), nullptr, nullptr, 0, &c), CANOPY_EINVAL,
                      "canopy_placement_cost", "matrix is NULL");
  // A synthetic machine's placement cannot bind threads of this one.
  EXPECT_CANOPY_ERROR(canopy_placement_bind_thread(p.get(), 0), CANOPY_ENOSYS, "canopy_placement_bind_thread",
                      "not this machine");
  EXPECT_CANOPY_ERROR(canopy_placement_bind_thread(p.get(), 7), CANOPY_ERANGE, "canopy_placement_bind_thread",
                      "task 7");
  canopy_placement_destroy(nullptr);
}
