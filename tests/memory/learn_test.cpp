// First-touch learning (src/data/learn.cpp): the location of a first-touch
// handle is learned once tasks wrote it, without data_refresh_location; the
// interval between looks (driven here with a synthetic clock); complete
// locations are never looked at again; the runtime's affinity resolution
// learns; concurrent learners (ThreadSanitizer). The node a page lands on is
// the kernel's: on the build machine (one node) that is node 0; the
// several-node proof is tests/numa/check/learn_checks.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "canopy/data.hpp"
#include "canopy/runtime.hpp"

using namespace canopy;

namespace {

std::size_t placed(const detail::DataEntry& e) {
  std::size_t s = 0;
  for (int k = 0; k < detail::kDataMaxNodes; ++k) s += e.bytes_on_node(k);
  return s;
}

constexpr std::int64_t kMs = 1'000'000;

TEST(DataLearn, AFreshFirstTouchHandleIsUnplaced) {
  const std::size_t page = data_page_size();
  Data d = data_allocate(8 * page);
  detail::DataEntry& e = detail::data_entry(d);
  EXPECT_EQ(e.unplaced.load(), 8 * page);
  EXPECT_EQ(e.home_node.load(), -1);
  data_free(d);
  // Bound placements are touched at allocation: complete at once.
  Data b = data_allocate(8 * page, DataPlacement::on_node(0));
  EXPECT_EQ(detail::data_entry(b).unplaced.load(), 0u);
  data_free(b);
}

TEST(DataLearn, LooksFollowTheIntervalAndStopWhenComplete) {
  const std::size_t page = data_page_size();
  Data d = data_allocate(8 * page);
  detail::DataEntry& e = detail::data_entry(d);
  const std::int64_t t0 = 1000 * kMs;
  const DataStats s0 = data_stats();
  // A look that finds nothing new: the next wait doubles (2 ms).
  detail::data_learn_location_at(e, t0, false);
  EXPECT_EQ(data_stats().looks, s0.looks + 1);
  EXPECT_EQ(e.home_node.load(), -1);
  EXPECT_EQ(e.next_look_ns.load(), t0 + 2 * kMs);
  std::memset(data_ptr(d), 1, 4 * page);
  detail::data_learn_location_at(e, t0 + kMs, false);  // too soon
  EXPECT_EQ(data_stats().looks, s0.looks + 1);
  EXPECT_EQ(e.home_node.load(), -1);
  EXPECT_EQ(placed(e), 0u);
  detail::data_learn_location_at(e, t0 + 2 * kMs, false);  // learns the half written
  EXPECT_EQ(data_stats().looks, s0.looks + 2);
  EXPECT_EQ(data_stats().learned, s0.learned + 1);
  EXPECT_GE(e.home_node.load(), 0);
  EXPECT_EQ(placed(e), 4 * page);
  EXPECT_EQ(e.unplaced.load(), 4 * page);
  EXPECT_EQ(e.next_look_ns.load(), t0 + 3 * kMs);  // something new: back to 1 ms
  std::memset(data_ptr(d), 1, 8 * page);
  detail::data_learn_location_at(e, t0 + 3 * kMs, false);
  EXPECT_EQ(placed(e), 8 * page);
  EXPECT_EQ(e.unplaced.load(), 0u);
  // Complete: the hot-path check asks nothing any more.
  const std::uint64_t looks = data_stats().looks;
  for (int i = 0; i < 100; ++i) detail::data_learn_if_unplaced(e);
  EXPECT_EQ(data_stats().looks, looks);
  data_free(d);
}

TEST(DataLearn, TheWaitDoublesUpTo64Ms) {
  Data d = data_allocate(4 * data_page_size());
  detail::DataEntry& e = detail::data_entry(d);
  std::int64_t t = 5000 * kMs;
  std::vector<std::int64_t> waits;
  for (int i = 0; i < 9; ++i) {
    detail::data_learn_location_at(e, t, false);
    const std::int64_t next = e.next_look_ns.load();
    waits.push_back((next - t) / kMs);
    t = next;
  }
  EXPECT_EQ(waits, (std::vector<std::int64_t>{2, 4, 8, 16, 32, 64, 64, 64, 64}));
  data_free(d);
}

TEST(DataLearn, PublicQueriesLookWhenIncomplete) {
  const std::size_t page = data_page_size();
  Data d = data_allocate(4 * page);
  EXPECT_EQ(data_home_node(d), -1);
  std::memset(data_ptr(d), 1, 4 * page);
  // No refresh: the query itself looks, since the last look was incomplete.
  EXPECT_GE(data_home_node(d), 0);
  const std::vector<std::size_t> per = data_bytes_per_node(d);
  EXPECT_EQ(std::accumulate(per.begin(), per.end(), std::size_t{0}), 4 * page);
  data_free(d);
}

TEST(DataLearn, RegisteredRegionsLearnToo) {
  const std::size_t page = data_page_size();
  void* mem = std::aligned_alloc(page, 4 * page);
  ASSERT_NE(mem, nullptr);
  // Heap pages may or may not have been touched before: whatever the
  // registration saw, after writing all of it the query sees all of it.
  Data d = data_register(mem, 4 * page);
  std::memset(mem, 1, 4 * page);
  std::size_t all = 0;
  for (std::size_t b : data_bytes_per_node(d)) all += b;
  EXPECT_EQ(all, 4 * page);
  EXPECT_EQ(detail::data_entry(d).unplaced.load(), 0u);
  data_free(d);
  std::free(mem);
}

TEST(DataLearn, StrictNearHintLearnsTheLocation) {
  // On a one-node runtime a loose hint is ignored without a look; a strict
  // one is resolved, and resolving learns.
  const std::size_t page = data_page_size();
  Data d = data_allocate(16 * page);
  RuntimeOptions o;
  o.num_threads = 2;
  Runtime rt(o);
  rt.run([&] {
    TaskGroup g(rt);
    g.spawn([&] { std::memset(data_ptr(d), 1, 16 * page); });
    g.wait();
  });
  EXPECT_EQ(detail::data_entry(d).home_node.load(), -1);  // nothing asked yet
  std::atomic<int> ran{0};
  rt.run([&] {
    TaskGroup g(rt);
    g.spawn(Affinity::near(d, true), [&] { ran.fetch_add(1); });
    g.wait();
  });
  EXPECT_EQ(ran.load(), 1);
  EXPECT_GE(detail::data_entry(d).home_node.load(), 0);
  EXPECT_EQ(detail::data_entry(d).unplaced.load(), 0u);
  data_free(d);
}

TEST(DataLearn, ConcurrentLearnersAgree) {
  // Threads learning one handle while another writes it (ThreadSanitizer
  // checks the claim protocol and the location's atomics).
  const std::size_t page = data_page_size();
  constexpr std::size_t kPages = 64;
  Data d = data_allocate(kPages * page);
  detail::DataEntry& e = detail::data_entry(d);
  std::atomic<bool> done{false};
  std::vector<std::thread> learners;
  for (int t = 0; t < 3; ++t)
    learners.emplace_back([&] {
      while (!done.load()) {
        detail::data_learn_if_unplaced(e);
        (void)data_home_node(d);
      }
    });
  auto* p = static_cast<char*>(data_ptr(d));
  for (std::size_t i = 0; i < kPages; ++i) p[i * page] = 1;
  done = true;
  for (auto& t : learners) t.join();
  EXPECT_GE(data_home_node(d), 0);
  std::size_t all = 0;
  for (std::size_t b : data_bytes_per_node(d)) all += b;
  EXPECT_EQ(all, kPages * page);
  data_free(d);
}

}  // namespace
