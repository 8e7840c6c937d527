// The data-flow C API (canopy_dataflow.h): order through function-pointer
// tasks, waits, locality, affinity hints from C, and every bad input giving
// its status and a message naming the argument.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <cstring>
#include <string>
#include <vector>

#include "canopy_dataflow.h"

namespace {

struct Rt {
  canopy_runtime_t* rt = nullptr;
  explicit Rt(int threads) {
    canopy_runtime_options_t o = {};
    o.num_threads = threads;
    o.bind = CANOPY_BIND_NONE;
    EXPECT_EQ(canopy_runtime_create(&rt, &o), CANOPY_OK) << canopy_last_error();
  }
  ~Rt() { canopy_runtime_destroy(rt); }
};

struct Chain {
  std::vector<int> log;
  int next = 0;
};

void push_next(void* arg) {
  auto* c = static_cast<Chain*>(arg);
  c->log.push_back(c->next++);
}

void expect_message(const std::string& part) {
  EXPECT_NE(std::string(canopy_last_error()).find(part), std::string::npos) << canopy_last_error();
}

}  // namespace

TEST(CapiDataflow, ChainRunsInOrderAndWaitsWork) {
  for (int threads : {1, 2, 5}) {
    Rt r(threads);
    Chain c;
    canopy_data_t d;
    ASSERT_EQ(canopy_data_register(&d, &c, sizeof c), CANOPY_OK);
    canopy_access_t acc = {d, CANOPY_ACCESS_READ_WRITE};
    for (int i = 0; i < 500; ++i) ASSERT_EQ(canopy_submit(r.rt, &acc, 1, nullptr, push_next, &c), CANOPY_OK);
    ASSERT_EQ(canopy_wait_data(r.rt, d), CANOPY_OK) << canopy_last_error();
    ASSERT_EQ(c.log.size(), 500u);
    for (int i = 0; i < 500; ++i) ASSERT_EQ(c.log[i], i);
    EXPECT_EQ(canopy_wait_all(r.rt), CANOPY_OK);
    std::uint64_t accesses = 0;
    EXPECT_EQ(canopy_data_locality(d, nullptr, nullptr, &accesses), CANOPY_OK);
    EXPECT_EQ(accesses, 500u);
    EXPECT_EQ(canopy_data_free(d), CANOPY_OK);
  }
}

TEST(CapiDataflow, AffinityHintFromC) {
  Rt r(2);
  std::atomic<int> ran{0};
  canopy_data_t d;
  int x = 0;
  ASSERT_EQ(canopy_data_register(&d, &x, sizeof x), CANOPY_OK);
  canopy_access_t acc = {d, CANOPY_ACCESS_WRITE};
  canopy_affinity_t on1 = {CANOPY_AFFINITY_WORKER, 1, CANOPY_AFFINITY_STRICT, d};
  struct Arg {
    std::atomic<int>* ran;
    int worker = -2;
  } arg{&ran};
  auto fn = [](void* p) {
    auto* a = static_cast<Arg*>(p);
    canopy_runtime_worker_index(&a->worker);
    ++*a->ran;
  };
  ASSERT_EQ(canopy_submit(r.rt, &acc, 1, &on1, fn, &arg), CANOPY_OK) << canopy_last_error();
  ASSERT_EQ(canopy_wait_all(r.rt), CANOPY_OK);
  EXPECT_EQ(ran.load(), 1);
  EXPECT_EQ(arg.worker, 1);
  EXPECT_EQ(canopy_data_free(d), CANOPY_OK);
}

TEST(CapiDataflow, BadInput) {
  Rt r(1);
  canopy_data_t d;
  int x = 0;
  ASSERT_EQ(canopy_data_register(&d, &x, sizeof x), CANOPY_OK);
  canopy_access_t acc = {d, CANOPY_ACCESS_READ};
  auto nop = [](void*) {};
  EXPECT_EQ(canopy_submit(r.rt, &acc, 1, nullptr, nullptr, nullptr), CANOPY_EINVAL);
  expect_message("canopy_submit: fn is NULL");
  EXPECT_EQ(canopy_submit(r.rt, nullptr, 2, nullptr, nop, nullptr), CANOPY_EINVAL);
  expect_message("accesses is NULL");
  std::vector<canopy_access_t> many(CANOPY_MAX_ACCESSES + 1, acc);
  EXPECT_EQ(canopy_submit(r.rt, many.data(), many.size(), nullptr, nop, nullptr), CANOPY_ERANGE);
  expect_message("257");
  canopy_access_t bad_mode = acc;
  const int seven = 7;
  std::memcpy(&bad_mode.mode, &seven, sizeof seven);
  EXPECT_EQ(canopy_submit(r.rt, &bad_mode, 1, nullptr, nop, nullptr), CANOPY_EINVAL);
  expect_message("accesses[0].mode = 7");
  canopy_affinity_t bad_flags = {CANOPY_AFFINITY_NODE, 0, 0x10u, {0, 0}};
  EXPECT_EQ(canopy_submit(r.rt, &acc, 1, &bad_flags, nop, nullptr), CANOPY_EINVAL);
  expect_message("unknown flag bits");
  canopy_affinity_t null_data = {CANOPY_AFFINITY_DATA, 0, 0, {0, 0}};
  EXPECT_EQ(canopy_submit(r.rt, &acc, 1, &null_data, nop, nullptr), CANOPY_EINVAL);
  EXPECT_EQ(canopy_submit(r.rt, nullptr, 0, nullptr, nop, nullptr), CANOPY_OK);  // no access: runs at once
  EXPECT_EQ(canopy_wait_all(r.rt), CANOPY_OK);
  EXPECT_EQ(canopy_data_free(d), CANOPY_OK);
  acc.data = d;  // freed now
  EXPECT_EQ(canopy_submit(r.rt, &acc, 1, nullptr, nop, nullptr), CANOPY_EINVAL);
  expect_message("data_free");
  EXPECT_EQ(canopy_wait_data(r.rt, d), CANOPY_EINVAL);
  expect_message("canopy_wait_data: wait: ");
  EXPECT_EQ(canopy_data_locality(d, nullptr, nullptr, nullptr), CANOPY_EINVAL);
  EXPECT_EQ(canopy_wait_all(r.rt), CANOPY_OK);
  EXPECT_STREQ(canopy_last_error(), "");
}

TEST(CapiDataflow, TaskGraphRunsInOrderOnEveryRunAndReportsBadInput) {
  Rt r(2);
  canopy_data_t d;
  int x = 0;
  ASSERT_EQ(canopy_data_register(&d, &x, sizeof x), CANOPY_OK);
  canopy_access_t acc = {d, CANOPY_ACCESS_READ_WRITE};
  canopy_taskgraph_t* g = nullptr;
  ASSERT_EQ(canopy_taskgraph_create(&g), CANOPY_OK);
  Chain c;
  for (int i = 0; i < 200; ++i) ASSERT_EQ(canopy_taskgraph_add(g, &acc, 1, nullptr, push_next, &c), CANOPY_OK);
  EXPECT_EQ(canopy_taskgraph_size(g), 200u);
  for (int run = 0; run < 3; ++run) ASSERT_EQ(canopy_taskgraph_run(g, r.rt), CANOPY_OK) << canopy_last_error();
  ASSERT_EQ(c.log.size(), 600u);
  for (int i = 0; i < 600; ++i) ASSERT_EQ(c.log[static_cast<std::size_t>(i)], i);
  auto nop = [](void*) {};
  EXPECT_EQ(canopy_taskgraph_add(g, &acc, 1, nullptr, nullptr, nullptr), CANOPY_EINVAL);
  expect_message("canopy_taskgraph_add: fn is NULL");
  EXPECT_EQ(canopy_taskgraph_add(nullptr, &acc, 1, nullptr, nop, nullptr), CANOPY_EINVAL);
  expect_message("graph is NULL");
  std::vector<canopy_access_t> many(CANOPY_MAX_ACCESSES + 1, acc);
  EXPECT_EQ(canopy_taskgraph_add(g, many.data(), many.size(), nullptr, nop, nullptr), CANOPY_ERANGE);
  EXPECT_EQ(canopy_taskgraph_run(nullptr, r.rt), CANOPY_EINVAL);
  EXPECT_EQ(canopy_taskgraph_create(nullptr), CANOPY_EINVAL);
  EXPECT_EQ(canopy_data_free(d), CANOPY_OK);
  EXPECT_EQ(canopy_taskgraph_add(g, &acc, 1, nullptr, nop, nullptr), CANOPY_EINVAL);
  expect_message("data_free");
  EXPECT_EQ(canopy_taskgraph_size(g), 200u);
  EXPECT_EQ(canopy_taskgraph_run(g, nullptr), CANOPY_OK);  // the freed handle is not looked at again
  EXPECT_EQ(c.log.size(), 800u);
  canopy_taskgraph_destroy(g);
  canopy_taskgraph_destroy(nullptr);
  EXPECT_EQ(canopy_taskgraph_size(nullptr), 0u);
}

// Issue 19, from C: tasks submitted to an explicit runtime are waited for by
// canopy_wait_all(NULL) and canopy_wait_data(NULL, d), and canopy_data_free
// waits for the tasks that still use the handle. The tasks carry a hint
// for worker 0, so that on one worker too they wait in the runtime's queue
// until a thread waits there.
namespace {

struct Slow {
  std::atomic<int> done{0};
};

void slow_task(void* arg) {
  std::this_thread::sleep_for(std::chrono::microseconds(200));
  ++static_cast<Slow*>(arg)->done;
}

}  // namespace

TEST(CapiDataflow, NullRuntimeWaitsCoverTasksOfAnExplicitRuntime) {
  for (int threads : {1, 2, 5}) {
    for (int round = 0; round < 5; ++round) {
      Rt r(threads);
      int x = 0, y = 0;
      canopy_data_t a, b;
      ASSERT_EQ(canopy_data_register(&a, &x, sizeof x), CANOPY_OK);
      ASSERT_EQ(canopy_data_register(&b, &y, sizeof y), CANOPY_OK);
      canopy_affinity_t on0 = {CANOPY_AFFINITY_WORKER, 0, 0, {0, 0}};
      canopy_access_t acc_a = {a, CANOPY_ACCESS_READ_WRITE}, acc_b = {b, CANOPY_ACCESS_READ_WRITE};
      Slow on_a, on_b;
      for (int i = 0; i < 20; ++i) {
        ASSERT_EQ(canopy_submit(r.rt, &acc_a, 1, &on0, slow_task, &on_a), CANOPY_OK) << canopy_last_error();
        ASSERT_EQ(canopy_submit(r.rt, &acc_b, 1, &on0, slow_task, &on_b), CANOPY_OK) << canopy_last_error();
      }
      ASSERT_EQ(canopy_wait_data(nullptr, a), CANOPY_OK) << canopy_last_error();
      ASSERT_EQ(on_a.done.load(), 20) << threads << " threads, round " << round;
      ASSERT_EQ(canopy_wait_all(nullptr), CANOPY_OK) << canopy_last_error();
      ASSERT_EQ(on_b.done.load(), 20) << threads << " threads, round " << round;
      // data_free waits for the tasks still using the handle.
      for (int i = 0; i < 5; ++i)
        ASSERT_EQ(canopy_submit(r.rt, &acc_a, 1, &on0, slow_task, &on_a), CANOPY_OK) << canopy_last_error();
      ASSERT_EQ(canopy_data_free(a), CANOPY_OK) << canopy_last_error();
      ASSERT_EQ(on_a.done.load(), 25) << threads << " threads, round " << round;
      ASSERT_EQ(canopy_data_free(b), CANOPY_OK);
    }
  }
}

TEST(CapiDataflow, NullRuntimeWaitReportsAFailedTaskOfAnExplicitRuntime) {
  Rt r(2);
  ASSERT_EQ(canopy_submit(r.rt, nullptr, 0, nullptr, [](void*) { throw std::runtime_error("boom in rt"); }, nullptr),
            CANOPY_OK);
  EXPECT_NE(canopy_wait_all(nullptr), CANOPY_OK);
  expect_message("boom in rt");
  EXPECT_EQ(canopy_wait_all(nullptr), CANOPY_OK);
}

// canopy_data_free inside a task that lists the handle: EINVAL with the
// message (waiting would wait for the task itself); the handle stays.
TEST(CapiDataflow, DataFreeInsideATaskListingTheHandleIsRefused) {
  for (int threads : {1, 2, 5}) {
    Rt r(threads);
    int x = 0;
    canopy_data_t d;
    ASSERT_EQ(canopy_data_register(&d, &x, sizeof x), CANOPY_OK);
    struct Arg {
      canopy_data_t d;
      canopy_status_t status = CANOPY_OK;
      std::string message;
    } arg{d};
    canopy_access_t acc = {d, CANOPY_ACCESS_WRITE};
    ASSERT_EQ(canopy_submit(r.rt, &acc, 1, nullptr,
                            [](void* p) {
                              auto* a = static_cast<Arg*>(p);
                              a->status = canopy_data_free(a->d);
                              a->message = canopy_last_error();
                            },
                            &arg),
              CANOPY_OK);
    ASSERT_EQ(canopy_wait_all(nullptr), CANOPY_OK) << canopy_last_error();
    EXPECT_EQ(arg.status, CANOPY_EINVAL) << threads << " threads";
    EXPECT_NE(arg.message.find("is listed by the running data-flow task"), std::string::npos) << arg.message;
    size_t size = 0;
    EXPECT_EQ(canopy_data_size(d, &size), CANOPY_OK);
    EXPECT_EQ(canopy_data_free(d), CANOPY_OK);
  }
}
