// C API: version, status table, last error (per thread, cleared by success),
// the buffer convention, and the catch-all at the C boundary.
#include <set>
#include <stdexcept>
#include <thread>

#include "canopy/mapping.hpp"
#include "canopy/topology.hpp"
#include "capi_test_util.hpp"

using namespace capi_test;

TEST(CapiVersion, MacrosRuntimeAndProjectAgree) {
  EXPECT_EQ(canopy_version(), static_cast<unsigned>(CANOPY_VERSION));
  EXPECT_EQ(CANOPY_VERSION, CANOPY_VERSION_ENCODE(CANOPY_VERSION_MAJOR, CANOPY_VERSION_MINOR, CANOPY_VERSION_PATCH));
  // The header's macros must follow the project version in CMakeLists.txt.
  EXPECT_STREQ(canopy_version_string(), CANOPY_PROJECT_VERSION);
}

TEST(CapiStatus, EveryStatusHasItsOwnDescription) {
  const canopy_status_t all[] = {CANOPY_OK,     CANOPY_EINVAL,  CANOPY_ENOMEM, CANOPY_EIO,     CANOPY_EPARSE,
                                 CANOPY_ERANGE, CANOPY_ENOBUFS, CANOPY_ENOSYS, CANOPY_ESYSTEM, CANOPY_EUNKNOWN};
  std::set<std::string> seen;
  for (canopy_status_t s : all) {
    const char* d = canopy_strerror(s);
    ASSERT_NE(d, nullptr);
    EXPECT_GT(std::string(d).size(), 3u);
    EXPECT_TRUE(seen.insert(d).second) << d;
  }
  EXPECT_STREQ(canopy_strerror(static_cast<canopy_status_t>(12345)), "unknown status");
  EXPECT_STREQ(canopy_strerror(CANOPY_OK), "success");
}

TEST(CapiLastError, SetByFailureClearedBySuccess) {
  int n = 0;
  EXPECT_CANOPY_ERROR(canopy_topology_num_pus(nullptr, &n), CANOPY_EINVAL, "canopy_topology_num_pus",
                      "topo is NULL");
  Topo t = synthetic("pack:2 core:2 pu:2");
  EXPECT_CANOPY_OK(canopy_topology_num_pus(t.get(), &n));
  EXPECT_EQ(n, 8);
}

TEST(CapiLastError, IsPerThread) {
  int n = 0;
  EXPECT_EQ(canopy_topology_num_pus(nullptr, &n), CANOPY_EINVAL);
  std::string other;
  std::thread([&] { other = canopy_last_error(); }).join();
  EXPECT_EQ(other, "");
  EXPECT_NE(std::string(canopy_last_error()), "");
}

TEST(CapiLastError, LongMessagesAreCutNotOverflowed) {
  std::string desc = "pack:2 " + std::string(5000, 'x');
  canopy_topology_t* t = nullptr;
  EXPECT_EQ(canopy_topology_create_from_synthetic(&t, desc.c_str()), CANOPY_EPARSE);
  EXPECT_EQ(t, nullptr);
  std::string msg = canopy_last_error();
  EXPECT_LT(msg.size(), 1200u);
  EXPECT_EQ(msg.rfind("canopy_topology_create_from_synthetic: ", 0), 0u);
}

TEST(CapiBuffers, SizeQueryExactFitTooSmallAndNull) {
  Topo t = synthetic("pack:2 core:2 pu:2");
  size_t needed = 0;
  EXPECT_CANOPY_OK(canopy_topology_format(t.get(), "json", nullptr, 0, &needed));
  ASSERT_GT(needed, 2u);
  std::string full(needed, '#');
  size_t again = 0;
  EXPECT_CANOPY_OK(canopy_topology_format(t.get(), "json", full.data(), needed, &again));
  EXPECT_EQ(again, needed);
  EXPECT_EQ(full[needed - 1], '\0');
  EXPECT_EQ(std::string(full.c_str()).size(), needed - 1);

  std::string small(5, '#');
  EXPECT_CANOPY_ERROR(canopy_topology_format(t.get(), "json", small.data(), small.size(), &again), CANOPY_ENOBUFS,
                      "canopy_topology_format", "too small");
  EXPECT_EQ(again, needed);
  EXPECT_EQ(small[4], '\0');
  EXPECT_EQ(std::string(small.c_str()), std::string(full.c_str()).substr(0, 4));

  EXPECT_CANOPY_ERROR(canopy_topology_format(t.get(), "json", nullptr, 10, &again), CANOPY_EINVAL,
                      "canopy_topology_format", "buf is NULL");
  // `needed` may be NULL when the buffer is large enough.
  EXPECT_CANOPY_OK(canopy_topology_format(t.get(), "json", full.data(), full.size(), nullptr));
}

// A policy registered by the C++ API whose function throws: the C entry
// points must turn whatever it throws into a status, never let it escape.
namespace {
void register_throwing_policies() {
  static const bool once = [] {
    canopy::register_policy({"capi-test-throws-runtime-error", "throws std::runtime_error",
                             [](const auto&, const auto&, const auto&, const auto&) -> std::vector<int> {
                               throw std::runtime_error("deliberate failure in a test policy");
                             }});
    canopy::register_policy({"capi-test-throws-int", "throws an int",
                             [](const auto&, const auto&, const auto&, const auto&) -> std::vector<int> { throw 42; }});
    canopy::register_policy({"capi-test-throws-bad-alloc", "throws std::bad_alloc",
                             [](const auto&, const auto&, const auto&, const auto&) -> std::vector<int> {
                               throw std::bad_alloc();
                             }});
    return true;
  }();
  (void)once;
}
}  // namespace

TEST(CapiCatchAll, ForeignExceptionsBecomeStatuses) {
  register_throwing_policies();
  Topo t = synthetic("pack:1 core:4 pu:1");
  Matrix m = empty_matrix(4);
  canopy_placement_t* p = nullptr;
  EXPECT_CANOPY_ERROR(canopy_placement_create(&p, t.get(), m.get(), "capi-test-throws-runtime-error", nullptr),
                      CANOPY_EUNKNOWN, "canopy_placement_create", "deliberate failure");
  EXPECT_EQ(p, nullptr);
  EXPECT_CANOPY_ERROR(canopy_placement_create(&p, t.get(), m.get(), "capi-test-throws-int", nullptr),
                      CANOPY_EUNKNOWN, "canopy_placement_create", "unknown exception");
  EXPECT_CANOPY_ERROR(canopy_placement_create(&p, t.get(), m.get(), "capi-test-throws-bad-alloc", nullptr),
                      CANOPY_ENOMEM, "canopy_placement_create", "out of memory");
  EXPECT_EQ(p, nullptr);
}
