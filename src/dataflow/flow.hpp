// Private to src/dataflow/: the records of data-flow dependency tracking.
//
// Per (domain, handle) there is one State: the accesses that may run now
// ("active": one writer, or any number of readers) and a FIFO queue of the
// accesses waiting behind them, in submission order. A task registers each
// of its accesses in its handle's State at submission; an access that
// conflicts with what is active or queued waits in the queue and counts in
// the task's `preds`. When a task finishes it releases its accesses; a
// release that leaves nothing active activates the queue's front group (a
// writer, or a run of readers), and a task whose last queued access is
// activated becomes ready. No pointer to a finished task is ever kept: the
// queue holds only access records of tasks that have not run yet, which is
// why nodes need no reference counts.
//
// Domains: the top level of a runtime (a Flow, States in a chunked array
// indexed by Data::index) and, for a task that submits tasks, its children
// (a Domain owned by that task, States in a small hash table). A domain
// counts 1 (its owner's body, or forever for a Flow) + its unfinished tasks.
//
// Locks: each State has a spin lock. Submission takes the locks of all the
// task's States in handle-index order, registers, and releases them (two-
// phase locking): concurrent submitters are serialized per handle in one
// consistent order, so the dependency graph has no cycle. A release takes
// one State lock at a time.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <thread>

#include "canopy/dataflow.hpp"
#include "canopy/detail/worker.hpp"
#include "runtime/runtime_core.hpp"

namespace canopy::detail::flow {

// A test-and-test-and-set spin lock: held for a few dozen instructions.
// A waiter that spins long is most likely waiting for a holder that was
// preempted (more threads than CPUs): it yields the CPU then, rather than
// spin out its time slice (the uncontended path does not get there).
struct SpinLock {
  std::atomic<std::uint8_t> word{0};
  void lock() {
    while (word.exchange(1, std::memory_order_acquire) != 0) [[unlikely]]
      wait_free();
  }
  void wait_free() {
    for (unsigned k = 0; word.load(std::memory_order_relaxed) != 0; ++k) {
      if (k < kSpins)
        pause();
      else
        std::this_thread::yield();
    }
  }
  static constexpr unsigned kSpins = 256;
  void unlock() { word.store(0, std::memory_order_release); }
  static void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
};

struct Node;
struct Domain;

enum : std::uint8_t { kModeRead = 0, kModeWrite = 1 };  // ReadWrite is kModeWrite for ordering
enum : std::uint8_t { kRecTask = 0, kRecWaiter = 1 };

// One access of a task (or a wait(Data) in the queue). Lives in its node.
struct AccessRec {
  AccessRec* next = nullptr;   // the State's queue
  struct State* state = nullptr;
  DataEntry* entry = nullptr;  // the handle's registry entry (stable)
  std::uint32_t index = 0;     // Data::index
  std::uint16_t slot = 0;      // position in the node's array (finds the node)
  std::uint8_t mode = kModeRead;
  std::uint8_t kind = kRecTask;
  // On a runtime of one NUMA node: the handle's bytes on it, read from the
  // registry entry at submission (when its lines are in cache), so that the
  // release, long after, need not fetch the entry again. Elsewhere unused:
  // the release reads the entry for the node the task ran on.
  std::uint64_t one_node_bytes = 0;
};

// The dependency state of one handle in one domain. 64 bytes: neighbouring
// handles are touched by different workers.
struct alignas(64) State {
  SpinLock lock;
  std::uint8_t active_write = 0; // the active group is a writer
  std::int32_t active = 0;       // activated accesses not released yet
  // The handle generation the totals belong to (top level). Written under
  // the lock; read without it by submit's fast check (a stale read only
  // sends the submission to the checked path, which rereads it locked).
  std::atomic<std::uint32_t> generation{0};
  std::uint32_t poison = 0;      // == its domain's error_epoch: depends on a failed task
  AccessRec* head = nullptr;     // queued, oldest first
  AccessRec* tail = nullptr;
  // The registry entry of handle #index (entries never move, so once set it
  // stays right): submit checks a handle with entry->live == generation
  // instead of a call to data_entry. Set by the first submission (relaxed:
  // every writer stores the same value).
  std::atomic<DataEntry*> entry{nullptr};
  // Locality totals (top-level States only). One writer at a time: a
  // release under the lock, or the one-worker inline path (inline.hpp)
  // without it, which excludes every other writer by other means; read by
  // data_locality under the lock. Atomics (relaxed loads and stores, the
  // code of plain ones) so that a reader never races with the lock-free writer.
  std::atomic<std::uint64_t> local_bytes{0};
  std::atomic<std::uint64_t> remote_bytes{0};
  std::atomic<std::uint64_t> accesses{0};
  // A new handle in this registry slot (the lock held): totals start at 0.
  void reset_totals(std::uint32_t gen) {
    generation.store(gen, std::memory_order_relaxed);
    local_bytes.store(0, std::memory_order_relaxed);
    remote_bytes.store(0, std::memory_order_relaxed);
    accesses.store(0, std::memory_order_relaxed);
  }
  // One access's bytes (the single writer: see above).
  void add_totals(std::uint64_t local, std::uint64_t remote) {
    local_bytes.store(local_bytes.load(std::memory_order_relaxed) + local, std::memory_order_relaxed);
    if (remote) remote_bytes.store(remote_bytes.load(std::memory_order_relaxed) + remote, std::memory_order_relaxed);
    accesses.store(accesses.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
};
static_assert(sizeof(State) == 64);

struct ErrorBox {
  std::exception_ptr error;
};

// A thread in wait_all, parked on a one-task group the last finisher completes.
struct AllWaiter {
  AllWaiter* next = nullptr;
  AllWaiter* prev = nullptr;
  bool linked = false;  // under the domain's wait_lock
  Group group;
};

// A thread in wait(Data): an access record queued like a writer; its
// activation completes the group.
struct DataWaiter {
  AccessRec rec;
  Group group;
};

struct Flow;

// Domain::count: 1 + unfinished tasks, plus kWaiting while a thread in
// wait_all may be parked (set by the waiter, cleared by whoever takes the
// waiter list). The finisher whose decrement takes the count from 2 to 1
// and sees kWaiting wakes the waiters; one that does not see it never
// touches the domain again (a children's domain may be freed at once).
inline constexpr std::int64_t kWaiting = std::int64_t{1} << 62;

struct Domain {
  std::atomic<std::int64_t> count{1};
  // The next submission's Node::seq. Relaxed load and store, not an atomic
  // increment: two threads submitting at once may draw the same number,
  // which only makes their order arbitrary.
  std::atomic<std::uint32_t> next_seq{0};
  std::atomic<ErrorBox*> error{nullptr};
  // Bumped when an error is reported: States poisoned in an older epoch are clean.
  std::atomic<std::uint32_t> error_epoch{1};
  // The newest epoch in which a State of this domain was poisoned (raised
  // with note_poison): while it is older than error_epoch no State is
  // poisoned, and the inline path need not look (inline.hpp).
  std::atomic<std::uint32_t> poison_epoch{0};
  SpinLock wait_lock;
  AllWaiter* waiters = nullptr;  // under wait_lock
  Flow* flow = nullptr;          // the top level it belongs to
  Node* owner = nullptr;         // nullptr: the top level
  std::int8_t size_class = -1;   // of its block (children's domains)

  // ---- children's States (owner != nullptr): open addressing on Data::index ----
  SpinLock table_lock;
  struct Entry {
    std::uint32_t key;  // Data::index + 1 (0 = empty)
    State* state;
  };
  static constexpr std::uint32_t kInline = 4;
  Entry* table = inline_table;
  std::uint32_t capacity = kInline;
  std::uint32_t used = 0;
  Entry inline_table[kInline] = {};
};

// A State of d was poisoned in `epoch` (the State's lock held).
inline void note_poison(Domain* d, std::uint32_t epoch) {
  std::uint32_t cur = d->poison_epoch.load(std::memory_order_relaxed);
  while (cur < epoch && !d->poison_epoch.compare_exchange_weak(cur, epoch, std::memory_order_relaxed)) {
  }
}

// The top level of one runtime.
struct Flow {
  Domain root;
  // 1 while worker 0 of a one-worker runtime runs a top-level task inline,
  // unregistered (inline.hpp). Written by that worker only; the other
  // submitters of a one-worker runtime count themselves in root.count first,
  // then wait while it is 1 (Dekker: both sides seq_cst).
  std::atomic<std::uint8_t> inline_running{0};
  // Only the address: a runtime may be destroyed and another created at the
  // same address, which then inherits this (idle) Flow. So nothing about
  // the runtime's configuration is kept here; see run.cpp.
  RuntimeCore* rt = nullptr;
  // States by Data::index: chunks of kChunk, created on first use.
  static constexpr std::uint32_t kChunkBits = 10;
  static constexpr std::uint32_t kChunk = 1u << kChunkBits;
  static constexpr std::uint32_t kMaxChunks = 1u << 12;  // 4 Mi handles
  std::atomic<State*> chunks[kMaxChunks] = {};
  Flow* next_flow = nullptr;  // the registry
};

// A submitted task: header, `naccess` records, then the callable.
struct Node {
  Node(Domain* d, const FnOps* o, const Affinity& a, std::uint32_t offset, std::int8_t cls)
      : size_class(cls), affinity(a), domain(d), ops(o), fn_offset(offset) {}
  // The node of a body run inline (inline.hpp: one per thread, constant-
  // initialized): only its domain and children matter.
  constexpr Node() = default;
  AffineTask link;  // for detail::schedule and the ready lists (link.next)
  std::atomic<std::int32_t> preds{0};  // queued accesses not yet activated
  std::uint16_t naccess = 0;
  std::int8_t size_class = 0;          // pool class, -1: global heap
  std::atomic<std::uint8_t> poisoned{0};
  std::uint8_t failed = 0;
  std::uint8_t nodes = 1;              // machine nodes locality looks at (set when it runs)
  std::int16_t run_node = -1;          // machine NUMA node of the worker that ran it (-1: did not run)
  Affinity affinity;
  // A task of an automatic-affinity stream: its recurring task's id + 1
  // (stream_affinity.hpp; its `affinity` is then a worker kind, so that
  // make_ready takes its hinted path); 0 otherwise. (In Affinity's padding.)
  std::uint32_t stream_id = 0;
  Domain* domain = nullptr;            // where it was submitted
  Domain* children = nullptr;          // its own, once it submits
  const FnOps* ops = nullptr;
  std::uint32_t fn_offset = 0;
  // Its place in its domain's submission order (Domain::next_seq; wraps):
  // of several tasks one release makes ready, the oldest runs first (finish).
  std::uint32_t seq = 0;
  AccessRec* recs() { return reinterpret_cast<AccessRec*>(this + 1); }
  void* fn() { return reinterpret_cast<char*>(this) + fn_offset; }
};
static_assert(alignof(Node) <= 16 && sizeof(Node) % alignof(AccessRec) == 0);

inline Node* node_of(AccessRec* r) { return reinterpret_cast<Node*>(r - r->slot) - 1; }

// The calling thread's data-flow state, in one thread-local object (one
// address computation on the submission path, not one per variable).
struct ThreadFlow {
  // The data-flow task the thread is running (its body), or nullptr.
  Node* node = nullptr;
  // The deque bottom when the thread's current task body started.
  std::int64_t body_base = 0;
  // The Flow of the runtime last used (flow_of).
  RuntimeCore* cache_rt = nullptr;
  Flow* cache_flow = nullptr;
  // The node that stands for a body run inline (inline.hpp): a thread runs
  // at most one, as the path is taken only outside any data-flow body. Its
  // children pointer is nullptr between bodies.
  Node inline_node;
  // The accesses of the body run inline (set with inline_node; read only by
  // data_free inside that body, which must refuse a handle it lists).
  const Access* inline_acc = nullptr;
  std::size_t inline_count = 0;
  // Flows this thread may have unfinished submissions in, besides the
  // cached one (scope.cpp): the waits without a runtime (wait_all(),
  // wait(Data)) cover them. `body` != nullptr: submitted by that data-flow
  // body (node, seq) to another runtime; its own waits cover those.
  // Entries whose flow is idle without an error are dropped at any time.
  struct Seen {
    Flow* flow;
    Node* body;
    std::uint32_t body_seq;
  };
  static constexpr int kSeen = 16;
  Seen seen[kSeen] = {};
  std::uint8_t nseen = 0;
  // A top-level entry found no room: the next top-level wait covers every flow.
  bool seen_overflow = false;
};
extern constinit thread_local ThreadFlow tls_flow;

// ---- states.cpp / submit.cpp / run.cpp / wait.cpp ----
Flow* flow_of_slow(RuntimeCore* rt);
inline Flow* flow_of(ThreadFlow& t, RuntimeCore* rt) {
  if (t.cache_rt == rt) [[likely]]
    return t.cache_flow;
  return flow_of_slow(rt);
}
inline Flow* flow_of(RuntimeCore* rt) { return flow_of(tls_flow, rt); }
void for_each_flow(void (*fn)(Flow*, void*), void* arg);
// The Flow of rt if one was made (never makes one).
Flow* find_flow(RuntimeCore* rt);

// ---- scope.cpp: what the waits without a runtime and data_free cover ----
// Idle (nothing unfinished) and no exception to report.
inline bool flow_clean(Flow* f) {
  return (f->root.count.load(std::memory_order_acquire) & ~kWaiting) == 1 &&
         f->root.error.load(std::memory_order_acquire) == nullptr;
}
// The calling thread may have unfinished submissions in f (body: by that
// data-flow body, to another runtime than its own). Throws canopy::Error
// when a body has unfinished submissions in too many other runtimes.
void remember_flow(ThreadFlow& t, Flow* f, Node* body);
// Drops the entries whose flow is clean.
void prune_seen(ThreadFlow& t);
// The domain a submission from worker w goes to (creates a child domain).
Domain* current_domain(Worker* w);
// Existing domain for waits (nullptr: a task with no children: nothing to wait for).
Domain* current_domain_if_any(Worker* w);
State* make_root_state(Flow* f, std::uint32_t index);     // creates the chunk (throws beyond the limit)
inline State* root_state(Flow* f, std::uint32_t index) {
  const std::uint32_t c = index >> Flow::kChunkBits;
  State* chunk = c < Flow::kMaxChunks ? f->chunks[c].load(std::memory_order_acquire) : nullptr;
  if (!chunk) [[unlikely]]
    return make_root_state(f, index);
  return chunk + (index & (Flow::kChunk - 1));
}
State* root_state_if_any(Flow* f, std::uint32_t index);   // nullptr if never used
State* child_state(Domain* d, std::uint32_t index, Worker* w);  // creates (under table_lock)
State* child_state_if_any(Domain* d, std::uint32_t index);
void free_child_domain(Domain* d, Worker* w);
Domain* new_child_domain(Node* owner, Worker* w);

// A node whose preds reached zero: queue it (affinity, owner computes, or
// the worker's own deque).
void make_ready(Node* n, Worker* w);
// Runs a ready node here and now (a runtime of one worker: nobody else
// could run it, so it runs at submission, as OpenMP runtimes run the tasks of
// a one-thread team at once).
void run_now(Node* n, Worker* w);
// Runs the ready list (linked by link.next) through make_ready.
void schedule_list(Node* head, Worker* w);
void record_error(Domain* d, std::exception_ptr e) noexcept;
// The body of a task that ran inline (inline.hpp) and submitted children
// has ended (its node registered meanwhile): drops the body's share of the
// children's count and, if it was the last, finishes the task.
void end_inline_parent(Node* n, Worker* w);
// A submission taken back after counting itself in d (bad input): the
// count goes down again, waking threads in wait_all if d became idle.
void uncount(Domain* d);
inline std::int64_t current_body_base() { return tls_flow.body_base; }
bool is_node_slot(const TaskSlot* s);

void* alloc_heap(std::size_t bytes);
void free_heap(void* p);
inline void* alloc_bytes(Worker* w, std::size_t bytes, std::int8_t* size_class) {
  if (bytes <= kBlockBytes[1]) [[likely]] {
    const int cls = bytes <= kBlockBytes[0] ? 0 : 1;
    *size_class = static_cast<std::int8_t>(cls);
    return w->pool.alloc(cls);
  }
  *size_class = -1;
  return alloc_heap(bytes);
}
inline void free_bytes(Worker* w, void* p, std::int8_t size_class) {
  if (size_class >= 0) [[likely]]
    w->pool.free(p, size_class);
  else
    free_heap(p);
}

// Next-touch / next-write: the task's declared accesses claim their
// handles' marks before its body runs (data_touch_claim; run.cpp).
[[gnu::cold, gnu::noinline]] void claim_touch_marks(Node* n) noexcept;

// Machine NUMA nodes whose bytes locality looks at (1 on a one-node machine).
inline int machine_nodes(const RuntimeCore* rt) {
  const std::size_t m = rt->node_of_machine_node.size();
  return m <= 1 ? 1 : static_cast<int>(m < kDataMaxNodes ? m : kDataMaxNodes);
}
// Locality of one access: bytes of the handle on machine node `machine_node`
// vs on the other `nodes` - 1.
void access_locality_slow(int nodes, const DataEntry* e, int machine_node, std::uint64_t* local,
                          std::uint64_t* remote);
inline void access_locality(int nodes, const DataEntry* e, int machine_node, std::uint64_t* local,
                            std::uint64_t* remote) {
  if (nodes == 1) [[likely]] {
    *local = e->node_bytes[0].load(std::memory_order_relaxed);
    *remote = 0;
    return;
  }
  access_locality_slow(nodes, e, machine_node, local, remote);
}

}  // namespace canopy::detail::flow
