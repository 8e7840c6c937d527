/* How canopy's OpenMP runtime schedules explicit tasks (docs/omp.md):
   tasks one thread creates are stolen by the others; a thread waiting in
   taskwait steals its own descendants from other threads; priority tasks
   run before lower ones; fib(25) with taskwait does not exhaust the stack;
   detached tasks complete when their event is fulfilled (by a task or by a
   thread outside OpenMP), holding back their dependent tasks until then;
   many outstanding tasks. Run with OMP_MAX_TASK_PRIORITY=9 (CMakeLists). */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "omp_check.h"

/* Spin until *flag != 0; false after `seconds` (the scheduling under test
   would have deadlocked). */
static int wait_flag(volatile int* flag, double seconds) {
  const double end = omp_get_wtime() + seconds;
  while (!__atomic_load_n(flag, __ATOMIC_ACQUIRE))
    if (omp_get_wtime() > end) return 0;
  return 1;
}

/* Tasks created by one thread run on another: the first task waits until
   the second has started on a thread other than its creator; the creator
   itself can only run one of them (it takes its newest task first). */
static void stealing(void) {
  volatile int other_started = 0;
  int creator = -1, ok = 1;
#pragma omp parallel num_threads(2) shared(other_started, creator, ok)
#pragma omp single
  {
    creator = omp_get_thread_num();
    for (int i = 0; i < 2; ++i) {
#pragma omp task shared(other_started, creator, ok)
      {
        if (omp_get_thread_num() != creator)
          __atomic_store_n(&other_started, 1, __ATOMIC_RELEASE);
        else if (!wait_flag(&other_started, 20))
          ok = 0;
      }
    }
#pragma omp taskwait
  }
  CHECK(ok);
}

/* A thread waiting in taskwait steals its descendants from other threads:
   child C is taken by the other thread, creates grandchildren there and
   waits until one of them has run on the waiting creator's thread. */
static void waiter_steals_descendants(void) {
  volatile int c_started = 0, grandchild_on_creator = 0;
  int creator = -1, ok = 1;
#pragma omp parallel num_threads(2) shared(c_started, grandchild_on_creator, creator, ok)
#pragma omp single
  {
    creator = omp_get_thread_num();
#pragma omp task shared(c_started, grandchild_on_creator, creator, ok)
    {
      if (omp_get_thread_num() != creator) {
        __atomic_store_n(&c_started, 1, __ATOMIC_RELEASE);
        for (int i = 0; i < 32; ++i) {
#pragma omp task shared(grandchild_on_creator, creator)
          if (omp_get_thread_num() == creator) __atomic_store_n(&grandchild_on_creator, 1, __ATOMIC_RELEASE);
        }
        if (!wait_flag(&grandchild_on_creator, 20)) ok = 0;
#pragma omp taskwait
      } else {
        __atomic_store_n(&c_started, 1, __ATOMIC_RELEASE);  /* the creator ran it: nothing to test this time */
        __atomic_store_n(&grandchild_on_creator, 2, __ATOMIC_RELEASE);
      }
    }
    /* Let the other thread (at the single's barrier) take C first. */
    if (!wait_flag(&c_started, 20)) ok = 0;
#pragma omp taskwait
  }
  CHECK(ok);
  CHECK(grandchild_on_creator != 0);
}

/* Priorities: the other thread is held in a gate task while the creator
   makes tasks of priorities 1..5 and 0 in mixed order; then the creator
   alone runs them in its taskwait: highest priority first, priority 0 last. */
static void priorities(void) {
  enum { N = 24 };
  int order[N], pos = 0, creator = -1, ok = 1;
  volatile int gate_taken = 0, finished = 0;
#pragma omp parallel num_threads(2) shared(order, pos, creator, ok, gate_taken, finished)
#pragma omp single
  {
    creator = omp_get_thread_num();
#pragma omp task priority(9) shared(creator, ok, gate_taken, finished)
    {
      if (omp_get_thread_num() != creator) {
        __atomic_store_n(&gate_taken, 1, __ATOMIC_RELEASE);
        const double end = omp_get_wtime() + 20;
        while (__atomic_load_n(&finished, __ATOMIC_ACQUIRE) < N)
          if (omp_get_wtime() > end) {
            ok = 0;
            break;
          }
      } else {
        __atomic_store_n(&gate_taken, 2, __ATOMIC_RELEASE);
      }
    }
    if (!wait_flag(&gate_taken, 20)) ok = 0;
    for (int i = 0; i < N; ++i) {
      const int p = (i * 7) % 6; /* 0..5, mixed */
#pragma omp task priority(p) firstprivate(p) shared(order, pos, finished)
      {
        int k;
#pragma omp atomic capture
        k = pos++;
        order[k] = p;
        __atomic_fetch_add(&finished, 1, __ATOMIC_ACQ_REL);
      }
    }
#pragma omp taskwait
  }
  CHECK(ok);
  CHECK(pos == N);
  if (gate_taken == 1)  /* the gate held the other thread: only the creator ran them, in order */
    for (int i = 1; i < N; ++i) CHECK(order[i - 1] >= order[i]);
}

static long fib(int n) {
  if (n < 2) return n;
  long a, b;
#pragma omp task shared(a)
  a = fib(n - 1);
#pragma omp task shared(b)
  b = fib(n - 2);
#pragma omp taskwait
  return a + b;
}

struct fulfiller {
  omp_event_handle_t event;
  volatile int* fulfilled;
};

static void* fulfill_later(void* p) {
  struct fulfiller* f = p;
  usleep(20000);
  __atomic_store_n(f->fulfilled, 1, __ATOMIC_RELEASE);
  omp_fulfill_event(f->event);
  return NULL;
}

/* A detached task is complete only when its event is fulfilled: its
   dependent task waits for that, whether a task or a thread outside
   OpenMP fulfils it. */
static void detach(void) {
  for (int outside = 0; outside < 2; ++outside) {
    volatile int fulfilled = 0;
    int x = 0, seen = -1;
    omp_event_handle_t ev;
    pthread_t th;
    struct fulfiller f;
#pragma omp parallel num_threads(omp_get_max_threads()) shared(fulfilled, x, seen, ev, th, f)
#pragma omp single
    {
#pragma omp task detach(ev) depend(out : x) shared(x)
      x = 1;
#pragma omp task depend(in : x) shared(x, seen, fulfilled)
      seen = __atomic_load_n(&fulfilled, __ATOMIC_ACQUIRE) * 10 + x;
      if (outside) {
        f.event = ev;
        f.fulfilled = &fulfilled;
        CHECK(pthread_create(&th, NULL, fulfill_later, &f) == 0);
      } else {
#pragma omp task shared(fulfilled) firstprivate(ev)
        {
          usleep(20000);
          __atomic_store_n(&fulfilled, 1, __ATOMIC_RELEASE);
          omp_fulfill_event(ev);
        }
      }
#pragma omp taskwait
      if (outside) pthread_join(th, NULL);
    }
    CHECK(seen == 11);
  }
}

/* Many outstanding tasks from one thread, each run once. */
static void many(long n) {
  long sum = 0;
#pragma omp parallel shared(sum)
#pragma omp single
  for (long i = 0; i < n; ++i) {
#pragma omp task firstprivate(i) shared(sum)
    {
#pragma omp atomic
      sum += i;
    }
  }
  CHECK(sum == n * (n - 1) / 2);
}

int main(void) {
  CHECK_CANOPY();
  /* CANOPY_OMP_TEST_SMALL: smaller sizes (the ThreadSanitizer run) */
  const int small = getenv("CANOPY_OMP_TEST_SMALL") != NULL;
  CHECK(omp_get_max_task_priority() >= 5);
  stealing();
  waiter_steals_descendants();
  priorities();
  long f = 0;
#pragma omp parallel shared(f)
#pragma omp single
  f = fib(small ? 18 : 25);
  CHECK(f == (small ? 2584 : 75025));
  detach();
  many(small ? 20000 : 300000);
  printf("task_scheduling: ok\n");
  return 0;
}
