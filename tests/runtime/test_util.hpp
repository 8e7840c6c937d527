// Shared helpers of the runtime tests: the worker counts every runtime test
// runs with (1, 2, and more workers than this machine has cores would give
// by default: 5), and a scale factor that keeps stress tests short under
// sanitizers.
#pragma once
#include <cstdint>
#include <string>

#include "canopy/runtime.hpp"

namespace canopy_test {

inline constexpr int kWorkerCounts[] = {1, 2, 5};

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
