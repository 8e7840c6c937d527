// fib with oneTBB's task_group, in an arena of -t threads.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include "driver.hpp"
#include "fib/fib.hpp"

long fib(int n) {
  if (n < 2) return n;
  long a, b;
  tbb::task_group g;
  g.run([&] { a = fib(n - 1); });
  b = fib(n - 2);
  g.wait();
  return a + b;
}

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const int n = a.n ? static_cast<int>(a.n) : 35;
  tbb::global_control gc(tbb::global_control::max_allowed_parallelism, a.threads);
  tbb::task_arena arena(a.threads);
  long v = 0;
  bench::measure(a, "fib", "tbb", static_cast<double>(bench::fib_tasks(n)), "task",
                 [&] { arena.execute([&] { v = fib(n); }); });
  bench::keep(v);
}
