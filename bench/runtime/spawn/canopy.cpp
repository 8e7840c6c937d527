// Spawn cost: 10^6 empty tasks spawned into one canopy::TaskGroup, then one
// wait (every task queued, none run inline at spawn).
#include <canopy/runtime.hpp>

#include "driver.hpp"

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const long n = a.n ? a.n : 1000000;
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);
  bench::measure(a, "spawn", "canopy", static_cast<double>(n), "task", [&] {
    rt.run([&g_n = n] {
      const long count = g_n;  // a local: the loop does not reload it
      canopy::TaskGroup g;
      for (long i = 0; i < count; ++i) g.spawn([] {});
      g.wait();
    });
  });
}
