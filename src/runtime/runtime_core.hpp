// RuntimeCore: everything a canopy::Runtime owns — its worker slots, their
// threads, victim lists, notifier and placement. The public Runtime is a
// handle to one of these; workers point back to it.
//
// Slots: 0 .. N-1 are the N workers of the placement (slot 0 is taken by
// the thread that calls into the runtime, slots 1..N-1 by the runtime's own
// threads); N .. N+kExtraSlots-1 are for further outside threads calling in
// at the same time (unbound; thieves look at them only while one is held).
// Nodes: the NUMA nodes the N workers are on, numbered 0 .. K-1 in the
// machine's order, each with its affinity queues.
#pragma once
#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "canopy/detail/worker.hpp"
#include "canopy/runtime.hpp"
#include "counters/run_counters.hpp"
#include "runtime/domains.hpp"
#include "runtime/notifier.hpp"
#include "runtime/victims.hpp"

namespace canopy::detail {

namespace flow {
struct StreamAffinity;  // src/dataflow/stream_affinity.cpp
}

inline constexpr int kExtraSlots = 8;
// The most workers a runtime accepts (worker indexes are 16-bit in the
// affinity partitioner's record).
inline constexpr int kMaxWorkers = 16384;

// One NUMA node of a runtime: its affinity queues and who may take from
// them (affinity.cpp).
struct alignas(64) NodeQueues {
  AffineQueue strict_queue;  // popped by the node's workers only
  AffineQueue loose_queue;   // by the node's workers, and by idle others
  NodeLoad load;             // its length, age and task time (for idle others)
  // Workers of this node registered to sleep (the notifier keeps it, under
  // its mutex; read by pushers: a targeted wake when > 0).
  alignas(64) std::atomic<int> sleepers{0};
  // ---- written once at start ----
  int machine_node = 0;             // the machine's logical NUMA node
  std::vector<int> workers;         // worker indexes on it
  std::vector<int> steal_order;     // the other nodes, closest first
};

// One domain of the workers (domains.hpp) and the bubbles attached to it
// that have tasks queued (bubbles.cpp).
struct alignas(64) BubbleDomain {
  AffineQueue bubbles;         // BubbleCores (through their AffineTask link)
  std::atomic<int> queued{0};  // how many are in `bubbles`
  // ---- written once at start ----
  Domain shape;
  int subtree_end = 0;  // its subtree is the domains [id, subtree_end)
};

struct RuntimeCore {
  // Out of line (runtime.cpp) and hidden: the public worker.hpp declares
  // RuntimeCore, so its implicit destructor, emitted out of line once the
  // members grew, became an export of libcanopy.so (tests/install checks).
  RuntimeCore() = default;
  __attribute__((visibility("hidden"))) ~RuntimeCore();

  RuntimeOptions options;
  // The machine the workers were placed on, and (made on first use by
  // automatic affinity, under affinity_mutex) that machine restricted to
  // the workers' PUs: what task placements are computed on.
  std::shared_ptr<const Topology> topology;
  std::mutex affinity_mutex;
  std::shared_ptr<const Topology> worker_topology;
  std::vector<int> helpers;  // helper threads per logical PU (helpers.cpp, under affinity_mutex)
  // Automatic affinity of the submit stream (src/dataflow/stream_affinity.cpp):
  // made by the first submission that needs it (the owner under
  // affinity_mutex, then published), freed with the runtime.
  std::atomic<flow::StreamAffinity*> stream{nullptr};
  std::shared_ptr<flow::StreamAffinity> stream_owner;
  std::vector<WorkerPlacement> placement;  // N entries
  int num_workers = 0;                     // N
  int num_slots = 0;                       // N + kExtraSlots
  std::vector<Worker*> slots;
  std::vector<VictimList> victims;         // per slot (extras: everyone, in index order)
  Notifier notifier;
  std::int64_t spin_ns = 50'000;           // how long an idle worker searches before it parks

  std::vector<std::unique_ptr<NodeQueues>> nodes;  // K entries
  // Bubbles (bubbles.cpp): the domains, each slot's domains smallest first,
  // the expected work placed on each worker (under bubble_mutex), bubbles
  // queued on any domain, whole-group steals.
  std::vector<std::unique_ptr<BubbleDomain>> domains;
  std::vector<std::vector<int>> worker_domains;
  std::mutex bubble_mutex;
  std::vector<double> bubble_load;
  alignas(64) std::atomic<int> bubbles_queued{0};
  std::atomic<std::uint64_t> bubbles_taken{0};
  std::vector<int> node_of_machine_node;          // machine node -> runtime node (closest with workers)

  alignas(64) std::atomic<bool> stopping{false};
  // Set (once, seq_cst) before the first task with a target is queued: until
  // then idle workers do not look at any affinity queue (one load per
  // search round; see affinity.cpp for the ordering argument).
  std::atomic<bool> hints_used{false};
  std::atomic<int> extras_held{0};

  std::vector<pthread_t> threads;
  // Each worker's thread id (slot 0: the thread that made the runtime),
  // written before the constructor's latch: who the counters count.
  std::vector<pid_t> worker_tids;
  // The workers' counters (counters/run_counters.hpp): opened once, under
  // counters_mutex, when CANOPY_STATS or a trace session asks; null before.
  std::mutex counters_mutex;
  unsigned counter_sets = counters::kSetAll;  // CANOPY_COUNTERS, read when the runtime is made
  bool workers_known = false;  // worker_tids complete (under counters_mutex)
  std::atomic<counters::RunCounters*> counters{nullptr};
  std::unique_ptr<counters::RunCounters> counters_owner;

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

// NUMA nodes of the workers, their queues, the machine-node map and each
// worker's node (affinity.cpp).
void build_nodes(RuntimeCore* rt, const Topology& topo);

// The scheduler (scheduler.cpp).
void worker_main(Worker* w);
bool any_work_visible(RuntimeCore* rt, Worker* w);

// The affinity queues' side of the scheduler (affinity.cpp). take_affine:
// w's own strict and loose queues, then its node's; steal_loose: the loose
// queues of the other workers (victim order) and of the other nodes
// (closest first), with `remote` false only those of workers of w's own
// node (and of another node only as node_may_lend allows a thief idle for
// idle_ns). Both count the hint as honoured or not; `busy` is set
// when a queue had tasks but another consumer held it. affine_work_visible:
// the sleep re-check's part (seq_cst loads).
AffineTask* take_affine(Worker* w, bool* busy);
AffineTask* steal_loose(Worker* w, bool* busy, bool remote, std::int64_t idle_ns);
bool affine_work_visible(RuntimeCore* rt, Worker* w);

}  // namespace canopy::detail
