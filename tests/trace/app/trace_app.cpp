// A fixed program for the trace tests that need a process of their own (the
// CANOPY_TRACE variables are read once per process): a diamond of data-flow
// tasks on 2 workers, then a task group of 64 tasks.
//   trace_app            (CANOPY_TRACE=... in the environment)
// Exits 2 with the message when the runtime refuses the environment.
#include <atomic>
#include <chrono>
#include <cstdio>

#include "canopy/dataflow.hpp"
#include "canopy/error.hpp"
#include "canopy/runtime.hpp"
#include "../diamond.hpp"

namespace {
std::atomic<int> sum{0};
}  // namespace

int main() {
  try {
    canopy::RuntimeOptions o;
    o.num_threads = 2;
    o.bind = canopy::BindMode::None;
    canopy::Runtime rt(o);
    diamond(rt);
    canopy::TaskGroup g(rt);
    // Each group task works 150 us: the tasks fill a visible part of the
    // timeline (svg_picture_test.py looks for their boxes in an 800-pixel
    // picture of a run whose start-up alone takes milliseconds).
    for (int i = 0; i < 64; ++i)
      g.spawn([] {
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(150);
        while (std::chrono::steady_clock::now() < until) {
        }
        sum.fetch_add(1, std::memory_order_relaxed);
      });
    g.wait();
  } catch (const canopy::Error& e) {
    std::fprintf(stderr, "trace_app: %s\n", e.what());
    return 2;
  }
  return sum.load() == 64 ? 0 : 1;
}
