// The notifier: how idle workers sleep and how they are woken, with the
// prepare-wait / cancel-wait / commit-wait protocol (as in Eigen's
// EventCount and Taskflow's notifier), and no lost wake-ups.
//
//   sleeper:  prepare_wait()      register; heavy barrier
//             re-check for work   (deques, mailbox, its group, stop flag)
//             found: cancel_wait()   else: commit_wait()  (futex on its epoch)
//   pusher:   push task; if its worker's `sleepers` flag != 0:
//             notify_after_push -> notify_one()
//
// The pusher's check is one plain load of its own worker's copy of "some
// worker is registered to sleep" (the notifier sets every copy when the
// first worker registers and clears them when the last one leaves, under its
// mutex); no fence: pushing is the hot path.
// The Dekker pair "pusher: store bottom, load hint / sleeper: store hint,
// load bottom" still needs a full barrier on both sides; the sleeper's side
// pays for both with membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED), which
// runs a full barrier on every CPU running a thread of this process (the
// asymmetric fence of liburcu and folly). So either the pusher's load of
// the hint sees the registration (and it wakes someone), or the sleeper's
// re-check sees the task (and it does not sleep). Where membarrier is not
// available the flags stay set and the count keeps kFenceMode: pushers
// always take the slow path, which fences.
//
// A pusher does not wake anyone while some worker is searching (spinning on
// the deques): that searcher will find the task, or, when it gives up, its
// own prepare_wait/re-check will. A searcher that finds work while it was
// the last one wakes a sleeper, so parallelism ramps up one worker per
// steal (Tokio's scheduler does the same).
//
// Targeted wake-ups (a group's last stolen task, mail, a task queued for
// one worker or one NUMA node by an affinity hint): the poster's RMW then
// load of the target's `parked` word (or of its node's count of sleepers,
// which registration keeps) against the sleeper's registration then
// re-check, all seq_cst.
//
// Waking a worker bumps its epoch (the futex word): a worker woken between
// prepare and commit sees the new epoch and does not sleep. Registration
// (the waiter list) is under a mutex: parking is the slow path.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "canopy/detail/worker.hpp"

namespace canopy::detail {

class Notifier {
 public:
  static constexpr std::uint32_t kFenceMode = 1u << 31;
  static constexpr std::uint32_t kCountMask = kFenceMode - 1;

  Notifier();
  const std::atomic<std::uint32_t>* hint() const { return &hint_; }
  std::atomic<int>& searching() { return searching_; }

  // Returns the epoch to pass to commit_wait.
  std::uint32_t prepare_wait(Worker* w);
  void cancel_wait(Worker* w);
  // Sleeps until w's epoch differs from `epoch`, then unregisters.
  void commit_wait(Worker* w, std::uint32_t epoch);
  // Wakes one registered worker (the closest to `near` by the given
  // distance function when there are several); false when none.
  bool notify_one(const Worker* near = nullptr);
  void notify_all();
  // Wakes w if it is registered (a group it waits on completed, or mail).
  void wake(Worker* w);
  // Wakes one registered worker of the runtime's NUMA node `node` (a task
  // was queued for the node); false when none is registered. Registered
  // workers are counted per node in *Worker::node_sleepers.
  bool wake_one_on_node(int node);
  int num_waiters() const { return static_cast<int>(hint_.load(std::memory_order_relaxed) & kCountMask); }

  // The workers whose `sleepers` flags to keep, and the distances between
  // them for notify_one's choice (set once at start, before any wait).
  void set_workers(std::vector<Worker*> workers, std::vector<std::vector<std::uint8_t>> distance);

 private:
  void remove_locked(Worker* w);
  void set_flags_locked(std::uint32_t value);
  void heavy_barrier() const;

  alignas(64) std::atomic<std::uint32_t> hint_{0};  // read on every push
  alignas(64) std::atomic<int> searching_{0};
  alignas(64) std::mutex mutex_;
  std::vector<Worker*> waiters_;
  std::vector<Worker*> workers_;
  std::vector<std::vector<std::uint8_t>> distance_;
  bool fence_mode_ = false;
};

// Whether membarrier's expedited private command is usable (registered once
// per process); false under valgrind-like environments without it.
bool heavy_barrier_available();

// Tests: runtimes created while this is set use the fallback without
// membarrier (pushers fence), as on kernels that lack it.
extern std::atomic<bool> force_fence_mode;

// A full fence for the fallback without membarrier. ThreadSanitizer does not
// model fences (and warns about them): there, a seq_cst read-modify-write of
// a dummy word stands in, which TSan does order. Only the fallback path uses
// it, and TSan's verdict on data races does not depend on it.
void full_fence() noexcept;

}  // namespace canopy::detail
