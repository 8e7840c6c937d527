// TaskGraph (include/canopy/taskgraph.hpp): recording finds each task's
// predecessors from the per-handle history (the last writer, the readers
// since), once; a run counts each task's unfinished predecessors down and
// runs a task when its count reaches zero.
//
// Running: the tasks without predecessors are spawned into one TaskGroup;
// a task that finishes decrements its successors' counts, runs the first
// one it made ready itself, next, on the same worker (a chain stays in
// cache: the data it just wrote is the next task's input), and spawns the
// others on its deque, where idle workers steal them. A hinted task is
// always spawned with its hint. Cancellation: a failed or cancelled task
// marks its successors cancelled before its decrement, which publishes the
// mark to whoever takes the count to zero.
#include "canopy/taskgraph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "canopy/error.hpp"

namespace canopy {

namespace {

constexpr std::uint32_t kNone = ~std::uint32_t{0};
constexpr std::size_t kChunkBytes = 64 * 1024;

struct Task {
  void* fn;
  void (*invoke)(void*);
  void (*destroy)(void*);
  Affinity affinity;
  std::uint32_t npreds = 0;
};

// What recording knows about one handle.
struct History {
  std::uint32_t generation = 0;
  std::uint32_t last_writer = kNone;
  std::vector<std::uint32_t> readers;  // since the last writer
};

}  // namespace

struct TaskGraph::Impl {
  std::vector<Task> tasks;
  // Successors while recording (a task gains successors after it is added),
  // flattened into succ_begin / succ before a run.
  std::vector<std::vector<std::uint32_t>> successors;
  std::vector<std::uint32_t> succ_begin;  // tasks + 1
  std::vector<std::uint32_t> succ;
  std::vector<std::uint32_t> roots;
  bool flat = true;
  std::size_t nedges = 0;
  std::unordered_map<std::uint32_t, History> history;  // by Data::index

  // Per run.
  std::unique_ptr<std::atomic<std::uint32_t>[]> pending;
  std::unique_ptr<std::atomic<std::uint8_t>[]> cancelled;
  std::size_t counters = 0;  // size of pending / cancelled
  std::atomic<bool> running{false};
  std::mutex error_lock;
  std::exception_ptr error;

  // Callables: bump-allocated in chunks that never move.
  std::vector<std::unique_ptr<std::byte[]>> chunks;
  std::size_t used = kChunkBytes;  // of the last chunk
  std::vector<std::unique_ptr<std::byte[]>> big;  // callables of more than a quarter chunk

  ~Impl() {
    for (Task& t : tasks)
      if (t.destroy) t.destroy(t.fn);
  }

  void flatten() {
    if (flat) return;
    const std::size_t n = tasks.size();
    succ_begin.assign(n + 1, 0);
    succ.clear();
    succ.reserve(nedges);
    roots.clear();
    for (std::size_t i = 0; i < n; ++i) {
      succ_begin[i] = static_cast<std::uint32_t>(succ.size());
      succ.insert(succ.end(), successors[i].begin(), successors[i].end());
      if (tasks[i].npreds == 0) roots.push_back(static_cast<std::uint32_t>(i));
    }
    succ_begin[n] = static_cast<std::uint32_t>(succ.size());
    if (counters < n) {
      pending.reset(new std::atomic<std::uint32_t>[n]);
      cancelled.reset(new std::atomic<std::uint8_t>[n]);
      counters = n;
    }
    flat = true;
  }

  void note_error(std::exception_ptr e) {
    std::lock_guard<std::mutex> g(error_lock);
    if (!error) error = std::move(e);
  }
};

namespace {

using Impl = TaskGraph::Impl;

void spawn_task(Impl* g, TaskGroup* group, std::uint32_t i);

// Runs task i, then the chain of first successors it makes ready.
void execute(Impl* g, TaskGroup* group, std::uint32_t i) {
  for (;;) {
    const Task& t = g->tasks[i];
    bool failed = g->cancelled[i].load(std::memory_order_relaxed) != 0;
    if (!failed) {
      try {
        t.invoke(t.fn);
      } catch (...) {
        g->note_error(std::current_exception());
        failed = true;
      }
    }
    std::uint32_t next = kNone;
    const std::uint32_t end = g->succ_begin[i + 1];
    for (std::uint32_t k = g->succ_begin[i]; k < end; ++k) {
      const std::uint32_t s = g->succ[k];
      if (failed) g->cancelled[s].store(1, std::memory_order_relaxed);
      if (g->pending[s].fetch_sub(1, std::memory_order_acq_rel) == 1) {
        if (next == kNone && g->tasks[s].affinity.kind == Affinity::Kind::None)
          next = s;
        else
          spawn_task(g, group, s);
      }
    }
    if (next == kNone) return;
    i = next;
  }
}

void spawn_task(Impl* g, TaskGroup* group, std::uint32_t i) {
  // Three words: stored in the deque slot itself, no allocation.
  auto body = [g, group, i] { execute(g, group, i); };
  const Affinity& a = g->tasks[i].affinity;
  if (a.kind == Affinity::Kind::None)
    group->spawn(body);
  else
    group->spawn(a, body);
}

[[noreturn]] void bad_access(std::size_t i, std::size_t n, const std::string& why) {
  throw Error(fmt::format("TaskGraph::add: access {} of {}: {}", i, n, why));
}

}  // namespace

TaskGraph::TaskGraph() : impl_(std::make_unique<Impl>()) {}
TaskGraph::~TaskGraph() = default;
TaskGraph::TaskGraph(TaskGraph&&) noexcept = default;
TaskGraph& TaskGraph::operator=(TaskGraph&&) noexcept = default;

std::size_t TaskGraph::size() const noexcept { return impl_ ? impl_->tasks.size() : 0; }
std::size_t TaskGraph::edges() const noexcept { return impl_ ? impl_->nedges : 0; }

void* TaskGraph::allocate(std::size_t bytes, std::size_t align) {
  if (!impl_) throw Error("TaskGraph: used after it was moved from");
  Impl& g = *impl_;
  if (bytes + align > kChunkBytes / 4) {
    // A big callable: a block of its own (freed with the graph).
    g.big.push_back(std::make_unique<std::byte[]>(bytes + align));
    void* p = g.big.back().get();
    std::size_t space = bytes + align;
    return std::align(align, bytes, p, space);
  }
  std::size_t at = (g.used + align - 1) & ~(align - 1);
  if (at + bytes > kChunkBytes) {
    g.chunks.push_back(std::make_unique<std::byte[]>(kChunkBytes));
    at = 0;
  }
  g.used = at + bytes;
  return g.chunks.back().get() + at;
}

std::size_t TaskGraph::add_task(const Access* acc, std::size_t n, const Affinity& affinity, void* fn,
                                void (*invoke)(void*), void (*destroy)(void*)) {
  Impl& g = *impl_;
  struct Merged {
    Data data;
    bool write;
  };
  std::vector<Merged> merged;
  std::vector<std::uint32_t> preds;
  try {
    if (g.running.load(std::memory_order_acquire))
      throw Error("TaskGraph::add: the graph is running (add tasks between runs)");
    if (g.tasks.size() >= kNone - 1) throw Error("TaskGraph::add: too many tasks (at most 2^32 - 2)");
    if (affinity.kind == Affinity::Kind::Data) {
      try {
        detail::data_entry(affinity.data);
      } catch (const Error& e) {
        throw Error(fmt::format("TaskGraph::add: affinity near data: {}", e.what()));
      }
    }
    merged.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      const Access& a = acc[i];
      if (!a.data) bad_access(i, n, "null data handle");
      // Read as a byte: any value may come in through a cast.
      const auto raw = static_cast<std::uint8_t>(a.mode);
      if (raw > static_cast<std::uint8_t>(AccessMode::ReadWrite))
        bad_access(i, n, "access mode is not Read, Write or ReadWrite");
      try {
        detail::data_entry(a.data);
      } catch (const Error& e) {
        bad_access(i, n, e.what());
      }
      merged.push_back({a.data, a.mode != AccessMode::Read});
    }
    // Repeats of a handle: one access, a write if any of them writes.
    std::sort(merged.begin(), merged.end(), [](const Merged& x, const Merged& y) {
      return x.data.index < y.data.index;
    });
    std::size_t m = 0;
    for (const Merged& a : merged) {
      if (m > 0 && merged[m - 1].data.index == a.data.index)
        merged[m - 1].write = merged[m - 1].write || a.write;
      else
        merged[m++] = a;
    }
    merged.resize(m);
    if (m > kMaxAccesses)
      throw Error(fmt::format("TaskGraph::add: {} accesses: at most {} per task (canopy::kMaxAccesses)", m,
                              kMaxAccesses));
  } catch (...) {
    if (destroy) destroy(fn);
    throw;
  }
  const auto self = static_cast<std::uint32_t>(g.tasks.size());
  for (const Merged& a : merged) {
    auto it = g.history.find(a.data.index);
    if (it == g.history.end() || it->second.generation != a.data.generation) continue;
    const History& h = it->second;
    if (a.write && !h.readers.empty())
      preds.insert(preds.end(), h.readers.begin(), h.readers.end());  // write after read
    else if (h.last_writer != kNone)
      preds.push_back(h.last_writer);  // read after write, write after write
  }
  std::sort(preds.begin(), preds.end());
  preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
  for (const std::uint32_t p : preds) g.successors[p].push_back(self);
  g.tasks.push_back(Task{fn, invoke, destroy, affinity, static_cast<std::uint32_t>(preds.size())});
  g.successors.emplace_back();
  g.nedges += preds.size();
  g.flat = false;
  for (const Merged& a : merged) {
    History& h = g.history[a.data.index];
    if (h.generation != a.data.generation) h = History{a.data.generation, kNone, {}};  // a new handle in this slot
    if (a.write) {
      h.last_writer = self;
      h.readers.clear();
    } else {
      h.readers.push_back(self);
    }
  }
  return self;
}

void TaskGraph::run() {
  if (!impl_) throw Error("TaskGraph: used after it was moved from");
  TaskGroup group;  // the calling worker's runtime, else the default one
  run_in(group);
}

void TaskGraph::run(Runtime& rt) {
  if (!impl_) throw Error("TaskGraph: used after it was moved from");
  TaskGroup group(rt);  // enters rt when the caller is not one of its workers
  run_in(group);
}

void TaskGraph::run_in(TaskGroup& group) {
  Impl& g = *impl_;
  if (g.running.exchange(true, std::memory_order_acq_rel))
    throw Error("TaskGraph::run: the graph is already running (one run at a time)");
  struct Done {
    Impl& g;
    ~Done() { g.running.store(false, std::memory_order_release); }
  } done{g};
  g.flatten();
  const std::size_t n = g.tasks.size();
  if (n == 0) return;
  for (std::size_t i = 0; i < n; ++i) {
    g.pending[i].store(g.tasks[i].npreds, std::memory_order_relaxed);
    g.cancelled[i].store(0, std::memory_order_relaxed);
  }
  g.error = nullptr;
  // (The spawns publish the counters to the workers.)
  for (const std::uint32_t r : g.roots) spawn_task(&g, &group, r);
  group.wait();
  if (g.error) std::rethrow_exception(std::exchange(g.error, nullptr));
}

}  // namespace canopy
