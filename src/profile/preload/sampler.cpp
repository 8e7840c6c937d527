// libcanopy-profile.so: the portable sampler behind `canopy profile`,
// loaded into an unmodified program with LD_PRELOAD (docs/profile.md).
//
// Every thread gets a timer on its own CPU time (a perf_event task-clock
// event, else a POSIX thread CPU-time timer) whose signal interrupts it
// every period of CPU it uses. The handler decodes the instructions at the
// interrupted program counter (decode.hpp) to get the data addresses the
// thread is about to access, and appends them to the thread's buffer. The
// buffers are written to <CANOPY_PROFILE_DIR>/samples.<pid>.<n> when the
// process ends (exit, _exit, exec, or the flush signal of --duration);
// `canopy profile` turns them into the thread-to-thread sharing matrix.
//
// The program must behave as without it: the library uses two real-time
// signals of its own (SA_RESTART, errno preserved), no lock and no
// allocation in its signal handlers, bounded memory per thread (the buffer
// halves its sampling rate instead of growing), its descriptors close on
// exec and sit high, and a forked child starts a fresh profile of its own.
// Without CANOPY_PROFILE_DIR in the environment it does nothing at all.
#include <dlfcn.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "../samples_format.hpp"
#include "decode.hpp"

namespace {
using namespace canopy::profile;
namespace fmt = canopy::profile::format;

constexpr int kAccessesPerSample = 4;

// One per thread the program ran; kept (never freed) until the process's
// samples are written, so that threads that ended still count.
struct ThreadState {
  ThreadState* next = nullptr;  // the list of every thread (g_threads), pushed once
  int creation = 0;
  int tid = 0;
  fmt::Sample* buf = nullptr;   // mmap'ed, `cap` records
  std::size_t cap = 0;
  std::atomic<std::size_t> count{0};
  std::uint64_t signals = 0, decoded = 0, stride = 1;
  AddressDecoder decoder;
  int perf_fd = -1;
  timer_t timer{};
  bool has_timer = false;
};

bool g_active = false;                 // CANOPY_PROFILE_DIR was set
std::atomic<ThreadState*> g_threads{nullptr};
std::atomic<int> g_next_creation{0};
std::atomic<bool> g_stopped{false};    // no more samples (flushed early, or exiting)
// Who is writing the samples file: 0 nobody, else the writer's tid. A
// write made once sampling has stopped is final (g_final_written): the
// process is ending, and a later call (a second thread's exit, the
// destructor) must neither rewrite nor cut short what is there.
std::atomic<int> g_writer{0};
std::atomic<bool> g_final_written{false};
std::atomic<bool> g_stopped_early{false};  // the flush signal came: later writes say so too
int g_sample_signal = 0, g_flush_signal = 0;
std::uint64_t g_period_ns = 2000000;
std::size_t g_max_samples = 1 << 16;
bool g_use_perf = false;
char g_dir[3072];
char g_path[4096];
char g_part_path[4096];                // written first, then renamed to g_path: never read half-written
int g_pid = 0;                         // this process (a vfork child shares our memory but not our pid)
char g_timer_desc[160];
int g_parent_pid = 0;
pthread_key_t g_key;
using OmpNum = int (*)();
OmpNum g_omp_num = nullptr;            // canopy's OpenMP runtime: the thread's number at level 1
using PthreadCreate = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
PthreadCreate g_real_create = nullptr;
using Exit = void (*)(int);
Exit g_real_exit = nullptr;

__thread ThreadState* tls_state __attribute__((tls_model("initial-exec"))) = nullptr;

int gettid_() { return static_cast<int>(::syscall(SYS_gettid)); }

// --- writing (async-signal-safe: only open/write/close) ---

void write_all(int fd, const void* p, std::size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    c += w;
    n -= static_cast<std::size_t>(w);
  }
}

void write_file() {
  const int fd = ::open(g_part_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd >= 0) {
    fmt::FileHeader h{};
    std::memcpy(h.magic, fmt::kMagic, sizeof h.magic);
    h.pid = static_cast<std::int32_t>(::getpid());
    h.parent_pid = g_parent_pid;
    h.period_ns = g_period_ns;
    h.flags = g_stopped_early.load() ? fmt::kStoppedEarly : 0;
    std::memcpy(h.timer, g_timer_desc, sizeof h.timer);
    write_all(fd, &h, sizeof h);
    for (ThreadState* t = g_threads.load(std::memory_order_acquire); t; t = t->next) {
      fmt::ThreadHeader th{};
      th.creation = t->creation;
      th.tid = t->tid;
      th.count = t->count.load(std::memory_order_acquire);
      th.signals = t->signals;
      th.decoded = t->decoded;
      th.stride = t->stride;
      write_all(fd, &th, sizeof th);
      write_all(fd, t->buf, th.count * sizeof(fmt::Sample));
    }
    ::close(fd);
    ::rename(g_part_path, g_path);
  }
}

// The process is not the one the library started in: a vfork child, which
// shares the parent's memory (and so its buffers and state) until it execs
// or exits. It must leave them alone.
bool in_vfork_child() { return static_cast<int>(::syscall(SYS_getpid)) != g_pid; }

// Writes the samples file (async-signal-safe: open, write, rename, close,
// nanosleep). When another thread is writing it, waits until it is done:
// two threads may call exit at once, and the process must not end in the
// middle of the other's write.
void write_samples() {
  if (!g_active || in_vfork_child()) return;
  const int saved = errno;
  const int me = gettid_();
  while (!g_final_written.load()) {
    int writer = 0;
    if (g_writer.compare_exchange_strong(writer, me)) {
      const bool final = g_stopped.load();
      write_file();
      if (final) g_final_written.store(true);
      g_writer.store(0);
      break;
    }
    if (writer == me) break;  // a signal handler interrupted this thread's own write
    timespec pause{0, 100000};
    ::nanosleep(&pause, nullptr);
  }
  errno = saved;
}

// --- sampling ---

void stop_own_timer(ThreadState* t) {
  if (t->perf_fd >= 0) ::ioctl(t->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
  if (t->has_timer) {
    itimerspec off{};
    ::timer_settime(t->timer, 0, &off, nullptr);
  }
}

void push(ThreadState* t, const fmt::Sample& s) {
  std::size_t c = t->count.load(std::memory_order_relaxed);
  if (c == t->cap) {
    // Full: keep every other sample and from now on one in twice as many:
    // memory stays bounded and the samples stay spread over the whole run.
    for (std::size_t i = 0; i < c / 2; ++i) t->buf[i] = t->buf[2 * i];
    c /= 2;
    t->stride *= 2;
  }
  t->buf[c] = s;
  t->count.store(c + 1, std::memory_order_release);
}

void take_sample(ThreadState* t, const ucontext_t* uc) {
  if (++t->signals % t->stride != 0) return;
  const greg_t* g = uc->uc_mcontext.gregs;
  Registers r;
  r.gpr[kRax] = g[REG_RAX]; r.gpr[kRbx] = g[REG_RBX]; r.gpr[kRcx] = g[REG_RCX]; r.gpr[kRdx] = g[REG_RDX];
  r.gpr[kRsi] = g[REG_RSI]; r.gpr[kRdi] = g[REG_RDI]; r.gpr[kRbp] = g[REG_RBP]; r.gpr[kRsp] = g[REG_RSP];
  r.gpr[kR8] = g[REG_R8]; r.gpr[kR9] = g[REG_R9]; r.gpr[kR10] = g[REG_R10]; r.gpr[kR11] = g[REG_R11];
  r.gpr[kR12] = g[REG_R12]; r.gpr[kR13] = g[REG_R13]; r.gpr[kR14] = g[REG_R14]; r.gpr[kR15] = g[REG_R15];
  r.rip = static_cast<std::uint64_t>(g[REG_RIP]);
  // Decode only within the page of the program counter: it is mapped (the
  // thread runs there), its neighbours may not be.
  const std::uint64_t page = r.rip & ~std::uint64_t{4095};
  const auto* code = reinterpret_cast<const std::uint8_t*>(page);
  Access acc[kAccessesPerSample];
  const int n = t->decoder.find_accesses(code, code + 4096, page, r, acc, kAccessesPerSample);
  if (n == 0) return;
  ++t->decoded;
  const int omp = g_omp_num ? g_omp_num() : -1;
  for (int i = 0; i < n; ++i)
    push(t, fmt::Sample{(acc[i].address & ~fmt::kWriteBit) | (acc[i].write ? fmt::kWriteBit : 0), omp, 0});
}

void on_sample(int, siginfo_t*, void* ctx) {
  const int saved = errno;
  if (ThreadState* t = tls_state) {
    if (g_stopped.load(std::memory_order_relaxed)) {
      stop_own_timer(t);
    } else {
      take_sample(t, static_cast<const ucontext_t*>(ctx));
      // The task-clock event is one-shot (see start_timer): re-armed only
      // now, so at most one of its signals is ever queued.
      if (t->perf_fd >= 0) ::ioctl(t->perf_fd, PERF_EVENT_IOC_REFRESH, 1);
    }
  }
  errno = saved;
}

void on_flush(int, siginfo_t*, void*) {
  g_stopped_early.store(true);
  g_stopped.store(true);
  write_samples();
}

// --- per-thread set-up ---

long perf_event_open_(perf_event_attr* a, int tid) {
  return ::syscall(SYS_perf_event_open, a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

// A task-clock event on the calling thread that signals it every period of
// its CPU time (high-resolution; the POSIX CPU timers only fire at the
// kernel's tick). Returns the descriptor or -errno.
int open_task_clock(int tid) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = PERF_TYPE_SOFTWARE;
  a.config = PERF_COUNT_SW_TASK_CLOCK;
  a.sample_period = g_period_ns;
  a.disabled = 1;
  a.exclude_kernel = 1;
  a.exclude_hv = 1;
  a.wakeup_events = 1;
  const long fd = perf_event_open_(&a, tid);
  if (fd < 0) return -errno;
  // Keep it away from the low descriptors the program may expect to get.
  int f = static_cast<int>(fd);
  const int high = ::fcntl(f, F_DUPFD_CLOEXEC, 512);
  if (high >= 0) {
    ::close(f);
    f = high;
  }
  f_owner_ex owner{F_OWNER_TID, tid};
  if (::fcntl(f, F_SETOWN_EX, &owner) != 0 || ::fcntl(f, F_SETSIG, g_sample_signal) != 0 ||
      ::fcntl(f, F_SETFL, ::fcntl(f, F_GETFL) | O_ASYNC) != 0) {
    const int e = errno;
    ::close(f);
    return -e;
  }
  return f;
}

bool start_posix_timer(ThreadState* t) {
  sigevent ev{};
  ev.sigev_notify = SIGEV_THREAD_ID;
  ev.sigev_signo = g_sample_signal;
  ev._sigev_un._tid = t->tid;
  if (::timer_create(CLOCK_THREAD_CPUTIME_ID, &ev, &t->timer) != 0) return false;
  t->has_timer = true;
  itimerspec its{};
  its.it_interval.tv_sec = static_cast<time_t>(g_period_ns / 1000000000);
  its.it_interval.tv_nsec = static_cast<long>(g_period_ns % 1000000000);
  its.it_value = its.it_interval;
  return ::timer_settime(t->timer, 0, &its, nullptr) == 0;
}

void start_timer(ThreadState* t) {
  if (g_use_perf) {
    const int fd = open_task_clock(t->tid);
    if (fd >= 0) {
      // One overflow, then the event disables itself until the handler
      // re-arms it. Left running, its real-time signals would queue up
      // whenever a handler runs longer than a period, and when the queue
      // is full the kernel sends SIGIO instead, which kills the program.
      t->perf_fd = fd;
      ::ioctl(fd, PERF_EVENT_IOC_REFRESH, 1);
      return;
    }
  }
  start_posix_timer(t);
}

ThreadState* begin_thread(int creation) {
  // malloc, not new: the library needs no C++ runtime in a C program.
  void* mem = std::malloc(sizeof(ThreadState));
  if (!mem) return nullptr;
  auto* t = new (mem) ThreadState;
  t->creation = creation;
  t->tid = gettid_();
  void* m = ::mmap(nullptr, g_max_samples * sizeof(fmt::Sample), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
  if (m == MAP_FAILED || !t->decoder.open()) return nullptr;  // this thread goes unsampled
  t->buf = static_cast<fmt::Sample*>(m);
  t->cap = g_max_samples;
  ThreadState* head = g_threads.load();
  do t->next = head;
  while (!g_threads.compare_exchange_weak(head, t));
  tls_state = t;
  ::pthread_setspecific(g_key, t);
  start_timer(t);
  return t;
}

// The thread ends (pthread key destructor): stop its signals; its samples stay.
void end_thread(void* p) {
  auto* t = static_cast<ThreadState*>(p);
  tls_state = nullptr;
  if (t->perf_fd >= 0) {
    ::close(t->perf_fd);
    t->perf_fd = -1;
  }
  if (t->has_timer) {
    ::timer_delete(t->timer);
    t->has_timer = false;
  }
}

struct StartArgs {
  void* (*fn)(void*);
  void* arg;
  int creation;
};

void* thread_start(void* p) {
  const StartArgs a = *static_cast<StartArgs*>(p);
  std::free(p);
  begin_thread(a.creation);
  return a.fn(a.arg);
}

// Reserves this process image's file name: samples.<pid>.<n>, the first n
// not taken (an exec keeps the pid; its new image takes the next n).
void reserve_path() {
  const int pid = static_cast<int>(::getpid());
  for (int n = 0; n < 1000; ++n) {
    std::snprintf(g_path, sizeof g_path, "%s/samples.%d.%d", g_dir, pid, n);
    const int fd = ::open(g_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::close(fd);
      // Not samples.*: neither canopy nor its "samples written yet" check
      // mistakes a write in progress for the file.
      std::snprintf(g_part_path, sizeof g_part_path, "%s/partial.%d.%d", g_dir, pid, n);
      return;
    }
    if (errno != EEXIST) return;
  }
}

// The forked child: only the forking thread lives on, with no timer (timers
// are not inherited); it starts a profile of its own, in its own file.
void after_fork_in_child() {
  if (!g_active) return;
  for (ThreadState* t = g_threads.load(); t; t = t->next)
    if (t->perf_fd >= 0) ::close(t->perf_fd);  // the parent's threads' events
  g_threads.store(nullptr);
  g_next_creation.store(1);
  g_stopped.store(false);
  g_stopped_early.store(false);
  g_writer.store(0);
  g_final_written.store(false);
  g_pid = static_cast<int>(::getpid());
  g_parent_pid = static_cast<int>(::getppid());
  reserve_path();
  begin_thread(0);
}

// perf_error: why the task-clock event is not used (an errno), or -1: the
// POSIX timer was chosen (CANOPY_PROFILE_TIMER=posix: `--timer`, or
// canopy's default for the period).
void describe_timer(int perf_error) {
  const double us = static_cast<double>(g_period_ns) / 1000.0;
  if (g_use_perf)
    std::snprintf(g_timer_desc, sizeof g_timer_desc, "perf_event task-clock every %.0f us of thread CPU time", us);
  else
    std::snprintf(g_timer_desc, sizeof g_timer_desc,
                  "POSIX thread CPU-time timer every %.0f us, at most one per kernel tick (perf_event task-clock: %s)",
                  us, perf_error < 0 ? "not chosen" : std::strerror(perf_error));
}

unsigned long env_number(const char* name, unsigned long fallback, unsigned long lo, unsigned long hi) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const unsigned long x = std::strtoul(v, &end, 10);
  if (*end || x < lo || x > hi) {
    std::fprintf(stderr, "canopy-profile: %s=%s: expected a number in [%lu, %lu]; using %lu\n", name, v, lo, hi,
                 fallback);
    return fallback;
  }
  return x;
}

__attribute__((constructor)) void start_profiling() {
  const char* dir = std::getenv("CANOPY_PROFILE_DIR");
  if (!dir || !*dir || std::strlen(dir) >= sizeof g_dir) return;
  std::strcpy(g_dir, dir);
  g_real_create = reinterpret_cast<PthreadCreate>(::dlsym(RTLD_NEXT, "pthread_create"));
  g_real_exit = reinterpret_cast<Exit>(::dlsym(RTLD_NEXT, "exit"));
  if (!g_real_create || !g_real_exit) return;
  g_pid = static_cast<int>(::getpid());
  // canopy always sets it (profile_launch.hpp's kDefaultPeriodUs); the
  // fallback is the same value, for a library loaded by hand.
  g_period_ns = env_number("CANOPY_PROFILE_PERIOD_US", 2000, 10, 10000000) * 1000;
  g_max_samples = env_number("CANOPY_PROFILE_MAX_SAMPLES", 1 << 16, 64, 1 << 26);
  g_omp_num = reinterpret_cast<OmpNum>(::dlsym(RTLD_DEFAULT, "canopy_omp_profile_thread_num"));
  g_sample_signal = SIGRTMAX - 7;
  g_flush_signal = SIGRTMAX - 6;
  struct sigaction sa {};
  sa.sa_sigaction = on_sample;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  ::sigaction(g_sample_signal, &sa, nullptr);
  sa.sa_sigaction = on_flush;
  sigaddset(&sa.sa_mask, g_sample_signal);
  ::sigaction(g_flush_signal, &sa, nullptr);
  ::pthread_key_create(&g_key, end_thread);
  ::pthread_atfork(nullptr, nullptr, after_fork_in_child);
  g_parent_pid = static_cast<int>(::getppid());
  reserve_path();
  // Try the high-resolution timer once; its error says why the other is
  // used. CANOPY_PROFILE_TIMER=posix (canopy chooses it: --timer, validated
  // there, and its default by period) skips it.
  const char* timer = std::getenv("CANOPY_PROFILE_TIMER");
  if (timer && std::strcmp(timer, "posix") == 0) {
    g_use_perf = false;
    describe_timer(-1);
  } else {
    const int probe = open_task_clock(gettid_());
    g_use_perf = probe >= 0;
    if (probe >= 0) ::close(probe);
    describe_timer(probe >= 0 ? 0 : -probe);
  }
  g_active = true;
  begin_thread(g_next_creation++);
}

__attribute__((destructor)) void stop_profiling() {
  if (!g_active) return;
  g_stopped.store(true);
  write_samples();
}

template <typename F>
F next_symbol(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

// --- interposed functions ---

extern "C" {

__attribute__((visibility("default"))) int pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                                          void* (*fn)(void*), void* arg) {
  PthreadCreate real = g_real_create ? g_real_create : next_symbol<PthreadCreate>("pthread_create");
  if (!g_active) return real(thread, attr, fn, arg);
  auto* a = static_cast<StartArgs*>(std::malloc(sizeof(StartArgs)));
  if (!a) return real(thread, attr, fn, arg);
  *a = StartArgs{fn, arg, g_next_creation++};  // numbered in creation order, by the creating thread
  const int rc = real(thread, attr, thread_start, a);
  if (rc != 0) std::free(a);
  return rc;
}

// exit: write the samples before the exit handlers run, so that a second
// thread calling exit meanwhile waits for the write (glibc's exit ends the
// process with its internal _exit, which no interposition sees).
__attribute__((visibility("default"), noreturn)) void exit(int status) {
  if (g_active && !in_vfork_child()) {
    g_stopped.store(true);
    write_samples();
  }
  Exit real = g_real_exit ? g_real_exit : next_symbol<Exit>("exit");
  real(status);
  __builtin_unreachable();
}

// The process ends without running destructors, or becomes another
// program: write what was sampled first.
__attribute__((visibility("default"), noreturn)) void _exit(int status) {
  if (g_active && !in_vfork_child()) {
    g_stopped.store(true);
    write_samples();
  }
  ::syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status) { _exit(status); }

__attribute__((visibility("default"))) int execve(const char* path, char* const argv[], char* const envp[]) {
  write_samples();
  return next_symbol<int (*)(const char*, char* const*, char* const*)>("execve")(path, argv, envp);
}

__attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  write_samples();
  return next_symbol<int (*)(const char*, char* const*)>("execv")(path, argv);
}

__attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  write_samples();
  return next_symbol<int (*)(const char*, char* const*)>("execvp")(file, argv);
}

__attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[], char* const envp[]) {
  write_samples();
  return next_symbol<int (*)(const char*, char* const*, char* const*)>("execvpe")(file, argv, envp);
}

}  // extern "C"
