// Shared helpers of the data-flow tests: worker counts (1, 2 and more than
// this machine's CPUs), a scale factor for sanitizer builds, and handles
// that are freed at the end of a test.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "canopy/data.hpp"
#include "canopy/runtime.hpp"

namespace dataflow_test {

inline const std::vector<int> kWorkerCounts = {
    1, 2, std::max(5, static_cast<int>(std::thread::hardware_concurrency()) + 1)};

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr std::int64_t kScaleDown = 20;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
inline constexpr std::int64_t kScaleDown = 20;
#else
inline constexpr std::int64_t kScaleDown = 1;
#endif
#else
inline constexpr std::int64_t kScaleDown = 1;
#endif

inline canopy::RuntimeOptions options(int workers) {
  canopy::RuntimeOptions o;
  o.num_threads = workers;
  o.bind = canopy::BindMode::None;
  return o;
}

inline std::string worker_name(int n) { return std::to_string(n) + "workers"; }

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
