// Spawn cost through an unhinted canopy::Bubble: the same 10^6 empty tasks
// as canopy.cpp's TaskGroup, for the claim that a group without hints costs
// what a TaskGroup costs (docs/groups-memory.md: callgrind counts of both).
#include <canopy/bubble.hpp>
#include <canopy/runtime.hpp>

#include "driver.hpp"

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const long n = a.n ? a.n : 1000000;
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);
  bench::measure(a, "spawn", "canopy_bubble", static_cast<double>(n), "task", [&] {
    rt.run([&rt, &g_n = n] {
      const long count = g_n;
      canopy::Bubble g(rt);
      for (long i = 0; i < count; ++i) g.spawn([] {});
      g.wait();
    });
  });
}
