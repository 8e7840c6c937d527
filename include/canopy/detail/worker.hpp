// A worker: one OS thread's scheduling state (its deque, its task pool, its
// mailbox and sleep word), and the group record fork-join waits on. Only
// what the inline fast paths of spawn/wait need lives here; the scheduler
// (stealing, parking, victims) is in src/runtime/.
//
// Who writes what (each group of fields on its own cache lines):
//  - the owner thread: the deque's bottom and slots, the pool's free lists,
//    the statistics (relaxed atomics so that stats() may read them live);
//  - thieves: the deque's top (CAS), the pool's remote-free lists;
//  - other workers: the mailbox (affinity proxies), the sleep fields
//    (epoch, parked), which the notifier owns, and the affinity queues
//    (pushed by anyone; popped by the owner, the loose one also by thieves).
// A worker slot is owned by one thread at a time: a worker thread for its
// whole life, or an external thread that entered the runtime (the claim of
// the slot is an acquire CAS and its release a release store, so one
// holder's writes happen before the next holder's reads).
#pragma once
#include <atomic>
#include <cstdint>
#include <exception>

#include "canopy/detail/affine_queue.hpp"
#include "canopy/detail/deque.hpp"
#include "canopy/detail/task.hpp"

namespace canopy::detail {

struct RuntimeCore;  // src/runtime/runtime_core.hpp
struct ProxyHeader;  // canopy/detail/spawn.hpp
struct TraceRing;    // canopy/detail/trace.hpp

// Steal statistics by distance class of the victim.
enum StealClass { kStealSameCore = 0, kStealSameNuma = 1, kStealRemote = 2 };

struct alignas(64) Worker {
  Deque deque;
  TaskPool pool;

  // ---- written once at construction ----
  RuntimeCore* rt = nullptr;
  int index = 0;
  // The runtime's NUMA node of this worker (0 .. nodes-1), and the machine's
  // logical NUMA node it is on; -1 for extra slots (unbound outside threads).
  int numa_node = -1;
  int machine_node = -1;
  // Count of this node's workers registered to sleep (the notifier keeps it),
  // for targeted wake-ups of a node; nullptr for extra slots.
  std::atomic<int>* node_sleepers = nullptr;
  // The ring events go to while a trace session records (set and cleared by
  // the session, src/trace; loaded at each event site), else nullptr.
  std::atomic<TraceRing*> trace{nullptr};

  // ---- owner thread only ----
  std::uint64_t rng = 0;
  ProxyHeader* mail_pending = nullptr;  // taken from the mailbox, not yet run
  // Plain, not atomic: one `add` per task. Read by Runtime::stats(), which
  // is exact when no task runs (each task's increment happens before the
  // completion its waiter observes).
  std::uint64_t tasks_run = 0;
  std::atomic<std::uint64_t> steals[3] = {0, 0, 0};
  std::atomic<std::uint64_t> failed_steal_rounds{0};
  std::atomic<std::uint64_t> parked_ns{0};
  std::atomic<std::uint64_t> parks{0};
  // Affinity: hinted tasks run where their hint asked (taken from this
  // worker's or its node's queues) or elsewhere (a loose one taken from
  // another's queue); bytes that tasks here accessed on this worker's NUMA
  // node or on another (add_locality).
  std::atomic<std::uint64_t> hinted_here{0};
  std::atomic<std::uint64_t> hinted_away{0};
  std::atomic<std::uint64_t> bytes_local{0};
  std::atomic<std::uint64_t> bytes_remote{0};

  // ---- written by the notifier, rarely; read by the owner after each push ----
  // Non-zero while some worker of the runtime is registered to sleep (or
  // when pushes must fence): the pusher then calls notify_after_push. A copy
  // per worker, so that the check is one load of a line nobody else writes
  // on the fast path.
  alignas(64) std::atomic<std::uint32_t> sleepers{0};

  // ---- written by other workers ----
  // Affinity proxies mailed to this worker (a lock-free stack).
  alignas(64) std::atomic<Task*> mailbox{nullptr};
  // Sleep: the futex word a parked worker waits on (bumped to wake it), and
  // 1 while registered with the notifier. `wait_pos` is guarded by the
  // notifier's mutex.
  alignas(64) std::atomic<std::uint32_t> epoch{0};
  std::atomic<std::uint32_t> parked{0};
  int wait_pos = -1;
  // External slots: 1 while a thread holds this slot.
  alignas(64) std::atomic<std::uint32_t> held{0};

  // ---- affinity queues: pushed to by any worker (affine_queue.hpp) ----
  AffineQueue strict_queue;  // popped by this worker only
  AffineQueue loose_queue;   // popped by this worker, and by idle others
  // Loose tasks queued for this worker, and since when its loose queue has
  // not moved (monotonic ns), kept as a node's NodeLoad is: a worker of
  // another node takes from this queue only as node_may_lend allows
  // (affinity.cpp). Relaxed: a heuristic.
  std::atomic<std::uint32_t> loose_queued{0};
  std::atomic<std::int64_t> loose_since{0};
};

// The worker the calling thread is, or nullptr outside every runtime.
extern constinit thread_local Worker* tls_worker;

// What a task group waits on. Lives in the TaskGroup (on the stack of the
// thread that waits). The owner is the worker that created the group; the
// tasks it spawns go to its deque, above `base`.
//
// Counting without atomics on the fast path: `pending` (owner only) is
// incremented when the owner spawns and decremented when the owner itself
// runs one of its group's tasks; `remote` (atomic) is incremented when any
// other worker finishes a task the owner spawned (a stolen one), and, for a
// spawn by another thread (a task of the group spawning siblings, "foreign"),
// decremented at the spawn and incremented when that task ends, whoever
// runs it. The group is complete when pending == remote. A thief reads
// `owner` before its increment, because once the increment is visible the
// group may be gone.
struct ErrorBox {
  std::exception_ptr error;
};

// The owner's fields have no initializer: each user sets what it uses
// (TaskGroup all of them; invoke owner_shared and pending before the push,
// owner and base only when f1 was not taken back). `remote` and `error`
// start at zero.
struct Group {
  // ---- written by the owner (on every spawn) ----
  Worker* owner;  // the owner's copy, for its own checks
  std::int64_t base;
  std::int64_t pending;
  // What other workers touch is kept 64 bytes away from `pending`, so on
  // another cache line whatever the group's alignment: a thief's
  // completion must not bounce the line the owner writes on every spawn.
  char pad_[64 - sizeof(std::int64_t)];
  // ---- read and written by other workers (16-aligned: these two words
  // never straddle two cache lines, a completing thief touches one) ----
  alignas(16) Worker* owner_shared;  // the same owner, for thieves
  std::atomic<std::int64_t> remote{0};
  // The first exception a task threw (set once, by CAS).
  std::atomic<ErrorBox*> error{nullptr};

  // Before any task of the group is queued.
  void init(Worker* w, std::int64_t base_index) {
    owner_shared = w;
    init_owner_side(w, base_index, 0);
  }
  // The owner's fields only (thieves may be reading owner_shared).
  void init_owner_side(Worker* w, std::int64_t base_index, std::int64_t pending_tasks) {
    owner = w;
    base = base_index;
    pending = pending_tasks;
  }
  bool complete() const { return pending == remote.load(std::memory_order_acquire); }
};

// ---- out of line (src/runtime) ----
void complete_remote(Group* g);                 // a task of g ended on a worker other than its owner
void notify_after_push(Worker* w);              // some worker may be asleep: maybe wake one
void wait_slow(Worker* w, Group* g);            // help and park until g is complete
void record_exception(Group* g) noexcept;       // inside a catch: keep the first exception of g
[[noreturn]] void rethrow_group_error(Group* g);  // hand g's exception to the waiter and reset it
void drop_group_error(Group* g) noexcept;       // forget it (a group destroyed without wait())
void post_to_mailbox(Worker* target, Task* t);  // affinity proxies
// invoke (invoke.hpp): after a pop that did not return f1's slot, runs the
// foreign tasks above it and takes f1's back unless stolen (true); and the
// same when f2 threw, waiting for a stolen f1.
bool take_back_slow(Worker* w, const TaskSlot* popped, const Group* mine, std::int64_t base);
void invoke_unwind(Worker* w, Group* g, std::int64_t base) noexcept;

// Pushes a task on w's deque: `fill(slot)` writes its words 2.. (the
// callable or a pointer). Then, if some worker may sleep, maybe wake one
// (after the push: see notifier.hpp).
template <class Fill>
inline void push_task(Worker* w, std::int64_t b, SlotRun run, Group* g, Fill&& fill) {
  TaskSlot* s = w->deque.reserve(b);
  store_word(s, 0, reinterpret_cast<std::uint64_t>(run));
  store_word(s, 1, reinterpret_cast<std::uint64_t>(g));
  fill(s);
  w->deque.publish(b);
  if (w->sleepers.load(std::memory_order_relaxed) != 0) [[unlikely]] notify_after_push(w);
}

// Counts a task its group's owner spawned, which just ended on worker w.
inline void count_done(Group* g, Worker* w) {
  if (g->owner_shared == w) [[likely]]
    --g->pending;
  else
    complete_remote(g);
}

// Runs a task from a deque slot (or a copy of one), and counts it.
inline void execute(Worker* w, const TaskSlot* s) {
  if (Group* g = slot_run(s)(s, w)) count_done(g, w);
}
// The same for a task that is not in a slot (mail).
inline void execute(Worker* w, Task* t) {
  if (Group* g = t->run(t, w)) count_done(g, w);
}

}  // namespace canopy::detail
