// The C API of data handles: statuses, canopy_last_error() messages, the
// array conventions, and stale handles reported as EINVAL.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "canopy_data.h"

namespace {

std::string last() { return canopy_last_error(); }

TEST(DataCapi, AllocateQueryFree) {
  size_t page = 0;
  ASSERT_EQ(canopy_data_page_size(&page), CANOPY_OK);
  int nodes = 0;
  ASSERT_EQ(canopy_data_num_nodes(&nodes), CANOPY_OK);
  EXPECT_GE(nodes, 1);
  canopy_data_placement_t pl = {CANOPY_DATA_BLOCK_CYCLIC, 0, page};
  canopy_data_t d;
  ASSERT_EQ(canopy_data_allocate(&d, 4 * page, &pl), CANOPY_OK) << last();
  EXPECT_EQ(last(), "");
  void* p = nullptr;
  ASSERT_EQ(canopy_data_ptr(d, &p), CANOPY_OK);
  EXPECT_NE(p, nullptr);
  size_t size = 0;
  ASSERT_EQ(canopy_data_size(d, &size), CANOPY_OK);
  EXPECT_EQ(size, 4 * page);
  int home = -5;
  ASSERT_EQ(canopy_data_home_node(d, &home), CANOPY_OK);
  EXPECT_GE(home, 0);

  size_t count = 0;
  ASSERT_EQ(canopy_data_page_nodes(d, nullptr, 0, &count), CANOPY_OK);  // count query
  EXPECT_EQ(count, 4u);
  std::vector<int> pn(count);
  ASSERT_EQ(canopy_data_page_nodes(d, pn.data(), pn.size(), &count), CANOPY_OK);
  for (int n : pn) EXPECT_GE(n, 0);
  int small[2];
  EXPECT_EQ(canopy_data_page_nodes(d, small, 2, &count), CANOPY_ENOBUFS);
  EXPECT_EQ(count, 4u);
  EXPECT_EQ(canopy_data_page_nodes(d, nullptr, 3, &count), CANOPY_EINVAL);

  ASSERT_EQ(canopy_data_bytes_per_node(d, nullptr, 0, &count), CANOPY_OK);
  EXPECT_EQ(count, static_cast<size_t>(nodes));
  std::vector<size_t> bpn(count);
  ASSERT_EQ(canopy_data_bytes_per_node(d, bpn.data(), bpn.size(), &count), CANOPY_OK);
  size_t total = 0;
  for (size_t b : bpn) total += b;
  EXPECT_EQ(total, 4 * page);

  EXPECT_EQ(canopy_data_refresh_location(d), CANOPY_OK);
  EXPECT_EQ(canopy_data_check_placement(d, 1), CANOPY_OK) << last();
  EXPECT_EQ(canopy_data_free(d), CANOPY_OK);
  // Every copy is stale now.
  EXPECT_EQ(canopy_data_ptr(d, &p), CANOPY_EINVAL);
  EXPECT_NE(last().find("canopy_data_ptr: data handle #"), std::string::npos) << last();
  EXPECT_NE(last().find("used after data_free"), std::string::npos) << last();
  EXPECT_EQ(canopy_data_free(d), CANOPY_EINVAL);
}

TEST(DataCapi, RegisterAndFirstTouch) {
  std::vector<double> v(1000, 1.0);
  canopy_data_t d;
  ASSERT_EQ(canopy_data_register(&d, v.data(), v.size() * sizeof(double)), CANOPY_OK) << last();
  void* p = nullptr;
  ASSERT_EQ(canopy_data_ptr(d, &p), CANOPY_OK);
  EXPECT_EQ(p, v.data());
  EXPECT_EQ(canopy_data_free(d), CANOPY_OK);

  ASSERT_EQ(canopy_data_allocate(&d, 100, nullptr), CANOPY_OK) << last();
  int home = 0;
  ASSERT_EQ(canopy_data_home_node(d, &home), CANOPY_OK);
  EXPECT_EQ(home, -1);  // first touch, nothing touched yet
  EXPECT_EQ(canopy_data_check_placement(d, 1), CANOPY_ESYSTEM);
  EXPECT_NE(last().find("not touched yet"), std::string::npos) << last();
  EXPECT_EQ(canopy_data_free(d), CANOPY_OK);
}

TEST(DataCapi, BadInput) {
  canopy_data_t d;
  EXPECT_EQ(canopy_data_allocate(nullptr, 10, nullptr), CANOPY_EINVAL);
  EXPECT_NE(last().find("out is NULL"), std::string::npos) << last();
  EXPECT_EQ(canopy_data_allocate(&d, 0, nullptr), CANOPY_EINVAL);
  EXPECT_NE(last().find("0 bytes"), std::string::npos) << last();
  EXPECT_EQ(d.generation, 0u);
  canopy_data_placement_t bad = {CANOPY_DATA_FIRST_TOUCH, 0, 0};
  int raw = 9;
  std::memcpy(&bad.kind, &raw, sizeof raw);
  EXPECT_EQ(canopy_data_allocate(&d, 10, &bad), CANOPY_EINVAL);
  EXPECT_NE(last().find("placement kind 9"), std::string::npos) << last();
  canopy_data_placement_t neg = {CANOPY_DATA_NODE, -2, 0};
  EXPECT_EQ(canopy_data_allocate(&d, 10, &neg), CANOPY_EINVAL);
  EXPECT_NE(last().find("NUMA node -2"), std::string::npos) << last();
  canopy_data_placement_t odd = {CANOPY_DATA_BLOCK_CYCLIC, 0, 1000};
  EXPECT_EQ(canopy_data_allocate(&d, 10, &odd), CANOPY_EINVAL);
  EXPECT_EQ(canopy_data_register(&d, nullptr, 10), CANOPY_EINVAL);
  const canopy_data_t null_handle = CANOPY_DATA_NULL_INIT;
  size_t size;
  EXPECT_EQ(canopy_data_size(null_handle, &size), CANOPY_EINVAL);
  EXPECT_NE(last().find("null data handle"), std::string::npos) << last();
  EXPECT_EQ(canopy_data_num_nodes(nullptr), CANOPY_EINVAL);
}

}  // namespace
