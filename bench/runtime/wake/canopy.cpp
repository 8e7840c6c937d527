// Wake-up latency: with the other worker parked (idle for 2 ms, past its
// 50 µs spin), worker 0 spawns one task; the time until that task starts on
// the other worker (worker 0 keeps busy meanwhile, so only the other
// worker can take it). Reports seconds per wake-up.
#include <canopy/runtime.hpp>

#include <atomic>
#include <thread>

#include "driver.hpp"

int main(int argc, char** argv) {
  bench::Args a = bench::parse_args(argc, argv);
  const long trials = a.n ? a.n : 200;
  if (a.threads < 2) a.threads = 2;
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);
  for (int r = 0; r < a.reps; ++r) {
    double total = 0;
    for (long k = 0; k < trials; ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));  // everyone parks
      std::atomic<double> started{0};
      const double t0 = rt.run([&] {
        canopy::TaskGroup g;
        const double t = bench::now();
        g.spawn([&] { started.store(bench::now()); });
        while (started.load() == 0) {  // stay busy: the task must be stolen
        }
        g.wait();
        return t;
      });
      total += started.load() - t0;
    }
    bench::report("wake", "canopy", a.threads, r, total, static_cast<double>(trials), "wake-up");
  }
}
