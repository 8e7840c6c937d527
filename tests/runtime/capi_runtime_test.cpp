// The runtime's C API (canopy_runtime.h): create/destroy, task groups with
// function pointers, parallel_for, errors as statuses with messages; with
// 1, 2 and 5 workers.
#include "canopy_runtime.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "test_util.hpp"

namespace {

class CapiRuntime : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    canopy_runtime_options_t o = {};
    o.num_threads = GetParam();
    o.bind = CANOPY_BIND_NONE;
    ASSERT_EQ(canopy_runtime_create(&rt_, &o), CANOPY_OK) << canopy_last_error();
  }
  void TearDown() override { canopy_runtime_destroy(rt_); }
  canopy_runtime_t* rt_ = nullptr;
};

void add_one(void* arg) { static_cast<std::atomic<int>*>(arg)->fetch_add(1); }

struct SumArgs {
  std::vector<std::atomic<int>>* hits;
};

void mark(int64_t lo, int64_t hi, void* arg) {
  auto* hits = static_cast<SumArgs*>(arg)->hits;
  for (int64_t i = lo; i < hi; ++i) (*hits)[i].fetch_add(1);
}

struct Nested {
  canopy_runtime_t* rt;
  std::atomic<int>* count;
};

void spawn_inside(void* arg) {
  auto* n = static_cast<Nested*>(arg);
  canopy_task_group_t* g = nullptr;
  ASSERT_EQ(canopy_task_group_create(&g, n->rt), CANOPY_OK);
  for (int i = 0; i < 10; ++i) ASSERT_EQ(canopy_task_group_spawn(g, add_one, n->count), CANOPY_OK);
  ASSERT_EQ(canopy_task_group_wait(g), CANOPY_OK);
  canopy_task_group_destroy(g);
}

void throws(void*) { throw std::runtime_error("thrown by a task"); }

void record_index(void* arg) { canopy_runtime_worker_index(static_cast<int*>(arg)); }

struct Where {
  canopy_runtime_t* rt;
  int want = -1;          // worker, or node when by_node
  bool by_node = false;
  std::atomic<int>* wrong;
  std::atomic<int>* ran;
};

void check_where(void* arg) {
  auto* w = static_cast<Where*>(arg);
  int me = -1, node = -1;
  canopy_runtime_worker_index(&me);
  canopy_runtime_worker_numa_node(w->rt, me, &node);
  if ((w->by_node ? node : me) != w->want) w->wrong->fetch_add(1);
  w->ran->fetch_add(1);
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Workers, CapiRuntime, ::testing::ValuesIn(canopy_test::kWorkerCounts),
                         [](const auto& info) { return canopy_test::worker_name(info.param); });

TEST_P(CapiRuntime, WorkersAndPlacement) {
  int n = 0;
  ASSERT_EQ(canopy_runtime_num_workers(rt_, &n), CANOPY_OK);
  EXPECT_EQ(n, GetParam());
  int pu = -1, os = -1;
  EXPECT_EQ(canopy_runtime_worker_pu(rt_, n - 1, &pu, &os), CANOPY_OK);
  EXPECT_GE(pu, 0);
  EXPECT_GE(os, 0);
  EXPECT_EQ(canopy_runtime_worker_pu(rt_, n, &pu, &os), CANOPY_ERANGE);
  int idx = 7;
  ASSERT_EQ(canopy_runtime_worker_index(&idx), CANOPY_OK);
  EXPECT_EQ(idx, -1);
  ASSERT_EQ(canopy_runtime_run(rt_, record_index, &idx), CANOPY_OK);
  EXPECT_EQ(idx, 0);
}

TEST_P(CapiRuntime, SpawnAndWait) {
  std::atomic<int> count{0};
  canopy_task_group_t* g = nullptr;
  ASSERT_EQ(canopy_task_group_create(&g, rt_), CANOPY_OK);
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(canopy_task_group_spawn(g, add_one, &count), CANOPY_OK);
  ASSERT_EQ(canopy_task_group_wait(g), CANOPY_OK);
  EXPECT_EQ(count.load(), 1000);
  // Again, with nested groups inside tasks.
  Nested nested{rt_, &count};
  for (int i = 0; i < 20; ++i) ASSERT_EQ(canopy_task_group_spawn(g, spawn_inside, &nested), CANOPY_OK);
  ASSERT_EQ(canopy_task_group_wait(g), CANOPY_OK);
  EXPECT_EQ(count.load(), 1200);
  canopy_task_group_destroy(g);
  canopy_task_group_destroy(nullptr);
}

TEST_P(CapiRuntime, ParallelFor) {
  std::vector<std::atomic<int>> hits(10007);
  SumArgs args{&hits};
  ASSERT_EQ(canopy_parallel_for(rt_, 0, 10007, 0, mark, &args), CANOPY_OK);
  ASSERT_EQ(canopy_parallel_for(rt_, 0, 10007, 100, mark, &args), CANOPY_OK);
  for (auto& h : hits) ASSERT_EQ(h.load(), 2);
  EXPECT_EQ(canopy_parallel_for(rt_, 0, 10, -1, mark, &args), CANOPY_EINVAL);
  EXPECT_NE(std::string(canopy_last_error()).find("grain"), std::string::npos);
  EXPECT_EQ(canopy_parallel_for(rt_, 0, 10, 0, nullptr, &args), CANOPY_EINVAL);
}

TEST_P(CapiRuntime, ErrorsAreStatuses) {
  canopy_task_group_t* g = nullptr;
  EXPECT_EQ(canopy_task_group_create(&g, nullptr), CANOPY_EINVAL);
  EXPECT_EQ(g, nullptr);
  EXPECT_NE(std::string(canopy_last_error()).find("canopy_task_group_create"), std::string::npos);
  ASSERT_EQ(canopy_task_group_create(&g, rt_), CANOPY_OK);
  EXPECT_EQ(canopy_task_group_spawn(g, nullptr, nullptr), CANOPY_EINVAL);
  // A task that throws: the wait reports it, the group stays usable.
  ASSERT_EQ(canopy_task_group_spawn(g, throws, nullptr), CANOPY_OK);
  EXPECT_EQ(canopy_task_group_wait(g), CANOPY_EUNKNOWN);
  EXPECT_NE(std::string(canopy_last_error()).find("thrown by a task"), std::string::npos);
  std::atomic<int> count{0};
  ASSERT_EQ(canopy_task_group_spawn(g, add_one, &count), CANOPY_OK);
  EXPECT_EQ(canopy_task_group_wait(g), CANOPY_OK);
  EXPECT_STREQ(canopy_last_error(), "");
  EXPECT_EQ(count.load(), 1);
  canopy_task_group_destroy(g);
  int n = 0;
  EXPECT_EQ(canopy_runtime_num_workers(nullptr, &n), CANOPY_EINVAL);
  EXPECT_EQ(canopy_runtime_run(rt_, nullptr, nullptr), CANOPY_EINVAL);
}

TEST_P(CapiRuntime, SpawnWithAffinity) {
  int n = 0, k = 0;
  ASSERT_EQ(canopy_runtime_num_workers(rt_, &n), CANOPY_OK);
  ASSERT_EQ(canopy_runtime_num_numa_nodes(rt_, &k), CANOPY_OK);
  EXPECT_GE(k, 1);
  int node = -1;
  EXPECT_EQ(canopy_runtime_worker_numa_node(rt_, n, &node), CANOPY_ERANGE);
  canopy_task_group_t* g = nullptr;
  ASSERT_EQ(canopy_task_group_create(&g, rt_), CANOPY_OK);
  std::atomic<int> wrong{0}, ran{0};
  std::vector<Where> args(200);
  for (int i = 0; i < 200; ++i) {
    args[i] = Where{rt_, i % 2 ? (i + 5) % n : (i + 5) % k, i % 2 == 0, &wrong, &ran};
    canopy_affinity_t a = {};
    a.kind = i % 2 ? CANOPY_AFFINITY_WORKER : CANOPY_AFFINITY_NODE;
    a.index = i + 5;  // wraps
    a.flags = CANOPY_AFFINITY_STRICT;
    ASSERT_EQ(canopy_task_group_spawn_affinity(g, &a, check_where, &args[i]), CANOPY_OK) << canopy_last_error();
  }
  std::atomic<int> plain{0};
  ASSERT_EQ(canopy_task_group_spawn_affinity(g, nullptr, add_one, &plain), CANOPY_OK);
  ASSERT_EQ(canopy_task_group_wait(g), CANOPY_OK) << canopy_last_error();
  EXPECT_EQ(ran.load(), 200);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(plain.load(), 1);
  // Bad hints are statuses.
  canopy_affinity_t bad = {};
  const int bad_kind = 7;
  std::memcpy(&bad.kind, &bad_kind, sizeof bad_kind);
  EXPECT_EQ(canopy_task_group_spawn_affinity(g, &bad, add_one, &plain), CANOPY_EINVAL);
  EXPECT_NE(std::string(canopy_last_error()).find("affinity kind = 7"), std::string::npos) << canopy_last_error();
  bad = {};
  bad.kind = CANOPY_AFFINITY_WORKER;
  bad.flags = 1u << 5;
  EXPECT_EQ(canopy_task_group_spawn_affinity(g, &bad, add_one, &plain), CANOPY_EINVAL);
  bad = {};
  bad.kind = CANOPY_AFFINITY_DATA;  // the null handle
  EXPECT_EQ(canopy_task_group_spawn_affinity(g, &bad, add_one, &plain), CANOPY_EINVAL);
  EXPECT_NE(std::string(canopy_last_error()).find("null data handle"), std::string::npos) << canopy_last_error();
  ASSERT_EQ(canopy_task_group_wait(g), CANOPY_OK);
  EXPECT_EQ(plain.load(), 1);
  canopy_task_group_destroy(g);
}

TEST(CapiRuntimeOptions, BadOptionsAreRejected) {
  canopy_runtime_t* rt = nullptr;
  canopy_runtime_options_t o = {};
  o.flags = 1u << 7;
  EXPECT_EQ(canopy_runtime_create(&rt, &o), CANOPY_EINVAL);
  EXPECT_EQ(rt, nullptr);
  o = {};
  const int bad_bind = 9;  // what a C caller can store in the enum
  std::memcpy(&o.bind, &bad_bind, sizeof bad_bind);
  EXPECT_EQ(canopy_runtime_create(&rt, &o), CANOPY_EINVAL);
  o = {};
  const int bad_affinity = 3;
  std::memcpy(&o.data_affinity, &bad_affinity, sizeof bad_affinity);
  EXPECT_EQ(canopy_runtime_create(&rt, &o), CANOPY_EINVAL);
  EXPECT_NE(std::string(canopy_last_error()).find("data_affinity = 3"), std::string::npos);
  o = {};
  o.num_threads = -2;
  EXPECT_EQ(canopy_runtime_create(&rt, &o), CANOPY_EINVAL);
  o = {};
  o.policy = "no-such-policy";
  EXPECT_EQ(canopy_runtime_create(&rt, &o), CANOPY_EINVAL);
  EXPECT_NE(std::string(canopy_last_error()).find("no-such-policy"), std::string::npos);
  EXPECT_EQ(canopy_runtime_create(nullptr, nullptr), CANOPY_EINVAL);
}

TEST(CapiRuntimeOptions, FromTheEnvironment) {
  setenv("CANOPY_NUM_THREADS", "3", 1);
  setenv("CANOPY_BIND", "none", 1);
  canopy_runtime_t* rt = nullptr;
  ASSERT_EQ(canopy_runtime_create(&rt, nullptr), CANOPY_OK) << canopy_last_error();
  int n = 0;
  canopy_runtime_num_workers(rt, &n);
  EXPECT_EQ(n, 3);
  canopy_runtime_destroy(rt);
  setenv("CANOPY_NUM_THREADS", "lots", 1);
  EXPECT_EQ(canopy_runtime_create(&rt, nullptr), CANOPY_EINVAL);
  EXPECT_NE(std::string(canopy_last_error()).find("CANOPY_NUM_THREADS"), std::string::npos);
  unsetenv("CANOPY_NUM_THREADS");
  unsetenv("CANOPY_BIND");
}
