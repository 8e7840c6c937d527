// fib with canopy::invoke: fib(n-1) is the queued (stealable) task, fib(n-2)
// runs at once, one task per call.
#include <canopy/runtime.hpp>

#include "driver.hpp"
#include "fib/fib.hpp"

long fib(int n) {
  if (n < 2) return n;
  long a, b;
  canopy::invoke([&] { a = fib(n - 1); }, [&] { b = fib(n - 2); });
  return a + b;
}

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const int n = a.n ? static_cast<int>(a.n) : 35;
  canopy::RuntimeOptions o = canopy::RuntimeOptions::from_env();
  o.num_threads = a.threads;
  canopy::Runtime rt(o);
  long v = 0;
  bench::measure(a, "fib", "canopy-invoke", static_cast<double>(bench::fib_tasks(n)), "task",
                 [&] { v = rt.run([&] { return fib(n); }); });
  bench::keep(v);
}
