// The shared driver of the applications (bench/apps, docs/bench-apps.md):
// the flags every program takes and the lines run.py reads.
//
//   -t THREADS        workers / threads (default 1)
//   -n SIZE           problem size (each application has its default)
//   -i, --iterations K  iterations (time steps, products, frames)
//   -r REPS           measured runs in this process (default 1)
//   -w RUNS           warm-up runs before them (default 0: the first run is
//                     measured, so that what a runtime learns during the
//                     run — automatic affinity — is paid for in the time)
//   --smoke           tiny sizes (a test)
//   --locality        log the bytes each task / loop chunk accesses during
//                     the last iteration and print a LOCALITY line (locality.hpp)
//   --no-check        skip the check of the result
//   --inject-error    change one value of the result before the check (a
//                     test that the check catches it: the program must exit 1)
//
// Every run's result is checked against a sequential reference (each
// application says how) unless --no-check; a wrong result exits 1.
// Lines on stdout:
//   RESULT bench=<app> impl=<impl> threads=<t> rep=<i> seconds=<s> count=<iterations> unit=iteration
//   LOCALITY bench=<app> impl=<impl> threads=<t> local_bytes=<l> remote_bytes=<r> untouched_bytes=<u> nodes=<n>
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "driver.hpp"  // bench/runtime/driver.hpp: now(), report()

namespace apps {

struct Args {
  int threads = 1;
  long n = 0;           // 0: the application's default
  long iterations = 0;  // 0: the application's default
  int reps = 1;
  int warmups = 0;
  bool smoke = false;
  bool locality = false;
  bool check = true;
  bool inject_error = false;
};

[[noreturn]] inline void usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s [-t threads] [-n size] [-i|--iterations k] [-r runs] [-w warm-up runs] [--smoke] "
               "[--locality] [--no-check] [--inject-error]\n",
               prog);
  std::exit(2);
}

inline Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const char* flag = argv[i];
    auto number = [&](long min) -> long {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s: %s needs a value\n", argv[0], flag);
        std::exit(2);
      }
      const char* s = argv[++i];
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
    } else if (!std::strcmp(flag, "-n")) {
      a.n = number(1);
    } else if (!std::strcmp(flag, "-i") || !std::strcmp(flag, "--iterations")) {
      a.iterations = number(1);
    } else if (!std::strcmp(flag, "-r")) {
      a.reps = static_cast<int>(number(1));
    } else if (!std::strcmp(flag, "-w")) {
      a.warmups = static_cast<int>(number(0));
    } else if (!std::strcmp(flag, "--smoke")) {
      a.smoke = true;
    } else if (!std::strcmp(flag, "--locality")) {
      a.locality = true;
    } else if (!std::strcmp(flag, "--no-check")) {
      a.check = false;
    } else if (!std::strcmp(flag, "--inject-error")) {
      a.inject_error = true;
    } else {
      usage(argv[0]);
    }
  }
  return a;
}

// A failed check: the application computed a wrong result.
[[noreturn]] inline void fail(const char* prog, const std::string& what) {
  std::fprintf(stderr, "%s: check failed: %s\n", prog, what.c_str());
  std::exit(1);
}

// Runs prepare() + timed() warmups + reps times; timed() runs the
// iterations and is what the RESULT line times; check() after each run.
template <class Prepare, class Timed, class Check>
void measure(const Args& a, const char* bench, const char* impl, long iterations, Prepare&& prepare, Timed&& timed,
             Check&& check) {
  for (int r = 0; r < a.warmups + a.reps; ++r) {
    prepare();
    const double t0 = bench::now();
    timed();
    const double t = bench::now() - t0;
    if (r >= a.warmups)
      bench::report(bench, impl, a.threads, r - a.warmups, t, static_cast<double>(iterations), "iteration");
    if (a.check) check();
  }
}

}  // namespace apps
