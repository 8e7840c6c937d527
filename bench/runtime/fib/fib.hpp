// fib(n) with one task per call (no cut-off): the same recursion for every
// competitor. Tasks per run: the calls with n >= 2, fib(n+1) - 1.
#pragma once

namespace bench {

inline long fib_tasks(int n) {
  long a = 0, b = 1;  // fib(0), fib(1)
  for (int i = 0; i < n + 1; ++i) {
    const long c = a + b;
    a = b;
    b = c;
  }
  return a - 1;  // fib(n+1) - 1
}

}  // namespace bench
