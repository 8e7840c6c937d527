// Bad use of the data API gives canopy::Error with a message that names the
// value and what was expected, and leaves nothing registered behind.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>

#include "canopy/data.hpp"
#include "canopy/error.hpp"

using namespace canopy;

namespace {

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::BadInput) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no canopy::Error thrown";
  return "";
}

void expect_contains(const std::string& msg, const std::string& part) {
  EXPECT_NE(msg.find(part), std::string::npos) << "'" << msg << "' lacks '" << part << "'";
}

TEST(DataBadUse, ZeroBytes) {
  expect_contains(error_of([] { data_allocate(0); }), "0 bytes");
  int x;
  expect_contains(error_of([&] { data_register(&x, 0); }), "0 bytes");
}

TEST(DataBadUse, NullPointer) { expect_contains(error_of([] { data_register(nullptr, 64); }), "null pointer"); }

TEST(DataBadUse, UnmappedRegion) {
  const std::size_t page = data_page_size();
  void* p = mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  munmap(static_cast<char*>(p) + 2 * page, 2 * page);  // the second half is gone
  expect_contains(error_of([&] { data_register(p, 4 * page); }), "not (all) mapped");
  const std::size_t live = detail::data_live_count();
  Data d = data_register(p, 2 * page);  // the first half is fine
  EXPECT_EQ(detail::data_live_count(), live + 1);
  data_free(d);
  munmap(p, 2 * page);
  expect_contains(error_of([&] { data_register(p, page); }), "not (all) mapped");
  expect_contains(error_of([] { data_register(reinterpret_cast<void*>(UINTPTR_MAX - 10), 100); }),
                  "past the end of the address space");
}

TEST(DataBadUse, BlockNotAPageMultiple) {
  const std::size_t page = data_page_size();
  const std::string msg = error_of([&] { data_allocate(4 * page, DataPlacement::block_cyclic(page + 8)); });
  expect_contains(msg, std::to_string(page + 8));
  expect_contains(msg, "multiple of the page size");
  expect_contains(error_of([&] { data_allocate(4 * page, DataPlacement::block_cyclic(0)); }), "block");
}

TEST(DataBadUse, NegativeNode) {
  expect_contains(error_of([] { data_allocate(100, DataPlacement::on_node(-3)); }), "NUMA node -3");
}

TEST(DataBadUse, UnknownPlacementKind) {
  DataPlacement p;
  p.kind = static_cast<DataPlacementKind>(42);
  expect_contains(error_of([&] { data_allocate(100, p); }), "42");
}

TEST(DataBadUse, HugeSize) {
  // Not an address space anyone has: bad input, not an attempt.
  expect_contains(error_of([] { data_allocate(SIZE_MAX - 1); }), "bytes");
}

TEST(DataBadUse, NothingLeaksFromFailedCalls) {
  const std::size_t live = detail::data_live_count();
  EXPECT_THROW(data_allocate(0), Error);
  EXPECT_THROW(data_register(nullptr, 1), Error);
  EXPECT_THROW(data_allocate(10, DataPlacement::on_node(-1)), Error);
  EXPECT_EQ(detail::data_live_count(), live);
}

}  // namespace
