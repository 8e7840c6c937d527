// Wake-up latency: with the other worker parked (idle for 2 ms, past its
// 50 µs spin), worker 0 spawns one task; the time until that task starts on
// the other worker (worker 0 keeps busy meanwhile, so only the other
// worker can take it). Reports seconds per wake-up.
// Idle cost: after the wake-ups, the process's CPU time (getrusage) over
// one second in which the runtime has no work, as a share of one core.
#include <canopy/runtime.hpp>
#include <sys/resource.h>

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
  auto cpu_seconds = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  };
  for (int r = 0; r < a.reps; ++r) {
    rt.run([] { canopy::parallel_for(0, 1000, [](std::int64_t i) { bench::keep(i); }); });  // everyone awake
    const double c0 = cpu_seconds(), t0 = bench::now();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double c1 = cpu_seconds(), t1 = bench::now();
    bench::report("idle", "canopy", a.threads, r, c1 - c0, t1 - t0, "second");  // CPU seconds per second
  }
}
