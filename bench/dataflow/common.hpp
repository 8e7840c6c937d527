// The shared driver of the data-flow benchmarks (bench/dataflow): the flags
// every program takes and the result lines run.py reads. It builds on
// bench/runtime/driver.hpp (same RESULT line, same warm-up rule) and adds
// what data-flow problems need:
//
//   -t THREADS   workers / threads (default 1)
//   -r REPS      measured repetitions after the warm-up (default 5)
//   -n SIZE      problem size (each benchmark has its default)
//   -w RUNS      warm-up runs (default: as many as fill 0.2 s, at least one)
//   --smoke      a tiny size, and check the result (a test)
//   --tile NB    tile size (Cholesky)
//   --blocks B   row blocks (Jacobi)
//   --mode M     wavefront: empty, busy or both (default both)
//   --spin K     wavefront busy tasks: iterations of the delay loop (default:
//                calibrated here to 500 ns; run.py calibrates once and passes
//                the same K to every program, so that they do the same work)
//   --calibrate  print "CALIBRATE iterations=K seconds=S" for 500 ns and exit
//   --no-check   do not check the results (instruction counts: the check
//                would be counted with the tasks)
//
// Each repetition prints one line:
//   RESULT bench=<name> impl=<competitor> threads=<t> rep=<i> seconds=<s> count=<work items> unit=<what count counts>
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "driver.hpp"  // bench/runtime/driver.hpp

namespace bench::df {

struct Args : bench::Args {
  bool smoke = false;
  long tile = 0;    // 0: the benchmark's default
  long blocks = 0;  // 0: the benchmark's default
  std::string mode = "both";
  long spin = -1;   // -1: calibrate
  bool calibrate = false;
  bool check = true;
};

[[noreturn]] inline void usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s [-t threads] [-r repetitions] [-n size] [-w warm-up runs] [--smoke] [--tile nb] "
               "[--blocks b] [--mode empty|busy|both] [--spin iterations] [--calibrate] [--no-check]\n",
               prog);
  std::exit(2);
}

inline Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const char* flag = argv[i];
    auto text = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value\n", argv[0], flag);
        std::exit(2);
      }
      return argv[++i];
    };
    auto number = [&](long min) -> long {
      const char* s = text();
      char* end = nullptr;
      const long v = std::strtol(s, &end, 10);
      if (*s == '\0' || *end != '\0' || v < min) {
        std::fprintf(stderr, "%s: %s '%s': expected an integer >= %ld\n", argv[0], flag, s, min);
        std::exit(2);
      }
      return v;
    };
    if (!std::strcmp(flag, "-t")) {
      a.threads = static_cast<int>(number(1));
    } else if (!std::strcmp(flag, "-r")) {
      a.reps = static_cast<int>(number(0));
    } else if (!std::strcmp(flag, "-n")) {
      a.n = number(1);
    } else if (!std::strcmp(flag, "-w")) {
      a.warmups = static_cast<int>(number(0));
    } else if (!std::strcmp(flag, "--smoke")) {
      a.smoke = true;
    } else if (!std::strcmp(flag, "--tile")) {
      a.tile = number(1);
    } else if (!std::strcmp(flag, "--blocks")) {
      a.blocks = number(1);
    } else if (!std::strcmp(flag, "--spin")) {
      a.spin = number(0);
    } else if (!std::strcmp(flag, "--no-check")) {
      a.check = false;
    } else if (!std::strcmp(flag, "--calibrate")) {
      a.calibrate = true;
    } else if (!std::strcmp(flag, "--mode")) {
      a.mode = text();
      if (a.mode != "empty" && a.mode != "busy" && a.mode != "both") {
        std::fprintf(stderr, "%s: --mode '%s': expected empty, busy or both\n", argv[0], a.mode.c_str());
        std::exit(2);
      }
    } else {
      usage(argv[0]);
    }
  }
  return a;
}

// Like bench::measure, for bodies that must prepare each run outside the
// clock (restore a matrix, register handles): body() times its own run and
// returns the seconds.
template <class F>
void measure_timed(const Args& a, const char* bench, const char* impl, double count, const char* unit, F&& body) {
  if (a.warmups >= 0) {
    for (int k = 0; k < a.warmups; ++k) body();
  } else {
    const double t0 = now();
    do {
      body();
    } while (now() - t0 < 0.2);
  }
  for (int r = 0; r < a.reps; ++r) report(bench, impl, a.threads, r, body(), count, unit);
}

// A failed check: the benchmark's result is wrong, so the numbers are void.
[[noreturn]] inline void fail(const char* prog, const std::string& what) {
  std::fprintf(stderr, "%s: check failed: %s\n", prog, what.c_str());
  std::exit(1);
}

}  // namespace bench::df
