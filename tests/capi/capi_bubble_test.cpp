// The bubbles' C API (canopy_bubble.h): create, split with expected work,
// spawn, wait, the workers of a bubble's subtree, destroy; errors as
// statuses.
#include "canopy_bubble.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

namespace {

void add_one(void* arg) { static_cast<std::atomic<int>*>(arg)->fetch_add(1); }

struct Body {
  canopy_runtime_t* rt;
  std::atomic<int> ran{0};
  std::vector<int> workers0;
  canopy_status_t split_bad = CANOPY_OK;
};

void body(void* arg) {
  auto* b = static_cast<Body*>(arg);
  canopy_bubble_t* all = nullptr;
  ASSERT_EQ(canopy_bubble_create(&all, b->rt, nullptr), CANOPY_OK) << canopy_last_error();
  canopy_bubble_options_t opts[2] = {{1.0, nullptr, 0, 0}, {1.0, nullptr, 0, 0}};
  canopy_bubble_t* kids[2] = {nullptr, nullptr};
  ASSERT_EQ(canopy_bubble_split(all, opts, 2, kids), CANOPY_OK) << canopy_last_error();
  for (int i = 0; i < 50; ++i)
    for (canopy_bubble_t* k : kids) ASSERT_EQ(canopy_bubble_spawn(k, add_one, &b->ran), CANOPY_OK);
  for (canopy_bubble_t* k : kids) ASSERT_EQ(canopy_bubble_wait(k), CANOPY_OK);
  size_t n = 0;
  ASSERT_EQ(canopy_bubble_workers(kids[0], nullptr, 0, &n), CANOPY_OK);
  b->workers0.resize(n);
  ASSERT_EQ(canopy_bubble_workers(kids[0], b->workers0.data(), n, &n), CANOPY_OK);
  b->split_bad = canopy_bubble_split(all, opts, 0, kids);
  for (canopy_bubble_t* k : kids) canopy_bubble_destroy(k);
  canopy_bubble_destroy(all);
}

TEST(CapiBubble, SplitSpawnWait) {
  canopy_runtime_options_t o = {};
  o.num_threads = 4;
  o.bind = CANOPY_BIND_NONE;
  canopy_runtime_t* rt = nullptr;
  ASSERT_EQ(canopy_runtime_create(&rt, &o), CANOPY_OK) << canopy_last_error();
  Body b;
  b.rt = rt;
  ASSERT_EQ(canopy_runtime_run(rt, body, &b), CANOPY_OK) << canopy_last_error();
  EXPECT_EQ(b.ran.load(), 100);
  EXPECT_FALSE(b.workers0.empty());
  EXPECT_EQ(b.split_bad, CANOPY_EINVAL);
  canopy_runtime_destroy(rt);
}

TEST(CapiBubble, OutsideTheRuntimeIsEinval) {
  canopy_runtime_options_t o = {};
  o.num_threads = 2;
  o.bind = CANOPY_BIND_NONE;
  canopy_runtime_t* rt = nullptr;
  ASSERT_EQ(canopy_runtime_create(&rt, &o), CANOPY_OK);
  canopy_bubble_t* b = nullptr;
  EXPECT_EQ(canopy_bubble_create(&b, rt, nullptr), CANOPY_EINVAL);
  EXPECT_EQ(b, nullptr);
  EXPECT_NE(std::string(canopy_last_error()).find("Runtime::run"), std::string::npos) << canopy_last_error();
  EXPECT_EQ(canopy_bubble_spawn(nullptr, add_one, nullptr), CANOPY_EINVAL);
  canopy_runtime_destroy(rt);
}

}  // namespace
