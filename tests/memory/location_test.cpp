// Allocation with each placement and the page locations the kernel reports,
// on whatever machine runs the tests. Assertions hold for any node count
// (node 0 always exists; wrapping, sums and checks are node-count free);
// the multi-node proof is tests/numa (run in a VM by scripts/numa-check.sh).
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "canopy/data.hpp"
#include "canopy/error.hpp"

using namespace canopy;

namespace {

std::size_t sum(const std::vector<std::size_t>& v) { return std::accumulate(v.begin(), v.end(), std::size_t{0}); }

TEST(DataLocation, MachineBasics) {
  EXPECT_GE(data_num_nodes(), 1);
  const std::size_t page = data_page_size();
  EXPECT_GE(page, 4096u);
  EXPECT_EQ(page & (page - 1), 0u);
}

TEST(DataLocation, OnNodeZero) {
  const std::size_t page = data_page_size();
  const std::size_t bytes = 5 * page + 17;
  Data d = data_allocate(bytes, DataPlacement::on_node(0));
  EXPECT_TRUE(data_owned(d));
  EXPECT_EQ(data_size(d), bytes);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(data_ptr(d)) % page, 0u);
  EXPECT_EQ(data_page_nodes(d), std::vector<int>(6, 0));
  EXPECT_EQ(data_home_node(d), 0);
  EXPECT_EQ(data_bytes_per_node(d)[0], bytes);
  EXPECT_NO_THROW(data_check_placement(d, true));
  // The memory starts zeroed and is writable to its last byte.
  const char* p = static_cast<const char*>(data_ptr(d));
  for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(p[i], 0);
  std::memset(data_ptr(d), 1, bytes);
  data_free(d);
}

TEST(DataLocation, NodeWraps) {
  Data d = data_allocate(data_page_size(), DataPlacement::on_node(data_num_nodes()));
  EXPECT_EQ(data_page_nodes(d), std::vector<int>(1, 0));
  EXPECT_EQ(data_home_node(d), 0);
  data_free(d);
}

TEST(DataLocation, InterleavedAndBlockCyclicPassTheirChecks) {
  const std::size_t page = data_page_size();
  for (DataPlacement p : {DataPlacement::interleaved(), DataPlacement::block_cyclic(page),
                          DataPlacement::block_cyclic(2 * page), DataPlacement::block_cyclic(3 * page)}) {
    const std::size_t bytes = 11 * page;
    Data d = data_allocate(bytes, p);
    const std::vector<int> nodes = data_page_nodes(d);
    ASSERT_EQ(nodes.size(), 11u) << to_string(p);
    for (int n : nodes) {
      EXPECT_GE(n, 0) << to_string(p);
      EXPECT_LT(n, data_num_nodes()) << to_string(p);
    }
    EXPECT_EQ(sum(data_bytes_per_node(d)), bytes) << to_string(p);
    EXPECT_GE(data_home_node(d), 0);
    const DataPlacementReport r = data_placement_report(d);
    EXPECT_TRUE(r.ok()) << to_string(p);
    EXPECT_EQ(r.untouched, 0u);
    EXPECT_NO_THROW(data_check_placement(d, true)) << to_string(p);
    data_free(d);
  }
}

TEST(DataLocation, FirstTouchIsUnknownUntilTouched) {
  const std::size_t page = data_page_size();
  const std::size_t bytes = 8 * page;
  Data d = data_allocate(bytes);
  EXPECT_EQ(data_placement(d).kind, DataPlacementKind::FirstTouch);
  EXPECT_EQ(data_home_node(d), -1);
  EXPECT_EQ(sum(data_bytes_per_node(d)), 0u);
  EXPECT_EQ(data_page_nodes(d), std::vector<int>(8, -1));
  EXPECT_NO_THROW(data_check_placement(d));
  EXPECT_THROW(data_check_placement(d, true), Error);
  // Half of it touched: the refresh sees those pages only.
  std::memset(data_ptr(d), 7, 4 * page);
  // The last look found no page placed, so the query looks again
  // (first-touch learning; no refresh needed).
  EXPECT_GE(data_home_node(d), 0);
  EXPECT_EQ(sum(data_bytes_per_node(d)), 4 * page);
  const DataPlacementReport r = data_placement_report(d);
  EXPECT_EQ(r.untouched, 4u);
  EXPECT_TRUE(r.ok());
  std::memset(data_ptr(d), 7, bytes);
  data_refresh_location(d);
  EXPECT_EQ(sum(data_bytes_per_node(d)), bytes);
  EXPECT_NO_THROW(data_check_placement(d, true));
  data_free(d);
}

TEST(DataLocation, RegisteredRegionSpansItsPages) {
  const std::size_t page = data_page_size();
  std::vector<char> buf(6 * page, 1);  // touched: every page resident
  // Starts 100 bytes into a page and ends 100 bytes into another: 3 pages.
  char* start = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(buf.data()) + page - 1) / page * page) + 100;
  Data d = data_register(start, 2 * page);
  const std::vector<int> nodes = data_page_nodes(d);
  ASSERT_EQ(nodes.size(), 3u);
  for (int n : nodes) EXPECT_GE(n, 0);
  EXPECT_GE(data_home_node(d), 0);
  EXPECT_EQ(sum(data_bytes_per_node(d)), 2 * page);
  EXPECT_NO_THROW(data_check_placement(d, true));
  data_free(d);
  // Unregistering never frees what canopy did not allocate.
  EXPECT_EQ(buf[0], 1);
}

TEST(DataLocation, ManyBlocks) {
  // Enough blocks to show that per-block binding stays cheap enough.
  const std::size_t page = data_page_size();
  Data d = data_allocate(512 * page, DataPlacement::block_cyclic(page));
  EXPECT_NO_THROW(data_check_placement(d, true));
  EXPECT_EQ(sum(data_bytes_per_node(d)), 512 * page);
  data_free(d);
}

}  // namespace
