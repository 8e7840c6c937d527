// The runtime side of affinity hints (canopy/affinity.hpp), for
// TaskGroup::spawn(Affinity, f) and for the data-flow layer: resolving a
// hint to a target of one runtime, and queueing a task there.
//
// Where a task goes (schedule):
//  - no target: the calling worker's deque, as a spawn (the fast path);
//  - a worker: that worker's strict or loose queue; a node: that node's
//    strict or loose queue (src/runtime/affinity.cpp). A sleeping target
//    (a sleeping worker of the target node) is woken; otherwise, for a
//    loose task, some sleeper is, when nobody searches.
// Who takes what (search_round, src/runtime/scheduler.cpp): a worker looks
// at its own deque, its mailbox, its own strict and loose queues, its
// node's strict and loose queues, the tasks of groups kept in its subtree
// (bubbles.cpp), then steals from deques by distance; only after searching
// in vain for a while, from others' loose queues, by distance (whole groups
// of other subtrees first, bubbles.cpp):
//  - another worker's of its own node after 25 µs (kLooseDelayNs), so that
//    a target woken for its task takes it first;
//  - another node's, a worker's or the node's own queue, after 200 µs
//    (kRemoteLooseDelayNs), each time, and then only while that worker or
//    node is overloaded: a surplus or a stall (node_may_lend below; a
//    worker's own queue, its worker asleep or awake, stalls after 50 ms
//    only: kParkedLendNs, affinity.cpp's worker_lends).
// Strict queues are never taken by another worker (worker target) or a
// worker of another node (node target). A loose hint the calling worker
// satisfies itself is still queued, not pushed on its deque: deque tasks
// are what idle workers steal first, loose hinted ones what they take last.
#pragma once
#include <cstdint>
#include <new>
#include <type_traits>
#include <utility>

#include "canopy/affinity.hpp"
#include "canopy/detail/spawn.hpp"

namespace canopy::detail {

// A resolved hint: a worker index or a NUMA node index of the runtime
// (-1 = none; at most one of them is set), strict or loose.
struct Target {
  int worker = -1;
  int node = -1;
  bool strict = false;
  bool none() const { return worker < 0 && node < 0; }
};

// ---- When another node's idle worker may take a node's loose tasks ----
//
// Owner computes queues every ready data-flow task on the node of the data
// it writes, loosely; automatic affinity queues each placed task on its
// worker, loosely. Taking one elsewhere costs remote traffic for all its
// bytes, so an idle worker of another node (idle for 200 µs, scheduler.cpp)
// takes from a node's loose queue, or from a worker's there, only when that
// node (that worker: its count and wait, with its node's mean task time;
// affinity.cpp's worker_lends) is overloaded, by one of two tests of its
// state (the thief's idle time alone says nothing about the node: on a
// loaded or emulated machine a thief is "idle" for hundreds of µs while the
// node works through its queue at its pace):
//  - surplus: more tasks queued than kLendPerWorker per worker of the node,
//    more than it would start within a few task times, to a thief that has
//    been idle for at least the mean run time of the node's tasks (and
//    200 µs): it takes the excess, a task at a time, while the node works
//    through the rest (a node holding all the data still gets help);
//  - stall: the node took none of them, and its oldest one has waited, for
//    kLendStallTasks times the mean run time of the node's tasks (at least
//    kLendStallMinNs, at most kLendStallMaxNs): its workers are stuck in
//    long tasks or blocked, so its queue would not move. This also
//    guarantees progress: a loose task never waits forever.
// A node that takes its tasks at the pace they run, with a short queue,
// keeps them. The numbers come from the owner-computes Cholesky in the NUMA
// VM (docs/runtime.md): with 4 per worker and 2 task times (at least
// 200 µs), its share fell to 95% on a loaded host, where a vCPU waits for
// the CPU for several of its task times and a woken one takes ms to run.
// The stall is 16 task times, at least 4 ms, since automatic affinity's
// lk23 (tasks of 0.6 ms in the VM): with 4 task times, at least 1 ms, a
// worker whose (v)CPU the host gave to another thread for a timeslice or
// two (3 ms and more on a loaded host) looked stalled, and the idle workers
// of other nodes (the thread waiting in TaskGraph::run first) took 5-10% of
// its node's placed tasks: 84.7-94.5% of lk23's bytes local on 4 nodes
// (a worker's own queue waits 50 ms: worker_lends). A thread that waits for a
// CPU is not stuck; one stuck in a long task still lends after 16 of them.
inline constexpr std::uint32_t kLendPerWorker = 6;
inline constexpr std::int64_t kLendStallTasks = 16;
inline constexpr std::int64_t kLendStallMinNs = 4'000'000;
inline constexpr std::int64_t kLendStallMaxNs = 1'000'000'000;

// The rule above: `queued` loose tasks for a node of `workers` workers, the
// oldest waiting (or the node's last take) `waited_ns` ago, its tasks taking
// `task_ns` on average (0: none measured yet; the node's NodeLoad,
// affine_queue.hpp, holds these), for a thief idle for `idle_ns`.
constexpr bool node_may_lend(std::uint32_t queued, int workers, std::int64_t waited_ns, std::int64_t task_ns,
                             std::int64_t idle_ns) {
  if (queued == 0) return false;
  if (queued > kLendPerWorker * static_cast<std::uint32_t>(workers > 0 ? workers : 1) && idle_ns >= task_ns)
    return true;
  std::int64_t stall = kLendStallTasks * task_ns;
  stall = stall < kLendStallMinNs ? kLendStallMinNs : stall > kLendStallMaxNs ? kLendStallMaxNs : stall;
  return waited_ns >= stall;
}

// Applies the wrapping rules: worker modulo num_workers, node modulo the
// runtime's nodes, a handle's home node (machine numbering, mapped to the
// runtime's node on it or the closest one; unknown = node 0). A loose node
// hint on a runtime of one node is no target at all (every worker is on
// it): the handle is then not even looked up. Throws canopy::Error for a
// stale or null handle.
Target resolve(RuntimeCore* rt, const Affinity& a);

// Queues t for target (see the top of this file). Callable from any worker
// of rt: a task, Runtime::run, a TaskGroup's thread. Lock-free.
void schedule_targeted(Worker* w, AffineTask* t, Target target);

// A task queued without a target lives in a deque slot that points to it.
inline Group* run_affine_slot(const TaskSlot* s, Worker* w) {
  AffineTask* t = slot_pointer<AffineTask>(s);
  ++w->tasks_run;
  t->run(t, w);
  return nullptr;  // the task accounts for itself
}

inline void schedule(Worker* w, AffineTask* t, Target target) {
  if (target.none()) [[likely]] {
    push_task(w, w->deque.bottom(), &run_affine_slot, nullptr,
              [t](TaskSlot* s) { store_word(s, 2, reinterpret_cast<std::uint64_t>(t)); });
    return;
  }
  schedule_targeted(w, t, target);
}

// The runtime's NUMA node of a worker (0 .. num_numa_nodes-1; an unbound
// outside thread in an extra slot counts as node 0), and the machine's
// logical NUMA node of it (hwloc numbering, what data_home_node returns;
// an extra slot: that of worker 0).
int worker_numa_node(const Worker* w);
int worker_machine_node(const Worker* w);
int num_numa_nodes(const RuntimeCore* rt);
// The runtime's node for a machine node (the node itself when a worker is
// on it, else the closest node that has workers); -1 maps to 0.
int runtime_node_of(const RuntimeCore* rt, int machine_node);

// Locality statistics (WorkerStats::bytes_local / bytes_remote): called by
// the thread that is worker w (a task running on w), plain owner updates.
inline void add_locality(Worker* w, std::uint64_t local, std::uint64_t remote) {
  w->bytes_local.store(w->bytes_local.load(std::memory_order_relaxed) + local, std::memory_order_relaxed);
  w->bytes_remote.store(w->bytes_remote.load(std::memory_order_relaxed) + remote, std::memory_order_relaxed);
}

// ---- TaskGroup::spawn(Affinity, f) ----

// A callable of a task group queued with a hint: counted like a foreign
// spawn (the spawn decremented the group's `remote`, the end increments it,
// whoever runs it), in a block of the spawning worker's pool.
template <class F>
struct AffineFn : AffineTask {
  Group* group;
  F fn;
  template <class G>
  AffineFn(Group* g, G&& f) : group(g), fn(std::forward<G>(f)) {}
};

template <class F>
inline void run_affine_fn_body(AffineTask* self, Worker* w) {
  auto* t = static_cast<AffineFn<F>*>(self);
  Group* g = t->group;
  call_in_group(t->fn, g);
  t->~AffineFn<F>();
  free_block(w, t);
  complete_remote(g);
}

template <class F>
void run_affine_fn(AffineTask* self, Worker* w) {
  if (traces(w)) [[unlikely]] return trace_task<&run_affine_fn_body<F>, F>(self, w);
  run_affine_fn_body<F>(self, w);
}

template <class F>
void spawn_affine(Worker* w, Group* g, Target target, F&& f) {
  using Fn = std::decay_t<F>;
  using T = AffineFn<Fn>;
  void* mem = alloc_block<T>(w);
  T* t;
  try {
    t = ::new (mem) T(g, std::forward<F>(f));
  } catch (...) {
    free_block(w, static_cast<T*>(mem));
    throw;
  }
  t->run = &run_affine_fn<Fn>;
  schedule(w, t, target);
}

}  // namespace canopy::detail
