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
//
// Automatic affinity: each task's accesses are kept (a Recording) for the
// matrix; a placement gives each task a worker (`placed`), which spawning
// uses as a loose hint, and the chain rule above runs a successor next on
// the same worker only when it is placed there (or nowhere). An observed
// run times each task and notes its worker (two clock reads per task, only
// in that run).
#include "canopy/taskgraph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <exception>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "canopy/error.hpp"
#include "canopy/trace.hpp"
#include "canopy/topology.hpp"
#include "dataflow/flow.hpp"
#include "dataflow/recording.hpp"

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
  const char* label = nullptr;  // of its spans in a trace
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

  // ---- automatic affinity ----
  detail::flow::Recording recording;  // every task's accesses, in add order
  std::uint64_t version = 0;          // bumped by add: the pattern changed
  bool has_mode = false;              // set_affinity was called
  AutoAffinity mode = AutoAffinity::None;
  std::vector<int> placed;            // task -> worker, empty: none
  bool placed_by_auto = false;        // (else by apply(): automatic affinity leaves it)
  std::uint64_t mapped_version = 0;
  std::uint64_t located_version = ~std::uint64_t{0};  // the pattern whose handles were located (locate_handles)
  detail::RuntimeCore* mapped_rt = nullptr;
  bool check_next = false;            // the run after a mapping measures locality
  bool observing = false;             // this run times tasks and notes workers
  // observing (1) | traced (2, a trace session records) | next-touch marks
  // exist (4: the run's tasks claim them; marks set during a run are claimed
  // from the next run on): the one test execute() makes per task.
  std::uint8_t special = 0;
  std::vector<double> durations;      // seconds, per task (observed run)
  std::vector<int> ran_on;            // worker, per task (observed run)
  bool have_durations = false;
  AffinityReport report;
  int serial = 0;                     // names the dump files

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

// A placement decided (automatically, by_hand 0) or applied (1): one trace
// event per task, graph id -> task -> worker.
void trace_placement(const Impl& g, std::uint16_t by_hand) {
  for (std::size_t i = 0; i < g.placed.size(); ++i)
    detail::trace_event_anywhere(detail::kTracePlacement, static_cast<std::uint64_t>(g.placed[i]),
                                 reinterpret_cast<std::uintptr_t>(&g), static_cast<std::uint32_t>(i), by_hand);
}

// Next-touch / next-write marks of task i's recorded accesses (a handle
// freed since it was recorded is skipped).
[[gnu::cold, gnu::noinline]] void claim_touch_marks(const Impl* g, std::uint32_t i) noexcept {
  const detail::flow::Recording& rec = g->recording;
  for (std::uint32_t k = rec.begin[i]; k < rec.begin[i + 1]; ++k) {
    detail::DataEntry* e = nullptr;
    try {
      e = &detail::data_entry(rec.accesses[k].data());
    } catch (...) {
      continue;
    }
    detail::data_touch_claim(*e, rec.accesses[k].writes);
  }
}

// Observed (automatic affinity), traced, and/or claiming next-touch marks.
inline void invoke_observed(Impl* g, const Task& t, std::uint32_t i) {
  if (g->special & 4) claim_touch_marks(g, i);
  if (!g->observing) {
    if (detail::Worker* w = detail::tls_worker)
      detail::trace_call(w, detail::kTraceGraphTask, t.label, reinterpret_cast<std::uintptr_t>(g), i,
                         [&] { t.invoke(t.fn); });
    else
      t.invoke(t.fn);
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  if (detail::Worker* w = detail::tls_worker)
    detail::trace_call(w, detail::kTraceGraphTask, t.label, reinterpret_cast<std::uintptr_t>(g), i, [&] { t.invoke(t.fn); });
  else
    t.invoke(t.fn);
  g->durations[i] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  g->ran_on[i] = detail::tls_worker ? detail::tls_worker->index : -1;
}

// Counts task i's bytes for the worker that ran it, on its NUMA node and
// elsewhere, as the data-flow release path counts a submitted task's
// (Runtime::stats, the CANOPY_STATS table): a replay runs its tasks
// without that path. The worker is the only writer of its counters.
void count_locality(const Impl* g, std::uint32_t i) {
  detail::Worker* w = detail::tls_worker;
  if (!w) return;
  const int nodes = detail::flow::machine_nodes(w->rt);
  const int node = nodes == 1 ? 0 : w->machine_node;
  const detail::flow::Recording& rec = g->recording;
  std::uint64_t local = 0, remote = 0;
  for (std::uint32_t k = rec.begin[i]; k < rec.begin[i + 1]; ++k) {
    const detail::DataEntry* e = nullptr;
    try {
      e = &detail::data_entry(rec.accesses[k].data());
    } catch (const Error&) {
      continue;  // freed since it was recorded
    }
    std::uint64_t l = 0, r = 0;
    detail::flow::access_locality(nodes, e, node, &l, &r);
    local += l;
    remote += r;
  }
  w->bytes_local.store(w->bytes_local.load(std::memory_order_relaxed) + local, std::memory_order_relaxed);
  if (remote)
    w->bytes_remote.store(w->bytes_remote.load(std::memory_order_relaxed) + remote, std::memory_order_relaxed);
}

// May successor s run next on this worker, without a trip through a deque?
inline bool runs_next_here(const Impl* g, std::uint32_t s) {
  if (g->tasks[s].affinity.kind != Affinity::Kind::None) return false;
  if (g->placed.empty()) return true;
  const int w = g->placed[s];
  return w < 0 || (detail::tls_worker && detail::tls_worker->index == w);
}

// Runs task i, then the chain of first successors it makes ready.
void execute(Impl* g, TaskGroup* group, std::uint32_t i) {
  for (;;) {
    const Task& t = g->tasks[i];
    bool failed = g->cancelled[i].load(std::memory_order_relaxed) != 0;
    if (!failed) {
      try {
        if (g->special) [[unlikely]]
          invoke_observed(g, t, i);
        else
          t.invoke(t.fn);
      } catch (...) {
        g->note_error(std::current_exception());
        failed = true;
      }
      if (!failed) count_locality(g, i);
    }
    std::uint32_t next = kNone;
    const std::uint32_t end = g->succ_begin[i + 1];
    for (std::uint32_t k = g->succ_begin[i]; k < end; ++k) {
      const std::uint32_t s = g->succ[k];
      if (failed) g->cancelled[s].store(1, std::memory_order_relaxed);
      if (g->pending[s].fetch_sub(1, std::memory_order_acq_rel) == 1) {
        if (next == kNone && runs_next_here(g, s))
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
  if (a.kind != Affinity::Kind::None)
    group->spawn(a, body);
  else if (!g->placed.empty() && g->placed[i] >= 0)
    group->spawn(Affinity::worker(g->placed[i]), body);  // loose: idle workers may still take it
  else
    group->spawn(body);
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
                                void (*invoke)(void*), void (*destroy)(void*), const char* label) {
  Impl& g = *impl_;
  struct Merged {
    Data data;
    bool write;
    bool read;
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
      merged.push_back({a.data, a.mode != AccessMode::Read, a.mode != AccessMode::Write});
    }
    // Repeats of a handle: one access, a write if any of them writes.
    std::sort(merged.begin(), merged.end(), [](const Merged& x, const Merged& y) {
      return x.data.index < y.data.index;
    });
    std::size_t m = 0;
    for (const Merged& a : merged) {
      if (m > 0 && merged[m - 1].data.index == a.data.index)
      {
        merged[m - 1].write = merged[m - 1].write || a.write;
        merged[m - 1].read = merged[m - 1].read || a.read;
      }
      else
        merged[m++] = a;
    }
    merged.resize(m);
    if (m > kMaxAccesses)
      throw Error(fmt::format("TaskGraph::add: {} accesses: at most {} per task (canopy::kMaxAccesses)", m,
                              kMaxAccesses));
    detail::flow::RecAccess rec[kMaxAccesses];
    for (std::size_t k = 0; k < m; ++k)
      rec[k] = {merged[k].data.index, merged[k].data.generation, detail::data_entry(merged[k].data).bytes,
                merged[k].read, merged[k].write};
    g.recording.add_task(rec, m);
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
  g.tasks.push_back(Task{fn, invoke, destroy, affinity, static_cast<std::uint32_t>(preds.size()), label});
  g.successors.emplace_back();
  g.nedges += preds.size();
  g.flat = false;
  ++g.version;
  if (g.placed_by_auto) g.placed.clear();  // the pattern changed: the next run observes and maps again
  else if (!g.placed.empty()) g.placed.push_back(-1);
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

namespace {

// Bytes the tasks of the observed run accessed on their worker's NUMA node
// and elsewhere, from where canopy last knew each handle's pages to be.
void observed_locality(detail::RuntimeCore* rt, const Impl& g, std::uint64_t* local, std::uint64_t* remote) {
  const int nodes = detail::flow::machine_nodes(rt);
  std::uint64_t l = 0, r = 0;
  const detail::flow::Recording& rec = g.recording;
  for (std::size_t t = 0; t < rec.tasks() && t < g.ran_on.size(); ++t) {
    const int w = g.ran_on[t];
    if (w < 0 || w >= static_cast<int>(rt->slots.size())) continue;
    const int node = nodes == 1 ? 0 : rt->slots[w]->machine_node;
    for (std::uint32_t k = rec.begin[t]; k < rec.begin[t + 1]; ++k) {
      const detail::DataEntry* e = nullptr;
      try {
        e = &detail::data_entry(rec.accesses[k].data());
      } catch (const Error&) {
        continue;  // freed since
      }
      std::uint64_t lo = 0, re = 0;
      detail::flow::access_locality(nodes, e, node, &lo, &re);
      l += lo;
      r += re;
    }
  }
  *local = l;
  *remote = r;
}

std::string percent_local(std::uint64_t local, std::uint64_t remote) {
  const std::uint64_t all = local + remote;
  if (all == 0) return "no placed bytes";
  return fmt::format("{:.1f}% of {:.1f} MB local", 100.0 * static_cast<double>(local) / static_cast<double>(all),
                     static_cast<double>(all) / 1e6);
}

// Asks the kernel where the pages of the graph's handles are, for those
// canopy has no location of yet (first-touch handles the tasks filled:
// data_allocate cannot know where they will be, and nothing else asks), so
// that the locality counts (CANOPY_STATS, the affinity report) see them.
// Once per pattern, after a run, when a count needs it.
void locate_handles(Impl& g) {
  if (g.located_version == g.version) return;
  g.located_version = g.version;
  std::unordered_set<std::uint32_t> seen;
  for (const detail::flow::RecAccess& a : g.recording.accesses) {
    if (!seen.insert(a.index).second) continue;
    try {
      if (data_home_node(a.data()) < 0) data_refresh_location(a.data());
    } catch (const Error&) {
      // freed since it was recorded
    }
  }
}

std::atomic<int> graph_serials{0};

// CPU time of the calling thread: what the mapping itself costs, whatever
// else the machine runs meanwhile.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

void move_handles(detail::RuntimeCore* rt, Impl& g) {
  detail::flow::move_handles(rt, g.recording, g.placed, &g.report);
}

}  // namespace

void TaskGraph::run_in(TaskGroup& group) {
  Impl& g = *impl_;
  if (g.running.exchange(true, std::memory_order_acq_rel))
    throw Error("TaskGraph::run: the graph is already running (one run at a time)");
  struct Done {
    Impl& g;
    ~Done() {
      g.observing = false;
      g.special = 0;
      g.running.store(false, std::memory_order_release);
    }
  } done{g};
  g.flatten();
  const std::size_t n = g.tasks.size();
  if (n == 0) return;
  // Automatic affinity: observe this run when the graph has no placement
  // for this runtime and this pattern (then map after it), or to measure
  // the first run after a mapping.
  detail::RuntimeCore* rt = detail::tls_worker->rt;
  const AutoAffinity mode = g.has_mode ? g.mode : rt->options.affinity;
  bool map_after = false;
  if (mode == AutoAffinity::Auto) [[unlikely]] {
    const bool manual = !g.placed.empty() && !g.placed_by_auto;
    const bool current = g.placed_by_auto && g.mapped_version == g.version && g.mapped_rt == rt;
    if (!manual && !current) {
      g.placed.clear();
      g.placed_by_auto = false;
      map_after = true;
    }
    g.observing = map_after || g.check_next;
  } else if (g.placed_by_auto) {
    g.placed.clear();
    g.placed_by_auto = false;
    g.check_next = false;
  }
  if (g.observing) {
    g.durations.assign(n, 0.0);
    g.ran_on.assign(n, -1);
  }
  g.special = static_cast<std::uint8_t>((g.observing ? 1 : 0) | (trace_active() ? 2 : 0) |
                                        (detail::touch_marks_pending() ? 4 : 0));
  for (std::size_t i = 0; i < n; ++i) {
    g.pending[i].store(g.tasks[i].npreds, std::memory_order_relaxed);
    g.cancelled[i].store(0, std::memory_order_relaxed);
  }
  g.error = nullptr;
  // (The spawns publish the counters to the workers.)
  for (const std::uint32_t r : g.roots) spawn_task(&g, &group, r);
  group.wait();
  if (g.error) {
    g.check_next = false;
    std::rethrow_exception(std::exchange(g.error, nullptr));
  }
  if (g.observing || rt->options.stats) locate_handles(g);
  if (!g.observing) return;
  g.observing = false;
  g.have_durations = true;
  if (g.check_next && !map_after) {
    g.check_next = false;
    observed_locality(rt, g, &g.report.after_local, &g.report.after_remote);
    g.report.after_measured = true;
    if (rt->options.stats)
      std::fprintf(stderr, "canopy affinity: task graph %d: before the placement %s, after it %s\n", g.serial,
                   percent_local(g.report.before_local, g.report.before_remote).c_str(),
                   percent_local(g.report.after_local, g.report.after_remote).c_str());
    return;
  }
  observed_locality(rt, g, &g.report.before_local, &g.report.before_remote);
  // Map: the matrix, the placement, the workers; then the pages.
  const auto t0 = std::chrono::steady_clock::now();
  const double cpu0 = thread_cpu_seconds();
  const bool shown = rt->options.display_affinity || !rt->options.affinity_dump.empty();
  TaskMatrix m =
      detail::flow::build_task_matrix(g.recording, true, detail::flow::robust_work(g.recording, g.durations), shown);
  const Placement p = detail::flow::compute_placement(rt, m, "");
  g.placed = detail::flow::placement_workers(rt, p);
  trace_placement(g, 0);
  const auto t1 = std::chrono::steady_clock::now();
  g.report.map_cpu_seconds = thread_cpu_seconds() - cpu0;
  g.placed_by_auto = true;
  g.mapped_version = g.version;
  g.mapped_rt = rt;
  move_handles(rt, g);
  const auto t2 = std::chrono::steady_clock::now();
  g.report.map_seconds = std::chrono::duration<double>(t1 - t0).count();
  g.report.move_seconds = std::chrono::duration<double>(t2 - t1).count();
  g.report.after_measured = false;
  ++g.report.mappings;
  g.check_next = true;
  if (g.serial == 0) g.serial = graph_serials.fetch_add(1, std::memory_order_relaxed) + 1;
  if (rt->options.display_affinity) {
    std::string text = fmt::format(
        "canopy affinity: task graph {}: {} tasks on {} workers, policy {}, mapped in {:.2f} ms, {} pages moved{}\n",
        g.serial, n, rt->num_workers, p.policy, g.report.map_seconds * 1e3, g.report.pages_moved,
        g.report.pages_left == 0 ? std::string()
                                 : fmt::format(", {} pages of {} handles left where they were (first: {})",
                                               g.report.pages_left, g.report.handles_left, g.report.move_refusal));
    text += detail::flow::describe_placement(rt, m, p);
    std::fputs(text.c_str(), stderr);
  }
  if (!rt->options.affinity_dump.empty())
    detail::flow::write_affinity_files(rt->options.affinity_dump,
                                       fmt::format("taskgraph-{}-map-{}", g.serial, g.report.mappings), rt, m, p);
}

void TaskGraph::set_affinity(AutoAffinity mode) {
  if (!impl_) throw Error("TaskGraph: used after it was moved from");
  impl_->has_mode = true;
  impl_->mode = mode;
}

TaskMatrix TaskGraph::matrix() const {
  if (!impl_) throw Error("TaskGraph: used after it was moved from");
  const Impl& g = *impl_;
  return detail::flow::build_task_matrix(g.recording, true,
                                         g.have_durations ? g.durations : std::vector<double>{});
}

void TaskGraph::apply(Runtime& rt, const Placement& p) {
  if (!impl_) throw Error("TaskGraph: used after it was moved from");
  Impl& g = *impl_;
  if (g.running.load(std::memory_order_acquire))
    throw Error("TaskGraph::apply: the graph is running (apply a placement between runs)");
  if (static_cast<std::size_t>(p.num_tasks()) != g.tasks.size())
    throw Error(fmt::format("TaskGraph::apply: the placement has {} tasks, the graph {}", p.num_tasks(),
                            g.tasks.size()));
  std::vector<int> workers = detail::flow::placement_workers(rt.core(), p);
  g.placed = std::move(workers);
  trace_placement(g, 1);
  g.placed_by_auto = false;
  g.check_next = false;
  move_handles(rt.core(), g);
}

void TaskGraph::clear_placement() {
  if (!impl_) throw Error("TaskGraph: used after it was moved from");
  if (impl_->running.load(std::memory_order_acquire))
    throw Error("TaskGraph::clear_placement: the graph is running");
  impl_->placed.clear();
  impl_->placed_by_auto = false;
}

std::vector<int> TaskGraph::task_workers() const { return impl_ ? impl_->placed : std::vector<int>{}; }

AffinityReport TaskGraph::affinity_report() const { return impl_ ? impl_->report : AffinityReport{}; }

}  // namespace canopy
