// Spawn cost: 10^6 empty tasks in one oneTBB task_group, then one wait.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include "driver.hpp"

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const long n = a.n ? a.n : 1000000;
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, a.threads);
  tbb::task_arena arena(a.threads);
  bench::measure(a, "spawn", "tbb", static_cast<double>(n), "task", [&] {
    arena.execute([&g_n = n] {
      const long count = g_n;  // a local: the loop does not reload it
      tbb::task_group g;
      for (long i = 0; i < count; ++i) g.run([] {});
      g.wait();
    });
  });
}
