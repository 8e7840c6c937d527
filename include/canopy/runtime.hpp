// canopy's task runtime: workers bound to the machine's topology, fork-join
// (task groups, invoke) and parallel loops, on a work-stealing scheduler
// that steals close before it steals far (docs/runtime.md).
//
//   canopy::Runtime rt;                       // CANOPY_NUM_THREADS, CANOPY_BIND, ...
//   long fib(int n) {
//     if (n < 2) return n;
//     long a, b;
//     canopy::invoke([&] { a = fib(n - 1); },   // queued, may be stolen
//                    [&] { b = fib(n - 2); });  // runs now
//     return a + b;
//   }
//   long r = rt.run([] { return fib(30); });
//   canopy::TaskGroup g;                      // any number of tasks
//   for (auto& x : items) g.spawn([&x] { process(x); });
//   g.wait();                                 // helps; rethrows a task's exception
//   canopy::parallel_for(0, n, [&](std::int64_t i) { y[i] += a * x[i]; });
//   g.spawn(canopy::Affinity::node(1, /*strict=*/true), [&] { ... });  // hints (affinity.hpp)
//
// Threads: a runtime of N workers starts N-1 threads; worker 0 is the
// thread that calls into the runtime (Runtime::run, a TaskGroup, a loop),
// as in OpenMP and oneTBB. A second outside thread calling in at the same
// time takes one of a few extra slots (unbound). Everything works from any
// thread; from a worker (inside a task or Runtime::run) it is fastest.
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "canopy/affinity.hpp"
#include "canopy/detail/affine.hpp"
#include "canopy/detail/spawn.hpp"
#include "canopy/detail/worker.hpp"

namespace canopy {

class Topology;

// How each worker thread is bound: to all PUs of its core, to its one PU,
// or not at all (CANOPY_BIND=core|pu|none).
enum class BindMode { Core, PU, None };

struct RuntimeOptions {
  int num_threads = 0;            // 0: one worker per core of the PUs this process may use
  BindMode bind = BindMode::Core;
  // Placement policy for the workers and for automatic affinity; "" =
  // compact core order for the workers, canopy's own policy for affinity.
  std::string policy;
  bool display_affinity = false;  // print one line per worker at start
  bool stats = false;             // print per-worker statistics when the runtime ends
  // Where data-flow tasks without a hint run (affinity.hpp).
  DataAffinity data_affinity = DataAffinity::Write;
  // Automatic affinity of task graphs (affinity.hpp, docs/auto-affinity.md).
  AutoAffinity affinity = AutoAffinity::None;
  // A directory where automatic affinity writes each matrix and placement
  // it computes ("" = none): CANOPY_AFFINITY_DUMP.
  std::string affinity_dump;

  // Defaults overridden by CANOPY_NUM_THREADS, CANOPY_BIND, CANOPY_POLICY,
  // CANOPY_DISPLAY_AFFINITY, CANOPY_STATS, CANOPY_DATA_AFFINITY,
  // CANOPY_AFFINITY and CANOPY_AFFINITY_DUMP. A bad
  // value throws canopy::Error naming the variable, its value and what is
  // expected.
  static RuntimeOptions from_env();
};

BindMode parse_bind_mode(const std::string& s);  // "core", "pu", "none"
std::string to_string(BindMode m);

// Where a worker runs.
struct WorkerPlacement {
  int worker = 0;
  int pu = -1;            // logical PU (its place in the placement)
  int pu_os = -1;         // OS index of that PU
  int core = -1;          // logical core
  int numa = -1;          // logical NUMA node
  std::vector<int> cpus;  // OS CPUs it is bound to (empty: not bound)
};

struct WorkerStats {
  std::uint64_t tasks_run = 0;
  std::uint64_t steals_same_core = 0;
  std::uint64_t steals_same_numa = 0;  // same NUMA node or same L3, other core
  std::uint64_t steals_remote = 0;
  std::uint64_t failed_steal_rounds = 0;
  std::uint64_t parks = 0;
  double parked_seconds = 0;
  // Tasks with an affinity hint: run where the hint asked (taken from this
  // worker's queues or its node's), or here although hinted elsewhere (a
  // loose one this worker took from another's queue when idle).
  std::uint64_t hinted_here = 0;
  std::uint64_t hinted_away = 0;
  // Bytes that tasks on this worker accessed on its own NUMA node and on
  // other nodes, as reported by the data-flow layer (detail::add_locality).
  std::uint64_t bytes_local = 0;
  std::uint64_t bytes_remote = 0;
};

class Runtime {
 public:
  Runtime();  // RuntimeOptions::from_env()
  explicit Runtime(const RuntimeOptions& options);
  // Workers placed on `topology` instead of the PUs this process may use:
  // an XML or synthetic machine, for tests and experiments (e.g. several
  // NUMA nodes on a machine that has one). Binding needs this machine:
  // on another one, options.bind must be BindMode::None (else canopy::Error).
  Runtime(const RuntimeOptions& options, const Topology& topology);
  ~Runtime();  // waits for nothing: every task group must have been waited for
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  int num_workers() const;
  const RuntimeOptions& options() const;
  const std::vector<WorkerPlacement>& placement() const;
  // The NUMA nodes the workers are on, numbered 0 .. num_numa_nodes()-1 in
  // the machine's order (what Affinity::node counts in), and worker w's.
  int num_numa_nodes() const;
  int worker_numa_node(int worker) const;
  std::vector<WorkerStats> stats() const;
  // The CANOPY_STATS table.
  void print_stats(std::ostream& out) const;

  // Runs f() on the calling thread as a worker of this runtime and returns
  // its result; tasks it spawns are shared with the other workers.
  template <class F>
  decltype(auto) run(F&& f);

  // Index of the calling thread among the workers of the runtime it is in
  // (0 .. num_workers()-1, or an extra slot's index), -1 outside.
  static int this_worker_index();

  detail::RuntimeCore* core() const { return core_; }

 private:
  detail::RuntimeCore* core_;
};

// The runtime used by a TaskGroup or a loop called outside any runtime,
// created on first use from the environment.
Runtime& default_runtime();

namespace detail {
// Enters `rt` from a thread that is not one of its workers: claims a slot
// (worker 0's, else an extra one) and makes the thread that worker until
// leave_runtime. Returns the slot; `prev` receives the thread's previous
// worker (of another runtime, or nullptr).
Worker* enter_runtime(RuntimeCore* rt, Worker** prev);
void leave_runtime(Worker* slot, Worker* prev) noexcept;
RuntimeCore* default_core();
// The default runtime's core if default_runtime() has made it, else
// nullptr (makes nothing: the waits without a runtime use it).
RuntimeCore* default_core_if_any();

class RuntimeScope {
 public:
  explicit RuntimeScope(RuntimeCore* rt) {
    Worker* w = tls_worker;
    if (w && w->rt == rt) [[likely]] {
      worker_ = w;
    } else {
      worker_ = enter_runtime(rt, &prev_);
      entered_ = true;
    }
  }
  ~RuntimeScope() {
    if (entered_) leave_runtime(worker_, prev_);
  }
  RuntimeScope(const RuntimeScope&) = delete;
  RuntimeScope& operator=(const RuntimeScope&) = delete;
  Worker* worker() const { return worker_; }

 private:
  Worker* worker_ = nullptr;
  Worker* prev_ = nullptr;
  bool entered_ = false;
};

[[noreturn]] void throw_wrong_thread(const char* what);
}  // namespace detail

template <class F>
decltype(auto) Runtime::run(F&& f) {
  detail::RuntimeScope scope(core_);
  return std::forward<F>(f)();
}

// A group of tasks to wait for. spawn() queues a task on the calling
// worker's deque (others may steal it); wait() runs the group's tasks that
// nobody stole, then helps with other work until the stolen ones are done,
// and rethrows the first exception a task threw (every task of the group
// still runs). The group can be used again after wait(). The destructor
// waits too (but drops an exception: call wait()).
//
// spawn() may be called by the thread that created the group and by tasks
// of the group's runtime (e.g. a task spawning its siblings); wait() only
// by the thread that created the group. A callable that can be copied as
// bytes and fits in 48 bytes (a lambda capturing a few references or
// numbers) is stored in the deque slot itself: no allocation at all; others
// go to a block of the worker's pool.
class TaskGroup {
 public:
  TaskGroup() {
    detail::Worker* w = detail::tls_worker;
    if (!w) [[unlikely]] w = enter(detail::default_core());
    init(w);
  }
  explicit TaskGroup(Runtime& rt) {
    detail::Worker* w = detail::tls_worker;
    if (!w || w->rt != rt.core()) [[unlikely]] w = enter(rt.core());
    init(w);
  }
  ~TaskGroup() {
    if (!g_.complete() || g_.error.load(std::memory_order_relaxed) != nullptr || entered_) [[unlikely]]
      destroy_slow();
  }
  TaskGroup(const TaskGroup&) = delete;
  TaskGroup& operator=(const TaskGroup&) = delete;

  template <class F>
  void spawn(F&& f) {
    static_assert(std::is_invocable_v<std::decay_t<F>&>, "TaskGroup::spawn needs a callable with no arguments");
    detail::Worker* w = detail::tls_worker;
    if (w == g_.owner) [[likely]] {
      detail::spawn_task<false>(w, &g_, std::forward<F>(f));
      ++g_.pending;
    } else {
      spawn_foreign(w, std::forward<F>(f));
    }
  }

  void wait() {
    detail::Worker* w = g_.owner;
    if (detail::tls_worker != w) [[unlikely]] detail::throw_wrong_thread("TaskGroup::wait");
    drain(w);
    if (g_.error.load(std::memory_order_relaxed) != nullptr) [[unlikely]] detail::rethrow_group_error(&g_);
  }

  // Spawns f with an affinity hint (canopy/affinity.hpp): strict, it runs
  // only on that worker / a worker of that node; loose, there unless an
  // idle worker elsewhere takes it. The same callers as spawn(). No hint
  // (Affinity{}) is spawn(f).
  template <class F>
  void spawn(const Affinity& affinity, F&& f) {
    static_assert(std::is_invocable_v<std::decay_t<F>&>, "TaskGroup::spawn needs a callable with no arguments");
    if (affinity.kind == Affinity::Kind::None) {
      spawn(std::forward<F>(f));
      return;
    }
    spawn_hint(affinity, std::forward<F>(f));
  }

  // Spawns f with a hint that worker `target` should run it (it is mailed
  // there and may still be stolen by anyone): what the affinity
  // partitioner uses. A target outside the runtime is ignored.
  template <class F>
  void spawn_hinted(int target, F&& f);

 private:
  detail::Worker* enter(detail::RuntimeCore* rt) {
    entered_ = true;
    return detail::enter_runtime(rt, &prev_);
  }
  void init(detail::Worker* w) { g_.init(w, w->deque.bottom()); }
  // Runs the group's tasks nobody stole (newest first), then waits for the
  // stolen ones; leaves the group ready for the next spawn.
  [[gnu::always_inline]] void drain(detail::Worker* w) {
    for (std::int64_t b; (b = w->deque.bottom()) > g_.base;) {
      const detail::TaskSlot* s = w->deque.pop_at(b);
      if (!s) break;
      detail::Group* g = detail::slot_run(s)(s, w);
      if (g == &g_) [[likely]]
        --g_.pending;
      else if (g)
        detail::count_done(g, w);
    }
    if (!g_.complete()) [[unlikely]] detail::wait_slow(w, &g_);
    if (g_.pending != 0) [[unlikely]] {
      g_.pending = 0;
      g_.remote.store(0, std::memory_order_relaxed);
    }
  }
  // Out of line, so that the destructor's fast path stays three tests.
  [[gnu::noinline]] void destroy_slow() noexcept {
    if (!g_.complete() && detail::tls_worker == g_.owner) drain(g_.owner);
    if (g_.error.load(std::memory_order_relaxed) != nullptr) detail::drop_group_error(&g_);
    if (entered_) detail::leave_runtime(g_.owner, prev_);
  }
  template <class F>
  void spawn_foreign(detail::Worker* w, F&& f) {
    if (!w || w->rt != g_.owner_shared->rt) detail::throw_wrong_thread("TaskGroup::spawn");
    // Counted before it is queued: it may end (and count +1) at once.
    g_.remote.fetch_sub(1, std::memory_order_relaxed);
    try {
      detail::spawn_task<true>(w, &g_, std::forward<F>(f));
    } catch (...) {
      g_.remote.fetch_add(1, std::memory_order_relaxed);
      throw;
    }
  }

  template <class F>
  void spawn_hint(const Affinity& affinity, F&& f) {
    detail::Worker* w = detail::tls_worker;
    if (!w || w->rt != g_.owner_shared->rt) detail::throw_wrong_thread("TaskGroup::spawn");
    const detail::Target t = detail::resolve(w->rt, affinity);
    if (t.none()) {
      spawn(std::forward<F>(f));
      return;
    }
    // Counted like a foreign spawn (whoever runs it counts it), before it
    // is queued: it may end at once.
    g_.remote.fetch_sub(1, std::memory_order_relaxed);
    try {
      detail::spawn_affine(w, &g_, t, std::forward<F>(f));
    } catch (...) {
      g_.remote.fetch_add(1, std::memory_order_relaxed);
      throw;
    }
  }

  detail::Group g_;
  detail::Worker* prev_;  // set when entered_
  bool entered_ = false;
};

// Runs f1 and f2, possibly in parallel, and returns when both are done:
// f1 is queued (stealable) in a deque slot, f2 runs at once; if nobody stole
// f1, it then runs here, called directly. The cheapest fork-join there is
// (no allocation, no counter). A thief may run a copy of f1 (when f1 is a
// small callable that can be copied as bytes). An exception of f1 or f2
// propagates; if f2 throws and f1 was not stolen yet, f1 is not run.
template <class F1, class F2>
void invoke(F1&& f1, F2&& f2);

// ---- parallel loops ----

// [begin, end) cut into chunks of at least `grain` indices. grain 0 lets
// the runtime choose: pieces are split further when they are stolen (load
// balance at low overhead). A grain > 0 splits down to chunks of that size,
// always the same way: parallel_reduce is then deterministic.
struct Range {
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t grain = 0;
};

// Records which worker ran each chunk of a loop, so that the next run of
// the same loop (same range and grain) sends each chunk back to that worker
// (oneTBB's affinity_partitioner): iterative codes keep their data in cache.
class AffinityPartitioner {
 public:
  void reset() { last_.clear(); }
  // Worker that ran chunk c last (-1: unknown); for tests and tools.
  int last_worker(std::int64_t c) const { return c >= 0 && c < num_chunks() ? last_[c] : -1; }
  std::int64_t num_chunks() const { return static_cast<std::int64_t>(last_.size()); }

 private:
  template <class F>
  friend void parallel_for(Range r, F&& body, AffinityPartitioner& ap);
  std::vector<std::int16_t> last_;
  std::int64_t begin_ = 0, end_ = 0, grain_ = 0;
  const void* runtime_ = nullptr;
};

// body(lo, hi) over chunks of the range.
template <class F>
void parallel_for(Range r, F&& body);
// body(i) for each i in [begin, end).
template <class F>
void parallel_for(std::int64_t begin, std::int64_t end, F&& body);
// body(lo, hi) with the chunks of the last run going back to their workers.
template <class F>
void parallel_for(Range r, F&& body, AffinityPartitioner& ap);
// Combines f(lo, hi, identity) over chunks with reduce(a, b) (associative),
// left to right.
template <class T, class F, class R>
T parallel_reduce(Range r, T identity, F&& f, R&& reduce);

}  // namespace canopy

#include "canopy/detail/invoke.hpp"
#include "canopy/detail/loops.hpp"
