// Helpers shared by the C API tests: owning wrappers for the C handles,
// a status assertion that also checks canopy_last_error(), temporary files.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>

#include "canopy.h"

namespace capi_test {

struct TopologyDeleter {
  void operator()(canopy_topology_t* t) const { canopy_topology_destroy(t); }
};
struct MatrixDeleter {
  void operator()(canopy_matrix_t* m) const { canopy_matrix_destroy(m); }
};
struct PlacementDeleter {
  void operator()(canopy_placement_t* p) const { canopy_placement_destroy(p); }
};
struct TeamDeleter {
  void operator()(canopy_team_t* t) const { canopy_team_destroy(t); }
};
using Topo = std::unique_ptr<canopy_topology_t, TopologyDeleter>;
using Matrix = std::unique_ptr<canopy_matrix_t, MatrixDeleter>;
using Place = std::unique_ptr<canopy_placement_t, PlacementDeleter>;
using Team = std::unique_ptr<canopy_team_t, TeamDeleter>;

inline Topo synthetic(const char* desc) {
  canopy_topology_t* t = nullptr;
  EXPECT_EQ(canopy_topology_create_from_synthetic(&t, desc), CANOPY_OK) << canopy_last_error();
  return Topo(t);
}

inline Matrix empty_matrix(int n) {
  canopy_matrix_t* m = nullptr;
  EXPECT_EQ(canopy_matrix_create(&m, n), CANOPY_OK) << canopy_last_error();
  return Matrix(m);
}

// A file under the build tree's temporary directory, removed at scope exit.
class TempFile {
 public:
  explicit TempFile(const std::string& name, const std::string& content = "")
      : path_(std::string(::testing::TempDir()) + "canopy_capi_" + std::to_string(::getpid()) + "_" + name) {
    std::ofstream(path_, std::ios::binary) << content;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const char* path() const { return path_.c_str(); }

 private:
  std::string path_;
};

}  // namespace capi_test

// The call returns `status`, and canopy_last_error() names the function and
// contains `fragment`.
#define EXPECT_CANOPY_ERROR(call, status, function, fragment)                                 \
  do {                                                                                        \
    canopy_status_t s_ = (call);                                                              \
    EXPECT_EQ(s_, status) << canopy_strerror(s_) << ": " << canopy_last_error();              \
    std::string msg_ = canopy_last_error();                                                   \
    EXPECT_EQ(msg_.rfind(std::string(function) + ": ", 0), 0u) << msg_;                       \
    EXPECT_NE(msg_.find(fragment), std::string::npos) << "'" << msg_ << "' lacks '" << (fragment) << "'"; \
  } while (0)

#define EXPECT_CANOPY_OK(call)                                                   \
  do {                                                                           \
    canopy_status_t s_ = (call);                                                 \
    EXPECT_EQ(s_, CANOPY_OK) << canopy_strerror(s_) << ": " << canopy_last_error(); \
    EXPECT_STREQ(canopy_last_error(), "");                                       \
  } while (0)
