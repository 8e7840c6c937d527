/* What every bench/omp program shares: the flags of bench/runtime/driver.hpp
 * (which is C++; these programs are plain C11 so that gcc -fopenmp builds
 * them against the libgomp ABI alone), the RESULT line run.py reads, a
 * warm-up-then-measure loop, failing with a message, and the one-off check
 * that names the OpenMP library this process really loaded.
 *
 *   -t THREADS  threads (default 1)        -r REPS  measured runs (default 5)
 *   -n SIZE     problem size (0: default)  -w RUNS  warm-up runs (default: 0.2 s worth, at least one)
 *   -i INNER    inner threads (nested parallelism only, default 1)
 *   -m          print "RUNTIME <path>" for every mapped OpenMP library and
 *               "TEAM <size>" (a parallel region of the -t given before it), then exit
 *
 * The runtime is chosen by run.py through LD_LIBRARY_PATH, not at build time:
 * it also sets CANOPY_BENCH_IMPL to the runtime's name, which goes into the
 * RESULT lines (impl=omp when unset).
 *   RESULT bench=<b> impl=<i> threads=<t> rep=<r> seconds=<s> count=<n> unit=<u>
 */
#ifndef CANOPY_OMP_BENCH_H
#define CANOPY_OMP_BENCH_H

#include <omp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  int threads, reps, warmups, inner;
  long n;
} bench_args;

static void bench_fail(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "bench/omp: ");
  vfprintf(stderr, fmt, ap);
  fprintf(stderr, "\n");
  va_end(ap);
  exit(1);
}

static double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Prints the path of every mapped library whose file name holds "omp"
 * and ".so" (libgomp.so.1, libomp.so.5, canopy's libgomp.so.1) once, after a parallel
 * region made sure the runtime is loaded and started. */
static void bench_print_runtime(void) {
  int team = 0;
#pragma omp parallel
  {
#pragma omp atomic
    team++;
  }
  FILE* f = fopen("/proc/self/maps", "r");
  if (!f) bench_fail("cannot read /proc/self/maps");
  char line[4096], seen[16][1024];
  int nseen = 0;
  while (fgets(line, sizeof line, f)) {
    char* path = strchr(line, '/');
    if (!path) continue;
    path[strcspn(path, "\n")] = '\0';
    const char* base = strrchr(path, '/') + 1;
    if (!strstr(base, "omp") || !strstr(base, ".so")) continue;
    int dup = 0;
    for (int k = 0; k < nseen; ++k) dup |= !strcmp(seen[k], path);
    if (dup || nseen == 16) continue;
    snprintf(seen[nseen++], sizeof seen[0], "%s", path);
    printf("RUNTIME %s\n", path);
  }
  fclose(f);
  printf("TEAM %d\n", team);
}

/* The process's peak resident set (VmHWM of /proc/self/status), KiB; -1
 * when unreadable. Read in the process itself: a parent's rusage of a
 * forked child also counts the parent's pages the child held before exec. */
__attribute__((unused)) static long bench_peak_rss_kib(void) {
  FILE* f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (fgets(line, sizeof line, f))
    if (!strncmp(line, "VmHWM:", 6)) kib = strtol(line + 6, NULL, 10);
  fclose(f);
  return kib;
}

static bench_args bench_parse(int argc, char** argv) {
  bench_args a = {1, 5, -1, 1, 0};
  for (int i = 1; i < argc; ++i) {
    const char* flag = argv[i];
    if (!strcmp(flag, "-m")) {
      omp_set_num_threads(a.threads);
      bench_print_runtime();
      exit(0);
    }
    if (strcmp(flag, "-t") && strcmp(flag, "-r") && strcmp(flag, "-n") && strcmp(flag, "-w") && strcmp(flag, "-i")) {
      fprintf(stderr, "usage: %s [-t threads] [-r repetitions] [-n size] [-w warm-up runs] [-i inner threads] [-m]\n",
              argv[0]);
      exit(2);
    }
    if (i + 1 >= argc) {
      fprintf(stderr, "%s: %s needs a value\n", argv[0], flag);
      exit(2);
    }
    char* end = NULL;
    const long v = strtol(argv[++i], &end, 10);
    if (*end != '\0' || v < 0 || end == argv[i]) {
      fprintf(stderr, "%s: %s '%s': expected a non-negative integer\n", argv[0], flag, argv[i]);
      exit(2);
    }
    switch (flag[1]) {
      case 't': a.threads = (int)v; break;
      case 'r': a.reps = (int)v; break;
      case 'n': a.n = v; break;
      case 'w': a.warmups = (int)v; break;
      default: a.inner = (int)v; break;
    }
  }
  if (a.threads < 1) a.threads = 1;
  if (a.inner < 1) a.inner = 1;
  omp_set_num_threads(a.threads);
  return a;
}

static const char* bench_impl(void) {
  const char* s = getenv("CANOPY_BENCH_IMPL");
  return s && *s ? s : "omp";
}

static void bench_report(const char* bench, int threads, int rep, double seconds, double count, const char* unit) {
  printf("RESULT bench=%s impl=%s threads=%d rep=%d seconds=%.9f count=%.0f unit=%s\n", bench, bench_impl(), threads,
         rep, seconds, count, unit);
  fflush(stdout);
}

/* Runs run(ctx) as warm-up (a.warmups times, or at least once and 0.2 s),
 * then a.reps times timed; check(ctx) after each run (untimed) must return
 * NULL or the error, which fails the program. */
typedef void (*bench_fn)(void* ctx);
typedef const char* (*bench_check_fn)(void* ctx);

__attribute__((unused)) static void bench_measure(const bench_args* a, const char* bench, int threads, double count, const char* unit,
                          bench_fn run, bench_check_fn check, void* ctx) {
  const double t0 = bench_now();
  int w = 0;
  do {
    run(ctx);
    const char* err = check ? check(ctx) : NULL;
    if (err) bench_fail("%s (warm-up, %d threads): %s", bench, threads, err);
    ++w;
  } while (a->warmups >= 0 ? w < a->warmups : bench_now() - t0 < 0.2);
  for (int r = 0; r < a->reps; ++r) {
    const double t = bench_now();
    run(ctx);
    const double s = bench_now() - t;
    const char* err = check ? check(ctx) : NULL;
    if (err) bench_fail("%s (%d threads): %s", bench, threads, err);
    bench_report(bench, threads, r, s, count, unit);
  }
}

/* A small deterministic generator (splitmix64) for inputs and trees. */
static inline uint64_t bench_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

#endif
