// fib with canopy::TaskGroup: spawn fib(n-1), run fib(n-2), wait (the shape
// of oneTBB's task_group version).
#include <canopy/runtime.hpp>

#include "driver.hpp"
#include "fib/fib.hpp"

long fib(int n) {
  if (n < 2) return n;
  long a, b;
  canopy::TaskGroup g;
  g.spawn([&] { a = fib(n - 1); });
  b = fib(n - 2);
  g.wait();
  return a + b;
}

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const int n = a.n ? static_cast<int>(a.n) : 35;
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);
  long v = 0;
  bench::measure(a, "fib", "canopy-group", static_cast<double>(bench::fib_tasks(n)), "task",
                 [&] { v = rt.run([&] { return fib(n); }); });
  bench::keep(v);
}
