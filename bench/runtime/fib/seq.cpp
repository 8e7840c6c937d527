// fib(35) without tasks, both calls kept as real calls (the baseline the
// task versions are divided by): the empty asm statements stop the compiler
// from turning the recursion into a loop or merging the calls.
#include "driver.hpp"
#include "fib/fib.hpp"

__attribute__((noinline)) long fib(int n) {
  if (n < 2) return n;
  long a = fib(n - 1);
  asm volatile("" : "+r"(a));
  long b = fib(n - 2);
  asm volatile("" : "+r"(b));
  return a + b;
}

int main(int argc, char** argv) {
  const bench::Args a = bench::parse_args(argc, argv);
  const int n = a.n ? static_cast<int>(a.n) : 35;
  long v = 0;
  bench::measure(a, "fib", "sequential", static_cast<double>(bench::fib_tasks(n)), "task", [&] { v = fib(n); });
  bench::keep(v);
}
