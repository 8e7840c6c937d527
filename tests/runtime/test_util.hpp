// Shared helpers of the runtime tests: the worker counts every runtime test
// runs with (1, 2, and more workers than the machine has CPUs: at least 5),
// and a scale factor that keeps stress tests short under sanitizers.
#pragma once
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>
#include <string>

#include "canopy/runtime.hpp"

namespace canopy_test {

// 1, 2, and more workers than CPUs (workers then share PUs and are
// preempted in the middle of the protocols, which is the point).
inline const std::vector<int> kWorkerCounts = {
    1, 2, std::max(5, static_cast<int>(std::thread::hardware_concurrency()) + 1)};

// Stress sizes are divided by this under sanitizers (10^7 tasks become 10^5).
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
inline constexpr std::int64_t kScaleDown = 100;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
inline constexpr std::int64_t kScaleDown = 100;
#else
inline constexpr std::int64_t kScaleDown = 1;
#endif
#else
inline constexpr std::int64_t kScaleDown = 1;
#endif

inline canopy::RuntimeOptions options(int workers, canopy::BindMode bind = canopy::BindMode::None) {
  canopy::RuntimeOptions o;
  o.num_threads = workers;
  o.bind = bind;
  return o;
}

inline std::string worker_name(int n) { return std::to_string(n) + "workers"; }

}  // namespace canopy_test
