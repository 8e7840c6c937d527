/* EPCC-style overheads of OpenMP constructs: the time per construct beyond
 * the work done in it (a calibrated 0.1 µs delay, EPCC's default), as the
 * EPCC micro-benchmarks (syncbench, taskbench) measure them, in plain C so
 * that the same gcc binary runs on libgomp, libomp and canopy:
 *   parallel, for, parallel-for, barrier, single, critical, lock (set/unset),
 *   ordered (one ordered block per iteration of a schedule(static, 1) loop),
 *   doacross (the same loop with depend(sink: r - 1) / depend(source)),
 *   atomic, reduction, task-parallel (every thread creates tasks),
 *   task-master (one thread creates them all), taskwait (a task and a wait),
 *   task-depend (one thread creates chains of inout-dependent tasks, one
 *   chain per thread).
 * Overhead = (time - ideal) / constructs, where ideal is the delays on the
 * critical path: one per construct for the team constructs; all of them for
 * critical, lock, ordered and doacross (they serialise); delays / threads for tasks, timed as
 * EPCC's reference is, by running that many delays on the calling thread just
 * before each repetition (the spin loop's speed drifts by up to 2x over
 * seconds on a shared virtual machine, so a delay calibrated once at start-up
 * can be off by more than the overhead of a one-thread barrier). Atomic has
 * no delay (the time per update). Each construct runs enough repetitions to
 * take ~0.05 s (-n fixes the repetitions instead), so oversubscribed
 * teams (16 threads on 2 cores) are measured as well as 1 thread is.
 * Checks: reduction sums, counters under critical/lock/atomic, tasks run. */
#include "omp_bench.h"

__attribute__((noinline, aligned(64))) static void spin(long iterations) {
  for (long i = 0; i < iterations; ++i) __asm__ volatile("");
}

static long delay_iters;

static void calibrate(double target) {
  long iters = 1000;
  double t = 0;
  for (;;) {
    const double t0 = bench_now();
    for (int k = 0; k < 1000; ++k) spin(iters);
    t = (bench_now() - t0) / 1000;
    if (t > 2e-7 || iters > (1L << 30)) break;
    iters *= 2;
  }
  delay_iters = (long)((double)iters * target / t);
  if (delay_iters < 1) delay_iters = 1;
}

/* The time of `delays` delays run one after another on the calling thread. */
static double reference_seconds(long delays) {
  const double t0 = bench_now();
  for (long i = 0; i < delays; ++i) spin(delay_iters);
  return bench_now() - t0;
}

static long counter;  /* updated under critical / lock / atomic, checked */
static omp_lock_t lock;
static int p;         /* team size */

static void c_parallel(long reps) {
  for (long r = 0; r < reps; ++r) {
#pragma omp parallel
    spin(delay_iters);
  }
}
static void c_for(long reps) {
#pragma omp parallel
  for (long r = 0; r < reps; ++r) {
#pragma omp for schedule(static)
    for (int i = 0; i < p; ++i) spin(delay_iters);
  }
}
static void c_parallel_for(long reps) {
  for (long r = 0; r < reps; ++r) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < p; ++i) spin(delay_iters);
  }
}
static void c_barrier(long reps) {
#pragma omp parallel
  for (long r = 0; r < reps; ++r) {
    spin(delay_iters);
#pragma omp barrier
  }
}
static void c_single(long reps) {
#pragma omp parallel
  for (long r = 0; r < reps; ++r) {
#pragma omp single
    spin(delay_iters);
  }
}
static void c_critical(long reps) {
  counter = 0;
#pragma omp parallel
  for (long r = 0; r < reps / p; ++r) {
#pragma omp critical
    {
      spin(delay_iters);
      counter++;
    }
  }
}
static void c_lock(long reps) {
  counter = 0;
#pragma omp parallel
  for (long r = 0; r < reps / p; ++r) {
    omp_set_lock(&lock);
    spin(delay_iters);
    counter++;
    omp_unset_lock(&lock);
  }
}
/* EPCC's ORDERED: a loop handed round the team one iteration at a time,
 * each iteration an ordered block (they serialise); `counter` counts only
 * blocks that run in iteration order. */
static void c_ordered(long reps) {
  counter = 0;
#pragma omp parallel
  {
#pragma omp for ordered schedule(static, 1)
    for (long r = 0; r < reps; ++r) {
#pragma omp ordered
      {
        spin(delay_iters);
        if (counter == r) counter++;
      }
    }
  }
}
/* A doacross loop (ordered(1), depend(sink: r - 1) and depend(source))
 * handed round the team one iteration at a time: each iteration waits for
 * the one before, so the delays serialise; `counter` counts only
 * iterations that saw the one before complete. */
static void c_doacross(long reps) {
  counter = 0;
#pragma omp parallel
  {
#pragma omp for ordered(1) schedule(static, 1)
    for (long r = 0; r < reps; ++r) {
#pragma omp ordered depend(sink : r - 1)
      spin(delay_iters);
      if (counter == r) counter++;
#pragma omp ordered depend(source)
    }
  }
}
static void c_atomic(long reps) {
  counter = 0;
#pragma omp parallel
  for (long r = 0; r < reps / p; ++r) {
#pragma omp atomic
    counter++;
  }
}
static void c_reduction(long reps) {
  counter = 0;
  for (long r = 0; r < reps; ++r) {
    long sum = 0;
#pragma omp parallel reduction(+ : sum)
    {
      spin(delay_iters);
      sum += 1;
    }
    counter += sum;
  }
}
static void c_task_parallel(long reps) {
  counter = 0;
#pragma omp parallel
  {
    for (long r = 0; r < reps / p; ++r) {
#pragma omp task
      {
        spin(delay_iters);
#pragma omp atomic
        counter++;
      }
    }
  }
}
static void c_task_master(long reps) {
  counter = 0;
#pragma omp parallel
#pragma omp master
  for (long r = 0; r < reps; ++r) {
#pragma omp task
    {
      spin(delay_iters);
#pragma omp atomic
      counter++;
    }
  }
}
static void c_taskwait(long reps) {
  counter = 0;
#pragma omp parallel
  for (long r = 0; r < reps / p; ++r) {
#pragma omp task
    {
      spin(delay_iters);
#pragma omp atomic
      counter++;
    }
#pragma omp taskwait
  }
}
static long chains[64 * 8];  /* one dependency object per chain, a cache line apart */
static void c_task_depend(long reps) {
  const int nchains = p < 64 ? p : 64;
  for (int c = 0; c < nchains; ++c) chains[c * 8] = 0;
#pragma omp parallel
#pragma omp single
  for (long r = 0; r < reps; ++r) {
    long* obj = &chains[(r % nchains) * 8];
#pragma omp task depend(inout : obj[0]) firstprivate(obj)
    {
      spin(delay_iters);
      obj[0]++;
    }
  }
  counter = 0;
  for (int c = 0; c < nchains; ++c) counter += chains[c * 8];
}

typedef enum { TEAM, SERIAL, SPREAD, NONE } ideal_kind;
typedef struct {
  const char* name;
  void (*fn)(long);
  ideal_kind ideal;
  int counts; /* 1: `counter` must end as the constructs run */
} construct;

static const construct constructs[] = {
    {"parallel", c_parallel, TEAM, 0},     {"for", c_for, TEAM, 0},
    {"parallel-for", c_parallel_for, TEAM, 0}, {"barrier", c_barrier, TEAM, 0},
    {"single", c_single, TEAM, 0},         {"critical", c_critical, SERIAL, 1},
    {"lock", c_lock, SERIAL, 1},           {"ordered", c_ordered, SERIAL, 1},
    {"doacross", c_doacross, SERIAL, 1},
    {"atomic", c_atomic, NONE, 1},
    {"reduction", c_reduction, TEAM, 2},   {"task-parallel", c_task_parallel, SPREAD, 1},
    {"task-master", c_task_master, SPREAD, 1}, {"taskwait", c_taskwait, SPREAD, 1},
    {"task-depend", c_task_depend, SPREAD, 1},
};

/* Constructs a run with `reps` repetitions executes (some divide by p). */
static long executed(const construct* c, long reps) {
  return (c->fn == c_critical || c->fn == c_lock || c->fn == c_atomic || c->fn == c_task_parallel ||
          c->fn == c_taskwait)
             ? reps / p * p
             : reps;
}

static const construct* current;
static long current_reps;
static void run_current(void* ctx) {
  (void)ctx;
  current->fn(current_reps);
}
static char errbuf[200];
static const char* check_current(void* ctx) {
  (void)ctx;
  const long n = executed(current, current_reps);
  const long want = current->counts == 2 ? n * p : n;
  if (current->counts && counter != want) {
    snprintf(errbuf, sizeof errbuf, "counter is %ld after %ld constructs, expected %ld", counter, n, want);
    return errbuf;
  }
  return NULL;
}

/* Repetitions for a ~0.05 s run of the current construct: after one
 * warm-up run, doubles from 64 until the faster of two runs takes 0.01 s,
 * then scales (on a shared machine preemption only lengthens a run, so the
 * faster run is the truer one and one slow run cannot shrink the count). */
static double timed_run(long reps) {
  current_reps = reps;
  const double t0 = bench_now();
  run_current(NULL);
  return bench_now() - t0;
}
static long choose_reps(void) {
  long reps = 64;
  timed_run(reps);
  for (;;) {
    const double t1 = timed_run(reps), t2 = timed_run(reps);
    const double t = t1 < t2 ? t1 : t2;
    if (t >= 0.01 || reps >= (1L << 24)) {
      const double scaled = (double)reps * 0.05 / (t > 0 ? t : 1e-9);
      return scaled > (double)(1L << 26) ? (1L << 26) : (scaled < 256 ? 256 : (long)scaled);
    }
    reps *= 2;
  }
}

/* Whether the comma-separated list names `name`. */
static int skipped(const char* list, const char* name) {
  const size_t n = strlen(name);
  for (const char* s = list; *s;) {
    const size_t len = strcspn(s, ",");
    if (len == n && !strncmp(s, name, n)) return 1;
    s += len + (s[len] == ',');
  }
  return 0;
}

int main(int argc, char** argv) {
  bench_args a = bench_parse(argc, argv);
  p = a.threads;
  calibrate(1e-7);
  omp_init_lock(&lock);
  /* EPCC_SKIP: constructs not to run, comma-separated (run.py sets it for a
     runtime that cannot run one); every name must be a construct's. */
  const char* skip = getenv("EPCC_SKIP");
  if (skip) {
    long names = 1, known = 0;
    for (const char* c = skip; *c; ++c) names += *c == ',';
    for (size_t k = 0; k < sizeof constructs / sizeof constructs[0]; ++k) known += skipped(skip, constructs[k].name);
    if (known != names) bench_fail("EPCC_SKIP '%s': expected construct names (e.g. doacross,ordered)", skip);
  }
  for (size_t k = 0; k < sizeof constructs / sizeof constructs[0]; ++k) {
    current = &constructs[k];
    if (skip && skipped(skip, current->name)) continue;
    long reps = a.n;
    if (!reps) reps = choose_reps();
    if (reps < p) reps = p;
    current_reps = reps;
    const long n = executed(current, reps);
    long ideal_delays = 0; /* delays on the critical path */
    switch (current->ideal) {
      case TEAM: ideal_delays = n; break;
      case SERIAL: ideal_delays = n; break;
      case SPREAD: ideal_delays = n / p; break;
      case NONE: ideal_delays = 0; break;
    }
    /* bench_measure reports the raw time; the overhead is what it subtracts. */
    const double t0 = bench_now();
    int w = 0;
    do {
      run_current(NULL);
      const char* err = check_current(NULL);
      if (err) bench_fail("epcc-%s (warm-up, %d threads): %s", current->name, p, err);
      ++w;
    } while (a.warmups >= 0 ? w < a.warmups : bench_now() - t0 < 0.2);
    char name[64];
    snprintf(name, sizeof name, "epcc-%s", current->name);
    for (int r = 0; r < a.reps; ++r) {
      const double ideal = reference_seconds(ideal_delays);
      const double t = bench_now();
      run_current(NULL);
      const double s = bench_now() - t;
      const char* err = check_current(NULL);
      if (err) bench_fail("%s (%d threads): %s", name, p, err);
      bench_report(name, p, r, s - ideal, (double)n, "construct");
    }
  }
  omp_destroy_lock(&lock);
  return 0;
}
