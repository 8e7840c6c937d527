// The data-handle registry: handles round-trip, stale and null handles are
// reported (never a crash), slots are reused with a new generation, the
// registry is safe to use from several threads, and the location seam.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "canopy/data.hpp"
#include "canopy/error.hpp"

using namespace canopy;

namespace {

// The message of the canopy::Error that f throws ("" when none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(DataRegistry, RegisterRoundTrips) {
  std::vector<char> buf(1000, 'x');
  const std::size_t live = detail::data_live_count();
  Data d = data_register(buf.data(), buf.size());
  EXPECT_TRUE(static_cast<bool>(d));
  EXPECT_NE(d.generation, 0u);
  EXPECT_EQ(data_ptr(d), buf.data());
  EXPECT_EQ(data_size(d), buf.size());
  EXPECT_FALSE(data_owned(d));
  EXPECT_EQ(data_placement(d).kind, DataPlacementKind::FirstTouch);
  EXPECT_EQ(detail::data_entry(d).ptr, buf.data());
  EXPECT_EQ(detail::data_entry(d).bytes, buf.size());
  EXPECT_EQ(detail::data_live_count(), live + 1);
  data_free(d);
  EXPECT_EQ(detail::data_live_count(), live);
}

TEST(DataRegistry, NullHandleIsFalseAndRejected) {
  Data d{};
  EXPECT_FALSE(static_cast<bool>(d));
  EXPECT_NE(error_of([&] { data_ptr(d); }).find("null data handle"), std::string::npos);
  EXPECT_NE(error_of([&] { detail::data_entry(d); }).find("null data handle"), std::string::npos);
  EXPECT_NE(error_of([&] { data_free(d); }).find("null data handle"), std::string::npos);
}

TEST(DataRegistry, UseAfterFreeIsReported) {
  int x = 0;
  Data d = data_register(&x, sizeof x);
  const Data copy = d;
  data_free(d);
  const std::string want = "data handle #" + std::to_string(d.index);
  for (auto f : {+[](Data h) { data_ptr(h); }, +[](Data h) { data_size(h); }, +[](Data h) { data_free(h); },
                 +[](Data h) { data_home_node(h); }, +[](Data h) { data_refresh_location(h); },
                 +[](Data h) { data_page_nodes(h); }, +[](Data h) { detail::data_entry(h); }}) {
    const std::string msg = error_of([&] { f(copy); });
    EXPECT_NE(msg.find(want), std::string::npos) << msg;
    EXPECT_NE(msg.find("used after data_free"), std::string::npos) << msg;
  }
}

TEST(DataRegistry, ReusedSlotGetsANewGeneration) {
  int x = 0, y = 0;
  Data a = data_register(&x, sizeof x);
  data_free(a);
  Data b = data_register(&y, sizeof y);
  // The freed slot is the first reused; whatever the index, the old handle
  // must not reach the new region.
  EXPECT_NE(a, b);
  if (a.index == b.index) {
    EXPECT_NE(a.generation, b.generation);
  }
  EXPECT_THROW(data_ptr(a), Error);
  EXPECT_EQ(data_ptr(b), &y);
  data_free(b);
}

TEST(DataRegistry, ForgedHandlesAreRejected) {
  EXPECT_THROW(detail::data_entry(Data{0xFFFFFFFFu, 1}), Error);  // beyond every chunk
  EXPECT_THROW(detail::data_entry(Data{4000000u, 7}), Error);     // chunk never allocated
  int x = 0;
  Data d = data_register(&x, sizeof x);
  EXPECT_THROW(detail::data_entry(Data{d.index, d.generation + 1}), Error);
  data_free(d);
}

TEST(DataRegistry, ManyHandlesCrossChunks) {
  const std::size_t live = detail::data_live_count();
  std::vector<int> xs(3000);
  std::vector<Data> ds;
  for (int& x : xs) ds.push_back(data_register(&x, sizeof x));
  std::set<std::uint32_t> indexes;
  for (std::size_t i = 0; i < ds.size(); ++i) {
    indexes.insert(ds[i].index);
    ASSERT_EQ(data_ptr(ds[i]), &xs[i]);
  }
  EXPECT_EQ(indexes.size(), ds.size());
  for (Data d : ds) data_free(d);
  EXPECT_EQ(detail::data_live_count(), live);
}

// Writers (register/free) and readers (lock-free lookups of handles that
// stay live) at once; under ThreadSanitizer this checks the publication
// order of a slot's fields.
TEST(DataRegistry, ConcurrentRegisterFreeAndLookup) {
  std::vector<long> stable(64);
  std::vector<Data> stable_handles;
  for (long& v : stable) stable_handles.push_back(data_register(&v, sizeof v));
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t)
    threads.emplace_back([&, t] {
      std::vector<long> mine(200);
      for (int round = 0; round < 20; ++round) {
        std::vector<Data> ds;
        for (long& v : mine) ds.push_back(data_register(&v, sizeof v));
        for (std::size_t i = 0; i < ds.size(); ++i)
          if (data_ptr(ds[i]) != &mine[i]) errors.fetch_add(1);
        for (Data d : ds) data_free(d);
      }
      (void)t;
    });
  std::thread reader([&] {
    while (!stop.load()) {
      for (std::size_t i = 0; i < stable.size(); ++i)
        if (detail::data_entry(stable_handles[i]).ptr != &stable[i]) errors.fetch_add(1);
    }
  });
  for (auto& th : threads) th.join();
  stop = true;
  reader.join();
  EXPECT_EQ(errors.load(), 0);
  for (Data d : stable_handles) data_free(d);
}

TEST(DataRegistry, LocationSeamSetsHomeNode) {
  int x = 0;
  Data d = data_register(&x, sizeof x);
  detail::data_set_location_for_testing(d, {10, 300, 300, 5});
  EXPECT_EQ(data_home_node(d), 1);  // tie between 1 and 2: the lowest
  EXPECT_EQ(detail::data_entry(d).home_node.load(), 1);
  EXPECT_EQ(detail::data_entry(d).bytes_on_node(2), 300u);
  EXPECT_EQ(detail::data_entry(d).bytes_on_node(-1), 0u);
  EXPECT_EQ(detail::data_entry(d).bytes_on_node(detail::kDataMaxNodes), 0u);
  const std::vector<std::size_t> per_node = data_bytes_per_node(d);
  ASSERT_GE(per_node.size(), 4u);
  EXPECT_EQ(per_node[3], 5u);
  detail::data_set_location_for_testing(d, {0, 0});
  EXPECT_EQ(data_home_node(d), -1);
  EXPECT_THROW(detail::data_set_location_for_testing(d, std::vector<std::size_t>(detail::kDataMaxNodes + 1, 1)),
               Error);
  data_free(d);
  EXPECT_THROW(detail::data_set_location_for_testing(d, {1}), Error);
}

}  // namespace
