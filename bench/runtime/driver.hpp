// The shared driver of the runtime benchmarks: every competitor's program
// takes the same flags and prints the same result lines, which run.py turns
// into a table.
//
//   -t THREADS   workers / threads (default 1)
//   -r REPS      measured repetitions after one warm-up (default 5)
//   -n SIZE      problem size (each benchmark has its default)
//   -w RUNS      warm-up runs (default: as many as fill 0.2 s, at least one;
//                instruction counting needs a fixed number)
//
// Each repetition prints one line:
//   RESULT bench=<name> impl=<competitor> threads=<t> rep=<i> seconds=<s> count=<work items> unit=<what count counts>
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace bench {

struct Args {
  int threads = 1;
  int reps = 5;
  long n = 0;         // 0: the benchmark's default
  int warmups = -1;   // -1: time-based
};

inline Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    auto value = [&](const char* flag) -> long {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value\n", argv[0], flag);
        std::exit(2);
      }
      char* end = nullptr;
      const long v = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || v < 0) {
        std::fprintf(stderr, "%s: %s '%s': expected a non-negative integer\n", argv[0], flag, argv[i]);
        std::exit(2);
      }
      return v;
    };
    if (!std::strcmp(argv[i], "-t")) {
      a.threads = static_cast<int>(value("-t"));
    } else if (!std::strcmp(argv[i], "-r")) {
      a.reps = static_cast<int>(value("-r"));
    } else if (!std::strcmp(argv[i], "-n")) {
      a.n = value("-n");
    } else if (!std::strcmp(argv[i], "-w")) {
      a.warmups = static_cast<int>(value("-w"));
    } else {
      std::fprintf(stderr, "usage: %s [-t threads] [-r repetitions] [-n size] [-w warm-up runs]\n", argv[0]);
      std::exit(2);
    }
  }
  if (a.threads < 1) a.threads = 1;
  return a;
}

inline double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline void report(const char* bench, const char* impl, int threads, int rep, double seconds, double count,
                   const char* unit) {
  std::printf("RESULT bench=%s impl=%s threads=%d rep=%d seconds=%.9f count=%.0f unit=%s\n", bench, impl, threads,
              rep, seconds, count, unit);
  std::fflush(stdout);
}

// Warms up (caches, page mappings, clock frequency, threads started): runs
// body() a.warmups times, or at least once and for at least 0.2 s.
template <class F>
void warm_up(const Args& a, F& body) {
  if (a.warmups >= 0) {
    for (int k = 0; k < a.warmups; ++k) body();
    return;
  }
  const double t0 = now();
  do {
    body();
  } while (now() - t0 < 0.2);
}

// Warms up, then runs body() reps times, reporting each.
template <class F>
void measure(const Args& a, const char* bench, const char* impl, double count, const char* unit, F&& body) {
  warm_up(a, body);
  for (int r = 0; r < a.reps; ++r) {
    const double t0 = now();
    body();
    report(bench, impl, a.threads, r, now() - t0, count, unit);
  }
}

// EPCC's delay: a busy loop of a calibrated length, the work each thread
// does inside a construct (EPCC's default: 0.1 µs). Never inlined, and
// aligned: the calibration and every construct run the very same loop code
// (inlined copies placed differently ran up to 2x faster or slower, which
// made overheads come out negative).
[[gnu::noinline, gnu::aligned(64)]] inline void spin(long iterations) {
  for (long i = 0; i < iterations; ++i) asm volatile("");
}

struct Delay {
  long iterations = 0;
  double seconds = 0;  // measured time of one delay, on one thread
};

inline Delay calibrate_delay(double target_seconds) {
  long iters = 1000;
  double t = 0;
  for (;;) {  // grow until a batch of 1000 delays takes long enough to time
    const double t0 = now();
    for (int k = 0; k < 1000; ++k) spin(iters);
    t = (now() - t0) / 1000;
    if (t > 2e-7 || iters > (1L << 30)) break;
    iters *= 2;
  }
  Delay d;
  d.iterations = std::max(1L, static_cast<long>(static_cast<double>(iters) * target_seconds / t));
  // The reference: the fastest of a few timings of the delay itself (on a
  // shared machine, preemption only ever makes a timing longer).
  double best = 1e9;
  for (int k = 0; k < 7; ++k) {
    const double t0 = now();
    for (int j = 0; j < 10000; ++j) spin(d.iterations);
    best = std::min(best, (now() - t0) / 10000);
  }
  d.seconds = best;
  return d;
}

// EPCC's measure: runs `reps` constructs, each doing one delay per thread,
// and reports the overhead per construct, the time beyond one delay.
template <class F>
void measure_overhead(const Args& a, const char* bench, const char* impl, long reps, const Delay& d, F&& body) {
  warm_up(a, body);
  for (int r = 0; r < a.reps; ++r) {
    const double t0 = now();
    body();
    const double t = now() - t0;
    report(bench, impl, a.threads, r, t - static_cast<double>(reps) * d.seconds, static_cast<double>(reps),
           "construct");
  }
}

// Keeps a value alive without the compiler seeing through it.
template <class T>
inline void keep(T const& v) {
  asm volatile("" : : "r,m"(v) : "memory");
}

}  // namespace bench
