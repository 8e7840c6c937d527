// Task graphs: data-flow tasks recorded once and run many times.
//
// A TaskGraph records tasks with the same accesses as canopy::submit and
// finds their dependencies once, when each task is added (read after write,
// write after read, write after write, in the order of the add calls).
// run() then executes every task in dependency order, independent tasks in
// parallel, and can be called again and again: each run costs only the
// tasks (one atomic decrement per dependency, a deque push per task that
// becomes ready beside another), not the dependency analysis. For a loop
// that repeats the same graph (time steps of a stencil, a factorization per
// right-hand side, a wavefront per frame) this is what Taskflow and oneTBB's
// flow graph offer when the graph is built in advance, and what OpenMP 6.0's
// `taskgraph` construct records.
//
//   canopy::TaskGraph g;
//   for (int i = 0; i < n; ++i)
//     g.add({canopy::read(in[i]), canopy::write(out[i])}, [=] { step(i); });
//   for (int t = 0; t < steps; ++t) g.run(rt);   // rethrows a task's exception
//
// Semantics: a run executes each task once, after the tasks added before it
// that conflict with it have finished. A task that throws cancels the tasks
// that depend on it (directly or through other cancelled tasks) for that run;
// run() rethrows the first exception once every other task has finished or
// been cancelled, and the graph can be run again. Handles are read when a
// task is added and not looked at again: the graph keeps no reference to
// them (freeing a handle later changes nothing in the graph; the callables
// must of course not use memory that is gone). Graph tasks are not ordered
// with tasks of canopy::submit, count no locality and get no owner-computes
// hint: say where a task should run with its Affinity. The callables are
// kept (copied or moved) until the graph is destroyed and called by
// reference each run. One run at a time per graph; add() while it runs is
// an error.
//
// Automatic affinity (docs/auto-affinity.md): with CANOPY_AFFINITY=auto (or
// RuntimeOptions::affinity, or set_affinity on the graph) the first run of
// the graph is observed (which worker ran each task, how long it took),
// then the graph's matrix is mapped onto the runtime's workers and the
// placement applied: each task goes to its worker (loose: idle workers may
// still take it) and each handle's pages to the NUMA node of the worker
// that writes it. Adding tasks, or running on another runtime, makes the
// next run observe and map again; nothing else does. matrix(), apply() and
// canopy::compute_placement are the same steps by hand.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

#include "canopy/affinity.hpp"
#include "canopy/auto_affinity.hpp"
#include "canopy/dataflow.hpp"
#include "canopy/runtime.hpp"

namespace canopy {

class TaskGraph {
 public:
  TaskGraph();
  ~TaskGraph();
  TaskGraph(TaskGraph&&) noexcept;
  TaskGraph& operator=(TaskGraph&&) noexcept;
  TaskGraph(const TaskGraph&) = delete;
  TaskGraph& operator=(const TaskGraph&) = delete;

  // Records f (a callable with no arguments) with its accesses; returns its
  // index (0, 1, ...). Throws canopy::Error for a null or freed handle, a bad
  // access mode, more than kMaxAccesses distinct handles, or a graph that is
  // running.
  template <class F>
  std::size_t add(std::span<const Access> accesses, F&& f, Affinity affinity = {}) {
    using Fn = std::decay_t<F>;
    static_assert(std::is_invocable_v<Fn&>, "TaskGraph::add needs a callable with no arguments");
    void* mem = allocate(sizeof(Fn), alignof(Fn));
    Fn* fn = ::new (mem) Fn(std::forward<F>(f));
    constexpr void (*destroy)(void*) =
        std::is_trivially_destructible_v<Fn> ? nullptr : +[](void* p) { static_cast<Fn*>(p)->~Fn(); };
    return add_task(accesses.data(), accesses.size(), affinity, fn, +[](void* p) { (*static_cast<Fn*>(p))(); },
                    destroy, detail::trace_label<Fn>());
  }
  template <class F>
  std::size_t add(std::initializer_list<Access> accesses, F&& f, Affinity affinity = {}) {
    return add(std::span<const Access>(accesses.begin(), accesses.size()), std::forward<F>(f), affinity);
  }

  // Runs every task once on rt (without one: the calling worker's runtime,
  // else default_runtime()) and returns when all have finished; rethrows the
  // first exception a task threw. The calling thread helps. Throws
  // canopy::Error if the graph is already running.
  void run(Runtime& rt);
  void run();

  std::size_t size() const noexcept;   // tasks
  std::size_t edges() const noexcept;  // dependencies (one per ordered pair of tasks)

  // ---- automatic affinity (canopy/auto_affinity.hpp) ----
  // This graph's mode, over the runtime's RuntimeOptions::affinity.
  void set_affinity(AutoAffinity mode);
  // The task-to-task matrix of one run of the graph, as a loop replays it
  // (what the last tasks write, the first ones read in the next run), with
  // the tasks' labels and, once a run was observed, their durations.
  TaskMatrix matrix() const;
  // Applies a placement computed for rt (compute_placement, read_placement):
  // from the next run on, task t runs on worker placement_workers(rt, p)[t]
  // (a loose hint; a task's own Affinity wins), and each handle the graph
  // writes has its pages moved to the NUMA node of the worker whose tasks
  // write most of it, a handle it only reads to that of the worker reading
  // at least half of it (data_try_move_to_node: pages the kernel will not
  // move stay and are counted in affinity_report(); handles freed since
  // are skipped).
  // Throws canopy::Error when p does not have one PU per task, or the
  // graph is running. A placement applied by hand stays until
  // clear_placement(); automatic affinity does not replace it.
  void apply(Runtime& rt, const Placement& p);
  void clear_placement();
  // The worker each task is placed on (-1: none), empty without a placement.
  std::vector<int> task_workers() const;
  // What automatic affinity did for this graph so far.
  AffinityReport affinity_report() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
  void* allocate(std::size_t bytes, std::size_t align);
  void run_in(TaskGroup& group);
  // Takes ownership of fn (destroys it when it throws).
  // `label`: its spans' label in a trace (the callable's type).
  std::size_t add_task(const Access* accesses, std::size_t count, const Affinity& affinity, void* fn,
                       void (*invoke)(void*), void (*destroy)(void*), const char* label);
};

}  // namespace canopy
