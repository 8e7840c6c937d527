// C API: binding threads of this machine (directly, with a placement, and
// as members of a team) and the errors of each call. The machine's CPU count
// is never assumed: expectations come from the CPUs this process may use.
#include <algorithm>
#include <thread>

#include "capi_test_util.hpp"

using namespace capi_test;

namespace {

std::vector<int> my_binding() {
  int cpus[4096];
  size_t n = 0;
  EXPECT_EQ(canopy_thread_binding(cpus, 4096, &n), CANOPY_OK) << canopy_last_error();
  return std::vector<int>(cpus, cpus + std::min<size_t>(n, 4096));
}

std::vector<int> task_binding(const canopy_placement_t* p, int task) {
  int cpus[4096];
  size_t n = 0;
  EXPECT_EQ(canopy_placement_task_binding(p, task, cpus, 4096, &n), CANOPY_OK) << canopy_last_error();
  std::vector<int> v(cpus, cpus + std::min<size_t>(n, 4096));
  std::sort(v.begin(), v.end());
  return v;
}

// Runs f on a fresh thread (so that binding it leaves the test's own thread alone).
template <class F>
void on_thread(F f) {
  std::thread(f).join();
}

}  // namespace

TEST(CapiThread, BindingAndCpu) {
  std::vector<int> b = my_binding();
  ASSERT_FALSE(b.empty());
  EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
  int cpu = -1;
  EXPECT_CANOPY_OK(canopy_thread_cpu(&cpu));
  EXPECT_TRUE(std::find(b.begin(), b.end(), cpu) != b.end()) << cpu;
}

TEST(CapiThread, BindToOneCpu) {
  const std::vector<int> all = my_binding();
  on_thread([&] {
    const int last = all.back();
    EXPECT_CANOPY_OK(canopy_thread_bind(&last, 1));
    EXPECT_EQ(my_binding(), std::vector<int>{last});
    int cpu = -1;
    EXPECT_CANOPY_OK(canopy_thread_cpu(&cpu));
    EXPECT_EQ(cpu, last);
  });
  EXPECT_EQ(my_binding(), all);  // only that thread was bound
}

TEST(CapiThread, BindErrors) {
  on_thread([] {
    const int huge = 1 << 20;
    EXPECT_CANOPY_ERROR(canopy_thread_bind(&huge, 1), CANOPY_EINVAL, "canopy_thread_bind", "CPU 1048576");
    const int negative = -1;
    EXPECT_CANOPY_ERROR(canopy_thread_bind(&negative, 1), CANOPY_EINVAL, "canopy_thread_bind", "CPU -1");
    const int some = 0;
    EXPECT_CANOPY_ERROR(canopy_thread_bind(&some, 0), CANOPY_EINVAL, "canopy_thread_bind", "no CPU");
    EXPECT_CANOPY_ERROR(canopy_thread_bind(nullptr, 2), CANOPY_EINVAL, "canopy_thread_bind", "os_indexes is NULL");
  });
  size_t n = 0;
  EXPECT_CANOPY_OK(canopy_thread_binding(nullptr, 0, &n));  // a count query
  EXPECT_GE(n, 1u);
  int one = -1;
  if (n > 1) {
    EXPECT_CANOPY_ERROR(canopy_thread_binding(&one, 1, &n), CANOPY_ENOBUFS, "canopy_thread_binding", "too small");
    EXPECT_EQ(one, my_binding().front());
  }
  EXPECT_CANOPY_ERROR(canopy_thread_binding(nullptr, 4, &n), CANOPY_EINVAL, "canopy_thread_binding", "NULL");
  EXPECT_CANOPY_ERROR(canopy_thread_cpu(nullptr), CANOPY_EINVAL, "canopy_thread_cpu", "os_index is NULL");
}

TEST(CapiThread, BindWithAPlacementOfThisMachine) {
  canopy_topology_t* raw = nullptr;
  ASSERT_EQ(canopy_topology_create(&raw), CANOPY_OK);
  Topo t(raw);
  Matrix m = empty_matrix(3);
  canopy_placement_t* p = nullptr;
  ASSERT_EQ(canopy_placement_create(&p, t.get(), m.get(), "compact", nullptr), CANOPY_OK) << canopy_last_error();
  Place place(p);
  for (int task = 0; task < 3; ++task)
    on_thread([&] {
      EXPECT_CANOPY_OK(canopy_placement_bind_thread(place.get(), task));
      EXPECT_EQ(my_binding(), task_binding(place.get(), task));
    });
}

TEST(CapiTeam, EveryMemberBindsWherePlaced) {
  canopy_team_t* raw = nullptr;
  EXPECT_CANOPY_OK(canopy_team_create(&raw, 3, "compact", 0, nullptr));
  Team team(raw);
  const canopy_placement_t* p = nullptr;
  EXPECT_CANOPY_OK(canopy_team_placement(team.get(), &p));
  ASSERT_NE(p, nullptr);
  int n = 0;
  canopy_placement_num_tasks(p, &n);
  EXPECT_EQ(n, 3);
  std::vector<std::thread> threads;
  std::vector<std::vector<int>> bound(3);
  std::vector<canopy_status_t> status(3, CANOPY_EUNKNOWN);
  for (int i = 0; i < 3; ++i)
    threads.emplace_back([&, i] {
      status[i] = canopy_team_bind(team.get(), i);
      bound[i] = my_binding();
    });
  for (auto& th : threads) th.join();
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(status[i], CANOPY_OK);
    EXPECT_EQ(bound[i], task_binding(p, i)) << "thread " << i;
  }
  on_thread([&] {
    EXPECT_CANOPY_ERROR(canopy_team_bind(team.get(), 3), CANOPY_ERANGE, "canopy_team_bind",
                        "thread_num 3 is outside [0, 3)");
  });
}

TEST(CapiTeam, WithAMatrixAndFlags) {
  const canopy_edge_t e[] = {{0, 1, 5.0}};
  canopy_matrix_t* m = nullptr;
  ASSERT_EQ(canopy_matrix_create_from_edges(&m, 2, e, 1, nullptr), CANOPY_OK);
  Matrix matrix(m);
  canopy_team_t* raw = nullptr;
  EXPECT_CANOPY_OK(canopy_team_create(&raw, 2, nullptr, CANOPY_MAP_GRANULARITY_CORE | CANOPY_MAP_PACK, matrix.get()));
  Team team(raw);
  on_thread([&] { EXPECT_CANOPY_OK(canopy_team_bind(team.get(), 1)); });
}

TEST(CapiTeam, PlanningErrorsReachEveryMember) {
  canopy_team_t* raw = nullptr;
  EXPECT_CANOPY_ERROR(canopy_team_create(&raw, 0, "compact", 0, nullptr), CANOPY_EINVAL, "canopy_team_create",
                      "num_threads = 0");
  ASSERT_NE(raw, nullptr);  // the team records the failure
  Team team(raw);
  for (int i = 0; i < 2; ++i)
    on_thread([&] {
      EXPECT_CANOPY_ERROR(canopy_team_bind(team.get(), i), CANOPY_EINVAL, "canopy_team_bind",
                          "planning the team failed: num_threads = 0");
    });
  const canopy_placement_t* p = reinterpret_cast<const canopy_placement_t*>(0x1);
  EXPECT_CANOPY_ERROR(canopy_team_placement(team.get(), &p), CANOPY_EINVAL, "canopy_team_placement",
                      "num_threads = 0");
  EXPECT_EQ(p, nullptr);

  EXPECT_CANOPY_ERROR(canopy_team_create(&raw, 2, "no-such-policy", 0, nullptr), CANOPY_EINVAL,
                      "canopy_team_create", "no-such-policy");
  canopy_team_destroy(raw);
  EXPECT_CANOPY_ERROR(canopy_team_create(&raw, 2, "compact", 1u << 9, nullptr), CANOPY_EINVAL, "canopy_team_create",
                      "unknown flag bits 0x200");
  canopy_team_destroy(raw);
  Matrix three = empty_matrix(3);
  EXPECT_CANOPY_ERROR(canopy_team_create(&raw, 2, "compact", 0, three.get()), CANOPY_EINVAL, "canopy_team_create",
                      "the matrix has 3 tasks but the team has 2 threads");
  canopy_team_destroy(raw);
  EXPECT_CANOPY_ERROR(canopy_team_create(&raw, 1 << 30, "compact", 0, nullptr), CANOPY_EINVAL, "canopy_team_create",
                      "per PU");
  canopy_team_destroy(raw);
  EXPECT_CANOPY_ERROR(canopy_team_create(nullptr, 2, "compact", 0, nullptr), CANOPY_EINVAL, "canopy_team_create",
                      "out is NULL");
  EXPECT_CANOPY_ERROR(canopy_team_bind(nullptr, 0), CANOPY_EINVAL, "canopy_team_bind", "team is NULL");
  EXPECT_CANOPY_ERROR(canopy_team_placement(nullptr, &p), CANOPY_EINVAL, "canopy_team_placement", "team is NULL");
  canopy_team_destroy(nullptr);
}
