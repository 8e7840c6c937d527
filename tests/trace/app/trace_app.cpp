// A fixed program for the trace tests that need a process of their own (the
// CANOPY_TRACE variables are read once per process): a diamond of data-flow
// tasks on 2 workers, then a task group of 64 tasks.
//   trace_app            (CANOPY_TRACE=... in the environment)
// Exits 2 with the message when the runtime refuses the environment.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>

#include "canopy/data.hpp"
#include "canopy/dataflow.hpp"
#include "canopy/error.hpp"
#include "canopy/runtime.hpp"

namespace {
// Waits until all three tasks are submitted, so that Combine depends on
// both producers (and is made ready by the release of the last one).
std::atomic<bool> go{false};
struct Produce {
  canopy::Data out;
  void operator()() const {
    while (!go.load()) std::this_thread::yield();
    static_cast<volatile char*>(canopy::data_ptr(out))[0] = 1;
  }
};
struct Combine {
  canopy::Data a, b, out;
  void operator()() const {
    static_cast<volatile char*>(canopy::data_ptr(out))[0] =
        static_cast<char>(static_cast<char*>(canopy::data_ptr(a))[0] + static_cast<char*>(canopy::data_ptr(b))[0]);
  }
};
std::atomic<int> sum{0};
}  // namespace

int main() {
  try {
    canopy::RuntimeOptions o;
    o.num_threads = 2;
    o.bind = canopy::BindMode::None;
    canopy::Runtime rt(o);
    canopy::Data a = canopy::data_allocate(4096), b = canopy::data_allocate(4096), c = canopy::data_allocate(4096);
    canopy::submit(rt, {canopy::write(a)}, Produce{a});
    canopy::submit(rt, {canopy::write(b)}, Produce{b});
    canopy::submit(rt, {canopy::read(a), canopy::read(b), canopy::write(c)}, Combine{a, b, c});
    go.store(true);
    canopy::wait_all(rt);
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
    canopy::data_free(a);
    canopy::data_free(b);
    canopy::data_free(c);
  } catch (const canopy::Error& e) {
    std::fprintf(stderr, "trace_app: %s\n", e.what());
    return 2;
  }
  return sum.load() == 64 ? 0 : 1;
}
