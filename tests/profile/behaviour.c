/* A program that exercises what the profiling library must not change
 * (profile_cli_test.cpp): exit paths, exit statuses, fork, exec, threads
 * created and ended at any time, and the program's own signal handlers
 * and timers. Each mode checks what it can itself and exits 1 when the
 * program did not behave as it would without profiling.
 *
 *   behaviour work MS            compute for about MS ms of CPU, exit 0
 *   behaviour exit CODE          compute a little, exit(CODE)
 *   behaviour _exit CODE         a second thread computes; main calls _exit(CODE)
 *   behaviour threads N          N threads started and ended one after another
 *   behaviour fork [CODE]        the child computes too; the parent waits, exits CODE (0)
 *   behaviour kill               compute, then raise SIGTERM (default action: killed)
 *   behaviour vfork              a vfork child whose exec fails calls _exit; the parent
 *                                then computes for 100 ms (and must still be sampled)
 *   behaviour exitrace N         N threads and main compute; main calls exit(0), and
 *                                while it runs the program's destructors the threads
 *                                call exit(0) too: glibc lets a second exit find the
 *                                handlers taken and end the process at once, before the
 *                                first caller reached the library's destructor (what
 *                                libgomp's sections-2.c does by chance)
 *   behaviour exec PROG ARGS...  compute, then exec PROG ARGS
 *   behaviour signals            its own SIGUSR1 handler, ITIMER_PROF timer and
 *                                an uninterrupted 100 ms sleep
 *   behaviour malloc MS          4 threads calling malloc/free for MS ms of CPU each
 *                                (samples land inside malloc: the sampler must not
 *                                allocate) */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double data[1 << 16];

static double cpu_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static void compute(double ms) {
  const double start = cpu_ms();
  while (cpu_ms() - start < ms)
    for (int i = 0; i < (1 << 16); ++i) data[i] = data[i] * 0.5 + i;
}

static void* worker(void* arg) {
  compute((double)(long)arg);
  return NULL;
}

static void* allocator(void* arg) {
  const double start = cpu_ms();
  void* keep[64] = {0};
  for (unsigned i = 0; cpu_ms() - start < (double)(long)arg; ++i) {
    free(keep[i % 64]);
    keep[i % 64] = malloc(16 + (i * 37) % 4000);
  }
  for (int i = 0; i < 64; ++i) free(keep[i]);
  return NULL;
}

static volatile int exitrace_armed, exitrace_go;
static void* exit_when_told(void* arg) {
  compute(30);
  while (!exitrace_go) {
  }
  exit(0);
  return arg;
}
/* Runs in main's exit, among the program's destructors (before those of the
 * libraries it loaded): the threads' exits come now. */
__attribute__((destructor)) static void release_the_exits(void) {
  if (!exitrace_armed) return;
  exitrace_go = 1;
  struct timespec t = {0, 100 * 1000 * 1000};
  nanosleep(&t, NULL);
}

static volatile sig_atomic_t usr1_seen, prof_ticks;
static void on_usr1(int s) { (void)s; usr1_seen = 1; }
static void on_prof(int s) { (void)s; prof_ticks++; }

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const char* mode = argv[1];
  if (strcmp(mode, "work") == 0 && argc == 3) {
    compute(atof(argv[2]));
    return 0;
  }
  if (strcmp(mode, "exit") == 0 && argc == 3) {
    compute(20);
    exit(atoi(argv[2]));
  }
  if (strcmp(mode, "_exit") == 0 && argc == 3) {
    pthread_t t;
    pthread_create(&t, NULL, worker, (void*)100000L); /* still running at _exit */
    compute(50);
    _exit(atoi(argv[2]));
  }
  if (strcmp(mode, "threads") == 0 && argc == 3) {
    for (int i = 0; i < atoi(argv[2]); ++i) {
      pthread_t t;
      pthread_create(&t, NULL, worker, (void*)20L);
      pthread_join(t, NULL);
    }
    return 0;
  }
  if (strcmp(mode, "malloc") == 0 && argc == 3) {
    pthread_t t[3];
    for (int i = 0; i < 3; ++i) pthread_create(&t[i], NULL, allocator, (void*)(long)atoi(argv[2]));
    allocator((void*)(long)atoi(argv[2]));
    for (int i = 0; i < 3; ++i) pthread_join(t[i], NULL);
    return 0;
  }
  if (strcmp(mode, "fork") == 0) {
    pid_t pid = fork();
    if (pid == 0) {
      compute(50);
      _exit(0);
    }
    compute(50);
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) return 1;
    return argc >= 3 ? atoi(argv[2]) : 0;
  }
  if (strcmp(mode, "exitrace") == 0 && argc == 3) {
    const int n = atoi(argv[2]);
    for (int i = 0; i < n; ++i) {
      pthread_t t;
      pthread_create(&t, NULL, exit_when_told, NULL);
    }
    compute(30);
    exitrace_armed = 1;
    exit(0);
  }
  if (strcmp(mode, "vfork") == 0) {
    char* const args[] = {"/nonexistent/canopy-test", NULL};
    pid_t pid = vfork();
    if (pid == 0) {
      execv(args[0], args);
      _exit(0); /* in the parent's memory: must not stop the parent's profile */
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) return 1;
    compute(100);
    return 0;
  }
  if (strcmp(mode, "kill") == 0) {
    compute(20);
    raise(SIGTERM);
    return 1; /* not reached: SIGTERM's default action ends the process */
  }
  if (strcmp(mode, "exec") == 0 && argc >= 3) {
    compute(20);
    execv(argv[2], argv + 2);
    perror("execv");
    return 1;
  }
  if (strcmp(mode, "signals") == 0) {
    signal(SIGUSR1, on_usr1);
    signal(SIGPROF, on_prof);
    struct itimerval it = {{0, 5000}, {0, 5000}};
    setitimer(ITIMER_PROF, &it, NULL);
    compute(100);
    raise(SIGUSR1);
    struct timespec req = {0, 100 * 1000 * 1000}, rem;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int rc = nanosleep(&req, &rem);
    clock_gettime(CLOCK_MONOTONIC, &b);
    const double slept = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) * 1e-6;
    it = (struct itimerval){{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &it, NULL);
    printf("usr1 %d, prof ticks %d, nanosleep %d after %.0f ms\n", (int)usr1_seen, (int)prof_ticks, rc, slept);
    return usr1_seen && prof_ticks > 0 && rc == 0 && slept >= 99 ? 0 : 1;
  }
  fprintf(stderr, "behaviour: unknown mode or arguments\n");
  return 2;
}
