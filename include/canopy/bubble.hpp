// Bubbles: groups of tasks that belong together (they share data or
// synchronise a lot), kept inside one subtree of the machine — a core, an
// L3, a NUMA node, a package — as ForestGOMP's bubbles were. Groups nest;
// the groups of one level are spread over the subtrees of their parent's
// by their expected work, before any stealing; an idle subtree takes whole
// groups from another (the group moves, with the tasks it has queued and
// those it will get), never single tasks of a group.
//
//   rt.run([&] {
//     Bubble all(rt);                                  // the whole runtime
//     std::vector<Bubble> zones = all.split({{.work = 40}, {.work = 10}, {.work = 10}});
//     for (Bubble& z : zones) z.spawn([&] { ... });     // runs in z's subtree
//     for (Bubble& z : zones) z.wait();
//   });
//
// A bubble whose subtree is the whole runtime (a top-level bubble, or a
// child that needs every worker) spawns exactly as a TaskGroup does, at the
// same cost; the others queue their tasks on the bubble, and the bubble on
// its subtree (docs/groups-memory.md).
#pragma once
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "canopy/data.hpp"
#include "canopy/detail/affine.hpp"
#include "canopy/runtime.hpp"

namespace canopy {

struct BubbleOptions {
  // Expected work of the group, in any unit: only its ratio to its siblings'
  // counts. 0 = unknown (counted as the mean of its known siblings).
  double work = 0;
  // Data the group works on: when split() places a level where a group has
  // some, the memory scheduler moves the group to the node holding most of
  // its bytes (among the places its level got by expected work) and
  // migrates a handle still elsewhere when that costs less than reading it
  // remotely (docs/groups-memory.md, "The memory scheduler").
  std::vector<Data> data;
  // How many times the group's tasks go over its attached bytes in this
  // phase (the model weighs remote reads by it); 0 = once.
  double passes = 0;
};

// What the memory scheduler did since the process started (CANOPY_STATS
// prints it). Bytes count the touched pages of attached handles, once per
// group they are attached to, at each phase (each split with data).
struct MemorySchedulerStats {
  std::uint64_t phases = 0;             // splits that had attached data, on a runtime of several NUMA nodes
  std::uint64_t groups = 0;             // groups those levels had
  std::uint64_t groups_moved = 0;       // placed elsewhere than expected work alone put them (moved to their data)
  std::uint64_t handles_migrated = 0;   // handles it migrated
  std::uint64_t bytes_attached = 0;
  std::uint64_t bytes_local_before = 0; // on the nodes of the place expected work alone gave each group
  std::uint64_t bytes_local_after = 0;  // on the nodes of its final place, after the migrations
  std::uint64_t bytes_migrated = 0;     // by the memory scheduler (also in data_stats())
  std::uint64_t pages_migrated = 0;
  std::uint64_t pages_not_moved = 0;    // pages it asked to move that the kernel left where they were
  // The measured model (once the first phase measured it on this machine).
  bool model_measured = false;
  double migrate_fixed_ns = 0, migrate_ns_per_byte = 0, read_ns_per_byte = 0;
};
MemorySchedulerStats memory_scheduler_stats();

namespace detail {
struct BubbleCore;
void bubble_queue_task(BubbleCore* b, AffineTask* t);
}  // namespace detail
class Bubble;
namespace detail {
// Test seam: attaches b (before it spawned anything) to the domain whose
// workers are exactly `workers`; canopy::Error when there is none.
void bubble_attach_for_testing(Bubble& b, const std::vector<int>& workers);
}  // namespace detail

class Bubble {
 public:
  // A top-level group on the whole runtime: call it on a thread running in
  // `rt` (inside Runtime::run or one of its tasks), else canopy::Error.
  explicit Bubble(Runtime& rt, BubbleOptions options = {});
  Bubble(Bubble&&) noexcept;
  Bubble& operator=(Bubble&&) noexcept;
  Bubble(const Bubble&) = delete;
  Bubble& operator=(const Bubble&) = delete;
  // Waits for the group's tasks (as TaskGroup does; an exception a task
  // threw is then dropped: call wait() to see it).
  ~Bubble();

  // The groups of the next level, placed together inside this one's
  // subtree: each in the smallest subtree that holds its share of the
  // workers (share = workers x work / the level's total work), the largest
  // first on the least loaded candidate (docs/groups-memory.md). Call it on
  // the thread that made this bubble.
  std::vector<Bubble> split(const std::vector<BubbleOptions>& children);

  // Spawns f in the group: it runs on a worker of the group's subtree
  // (unless the group is taken whole by another subtree). From the thread
  // that made the bubble, or from a task of the same runtime.
  template <class F>
  void spawn(F&& f);
  // Waits for every task of the group (the thread that made it only),
  // helping with work meanwhile; rethrows the first exception a task threw.
  void wait();

  // Where the group is now: the workers of its subtree (ascending indexes).
  std::vector<int> workers() const;
  // How many times an idle subtree took the group whole.
  std::uint64_t times_taken() const;
  const BubbleOptions& options() const;

 private:
  friend void detail::bubble_attach_for_testing(Bubble& b, const std::vector<int>& workers);
  Bubble() = default;
  std::unique_ptr<detail::BubbleCore> core_;
  detail::Group* group_ = nullptr;  // inside core_ (the spawn's fast path reads it here)
  bool queued_ = false;             // its tasks go to its queue (not the whole runtime)
};

template <class F>
void Bubble::spawn(F&& f) {
  static_assert(std::is_invocable_v<std::decay_t<F>&>, "Bubble::spawn needs a callable with no arguments");
  detail::Worker* w = detail::tls_worker;
  if (!queued_) [[likely]] {
    // The whole runtime: exactly TaskGroup::spawn.
    if (w == group_->owner) [[likely]] {
      detail::spawn_task<false>(w, group_, std::forward<F>(f));
      ++group_->pending;
      return;
    }
    if (!w || w->rt != group_->owner_shared->rt) detail::throw_wrong_thread("Bubble::spawn");
    group_->remote.fetch_sub(1, std::memory_order_relaxed);
    try {
      detail::spawn_task<true>(w, group_, std::forward<F>(f));
    } catch (...) {
      group_->remote.fetch_add(1, std::memory_order_relaxed);
      throw;
    }
    return;
  }
  if (!w || w->rt != group_->owner_shared->rt) detail::throw_wrong_thread("Bubble::spawn");
  using Fn = std::decay_t<F>;
  using T = detail::AffineFn<Fn>;
  // Counted like a foreign spawn (whoever runs it counts it), before it is
  // queued: it may end at once.
  group_->remote.fetch_sub(1, std::memory_order_relaxed);
  void* mem = detail::alloc_block<T>(w);
  T* t;
  try {
    t = ::new (mem) T(group_, std::forward<F>(f));
  } catch (...) {
    detail::free_block(w, static_cast<T*>(mem));
    group_->remote.fetch_add(1, std::memory_order_relaxed);
    throw;
  }
  t->run = &detail::run_affine_fn<Fn>;
  detail::bubble_queue_task(core_.get(), t);
}

}  // namespace canopy
