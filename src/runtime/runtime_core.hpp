// RuntimeCore: everything a canopy::Runtime owns — its worker slots, their
// threads, victim lists, notifier and placement. The public Runtime is a
// handle to one of these; workers point back to it.
//
// Slots: 0 .. N-1 are the N workers of the placement (slot 0 is taken by
// the thread that calls into the runtime, slots 1..N-1 by the runtime's own
// threads); N .. N+kExtraSlots-1 are for further outside threads calling in
// at the same time (unbound; thieves look at them only while one is held).
#pragma once
#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "canopy/detail/worker.hpp"
#include "canopy/runtime.hpp"
#include "runtime/notifier.hpp"
#include "runtime/victims.hpp"

namespace canopy::detail {

inline constexpr int kExtraSlots = 8;
// The most workers a runtime accepts (worker indexes are 16-bit in the
// affinity partitioner's record).
inline constexpr int kMaxWorkers = 16384;

struct RuntimeCore {
  RuntimeOptions options;
  std::vector<WorkerPlacement> placement;  // N entries
  int num_workers = 0;                     // N
  int num_slots = 0;                       // N + kExtraSlots
  std::vector<Worker*> slots;
  std::vector<VictimList> victims;         // per slot (extras: everyone, in index order)
  Notifier notifier;
  std::int64_t spin_ns = 50'000;           // how long an idle worker searches before it parks

  alignas(64) std::atomic<bool> stopping{false};
  std::atomic<int> extras_held{0};

  std::vector<pthread_t> threads;

  // The thread bound as worker 0 (bound once, restored when the runtime
  // ends on that thread); the CPUs are only touched by that thread.
  std::atomic<pid_t> slot0_tid{0};
  std::vector<int> slot0_saved_cpus;

  // Outside threads waiting for a free slot.
  std::mutex slot_mutex;
  std::condition_variable slot_cv;
};

// Where the N workers go (worker_placement.cpp): compact (one per core in
// core order, then the second PU of each core, ...) or a placement policy.
std::vector<WorkerPlacement> place_workers(const Topology& topo, const RuntimeOptions& options);

// The scheduler (scheduler.cpp).
void worker_main(Worker* w);
bool any_work_visible(RuntimeCore* rt, Worker* w);

}  // namespace canopy::detail
