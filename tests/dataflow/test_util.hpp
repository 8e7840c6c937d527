// Shared helpers of the data-flow tests: the runtime tests' worker counts
// and options (tests/runtime/test_util.hpp), a lighter scale factor for
// sanitizer builds, and handles that are freed at the end of a test.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "../runtime/test_util.hpp"
#include "canopy/data.hpp"

namespace dataflow_test {

using canopy_test::kWorkerCounts;
using canopy_test::options;
using canopy_test::worker_name;

// Stress sizes are divided by this under sanitizers: less than the runtime
// tests' factor, since each data-flow task also checks versions and locks.
inline constexpr std::int64_t kScaleDown = canopy_test::kScaleDown > 1 ? 20 : 1;

// n registered handles over one small region each, freed by the destructor.
class Handles {
 public:
  explicit Handles(std::size_t n, std::size_t bytes = 64) : storage_(n * bytes) {
    for (std::size_t i = 0; i < n; ++i) handles_.push_back(canopy::data_register(&storage_[i * bytes], bytes));
  }
  ~Handles() {
    for (canopy::Data d : handles_) canopy::data_free(d);
  }
  Handles(const Handles&) = delete;
  Handles& operator=(const Handles&) = delete;
  canopy::Data operator[](std::size_t i) const { return handles_[i]; }
  std::size_t size() const { return handles_.size(); }

 private:
  std::vector<char> storage_;
  std::vector<canopy::Data> handles_;
};

}  // namespace dataflow_test
