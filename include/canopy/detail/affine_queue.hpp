// The queues of tasks with an affinity hint (canopy/affinity.hpp): one
// strict and one loose queue per worker and per NUMA node of a runtime
// (src/runtime/affinity.cpp says who consumes which). A task in them is an
// AffineTask: intrusive (the queue links it through `next`), its memory
// owned by whoever made it.
//
// NodeLoad (at the end): a node's loose-queue length, age and task time.
//
// AffineQueue: producers are any threads, consumers one or several workers.
//  - push: a Treiber stack `inbox` (one CAS; lock-free). No ABA: nobody
//    pops single tasks from the stack, consumers take it whole (exchange).
//  - pop: under a consumer try-lock, the consumer takes from `ready` (a FIFO
//    list only lock holders touch), refilled by taking `inbox` whole and
//    reversing it (so tasks come out in the order they were queued, batch by
//    batch). A consumer that finds the lock taken does not wait: it reports
//    `busy` and looks elsewhere (the holder is about to run a task; the
//    scheduler comes back). Producers never wait for consumers.
//  - looks_nonempty (the sleep re-check): inbox, ready, or the lock held.
//    The lock counts: while a holder moves a batch from inbox to ready,
//    both may read empty; a sleeper must then not conclude "no work".
// Memory orders: push is a seq_cst CAS, looks_nonempty seq_cst loads, so a
// pusher that then loads a sleeper's flag and a sleeper that set its flag
// and then re-checks form a Dekker pair (store-load, both seq_cst): one of
// them sees the other. The inbox exchange reads the last push, whose CAS
// continues the release sequence of every earlier push: the consumer sees
// the tasks' fields and `next` links. `ready` and the `next` links in it are
// written only under the lock (taking it is an acquire, giving it back a
// release; where a batch moves everything is seq_cst, see refill_and_pop),
// so lock holders see each other's writes; `ready` is an atomic only for
// the lock-free peek.
#pragma once
#include <time.h>

#include <atomic>
#include <cstdint>

namespace canopy::detail {

struct Worker;

// A task that is not in a deque slot. run(self, w) runs it on worker w and
// is then done with `self` (it frees its memory if it owns it); it must not
// throw. The runtime counts it in WorkerStats::tasks_run.
struct AffineTask {
  AffineTask* next = nullptr;
  void (*run)(AffineTask* self, Worker* w) = nullptr;
};

class AffineQueue {
 public:
  // Any thread.
  void push(AffineTask* t) {
    AffineTask* head = inbox_.load(std::memory_order_relaxed);
    do {
      t->next = head;
    } while (!inbox_.compare_exchange_weak(head, t, std::memory_order_seq_cst, std::memory_order_relaxed));
  }

  // Cheap test before trying to pop (relaxed: a hint).
  bool maybe_nonempty() const {
    return inbox_.load(std::memory_order_relaxed) != nullptr || ready_.load(std::memory_order_relaxed) != nullptr;
  }
  // For the sleep re-check (see above): conservative while a consumer works.
  bool looks_nonempty() const {
    return inbox_.load(std::memory_order_seq_cst) != nullptr || ready_.load(std::memory_order_seq_cst) != nullptr ||
           lock_.load(std::memory_order_seq_cst) != 0;
  }

  // Any consumer: the oldest task, or nullptr (empty, or another consumer
  // holds the lock: then *busy is set).
  AffineTask* pop(bool* busy) {
    if (!maybe_nonempty()) return nullptr;
    if (lock_.load(std::memory_order_relaxed) != 0 || lock_.exchange(1, std::memory_order_seq_cst) != 0) {
      *busy = true;
      return nullptr;
    }
    AffineTask* t = ready_.load(std::memory_order_relaxed);
    if (t) [[likely]] {
      ready_.store(t->next, std::memory_order_relaxed);
      lock_.store(0, std::memory_order_release);
      return t;
    }
    return refill_and_pop();
  }

 private:
  // `ready` is empty: take the whole inbox. seq_cst from the exchange to the
  // unlock, so that a seq_cst peek that read the emptied inbox then sees
  // either the new `ready` or the lock still held.
  AffineTask* refill_and_pop() {
    AffineTask* list = inbox_.exchange(nullptr, std::memory_order_seq_cst);
    // Newest first: reverse into queue order.
    AffineTask* prev = nullptr;
    while (list) {
      AffineTask* n = list->next;
      list->next = prev;
      prev = list;
      list = n;
    }
    if (prev) ready_.store(prev->next, std::memory_order_seq_cst);
    lock_.store(0, std::memory_order_seq_cst);
    return prev;
  }

  alignas(64) std::atomic<AffineTask*> inbox_{nullptr};  // written by producers
  alignas(64) std::atomic<AffineTask*> ready_{nullptr};  // lock holders only
  std::atomic<std::uint32_t> lock_{0};
};

// What a node's loose queue needs for node_may_lend (affine.hpp): one per
// runtime node, in its NodeQueues, kept by affinity.cpp and scheduler.cpp;
// all relaxed: a heuristic, where a stale value only delays or hastens one
// decision. `queued` is raised before the push and lowered after the take
// (which the push happens before), so it never wraps below 0.
struct NodeLoad {
  // Loose tasks queued for the node: +1 by a pusher, -1 by whoever takes one.
  alignas(64) std::atomic<std::uint32_t> queued{0};
  // Since when the queue has not moved (monotonic ns): stamped by a push
  // onto an empty queue and by every take.
  std::atomic<std::int64_t> since{0};
  // Mean run time of the hinted tasks the node's workers ran (about the
  // last 8; written by those workers, a lost racing update is harmless).
  alignas(64) std::atomic<std::int64_t> task_ns{0};
};

// CLOCK_MONOTONIC in ns (the scheduler's clock, and the rule's).
inline std::int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace canopy::detail
