// Automatic affinity of a `submit` stream (stream_affinity.hpp,
// docs/auto-affinity.md "Streams").
//
// Recognising the recurring tasks. A task's signature is what it accesses:
// its handles (index and generation), each read or written, sorted and
// merged as submit merges them. Equal signatures are the same recurring
// task (an id); a handle freed and allocated again is another handle.
//
// Iterations: IterationFinder (iterations.hpp) finds them and says when
// one is confirmed; its matrix is mapped at once, in the submitter, with
// each task's mean measured time (times its occurrences) as its work when
// each has run, else with the bytes it accesses (a stream submits far
// ahead of what runs: waiting for the times would leave most of what it
// submitted unplaced).
//
// Applying. Every tracked task carries its id in its node (Node::stream_id)
// and a worker hint kind, so make_ready takes its hinted path and asks
// stream_worker: a task of the mapped pattern goes to its worker's loose
// queue (idle workers may still take it: affinity.cpp says when), others
// where they would have gone. So the mapping also applies to tasks already
// submitted but not yet ready, which in a stream that runs ahead of its
// tasks is most of them. Handles' pages go to the node of the worker whose
// tasks write most of them (move_handles, as for task graphs).
#include "dataflow/stream_affinity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "canopy/auto_affinity.hpp"
#include "canopy/error.hpp"
#include "canopy/runtime.hpp"
#include "dataflow/iterations.hpp"
#include "dataflow/recording.hpp"
#include "runtime/runtime_core.hpp"

namespace canopy::detail::flow {

namespace {

constexpr std::uint32_t kNone = ~std::uint32_t{0};
// Past this many distinct signatures (a program whose tasks never repeat)
// the stream stops tracking: memory stays bounded.
constexpr std::uint32_t kChunkBits = 10;
constexpr std::uint32_t kChunks = 1024;
constexpr std::uint32_t kMaxIds = kChunks << kChunkBits;

// Measured run time of one recurring task, summed over its timed runs.
struct Timing {
  std::atomic<std::uint64_t> ns{0};
  std::atomic<std::uint32_t> runs{0};
};

using Phase = IterationFinder::Phase;

std::uint64_t hash_signature(const RecAccess* a, std::size_t n) {
  std::uint64_t h = 0xCBF29CE484222325ull;
  auto mix = [&h](std::uint64_t v) {
    h ^= v;
    h *= 0x100000001B3ull;
  };
  for (std::size_t k = 0; k < n; ++k) {
    mix((std::uint64_t{a[k].generation} << 32) | a[k].index);
    mix(std::uint64_t{a[k].reads} | (std::uint64_t{a[k].writes} << 1));
  }
  return h;
}

bool same_signature(const std::vector<RecAccess>& s, const RecAccess* a, std::size_t n) {
  if (s.size() != n) return false;
  for (std::size_t k = 0; k < n; ++k)
    if (s[k].index != a[k].index || s[k].generation != a[k].generation || s[k].reads != a[k].reads ||
        s[k].writes != a[k].writes)
      return false;
  return true;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

struct StreamAffinity {
  explicit StreamAffinity(RuntimeCore* r) : rt(r) {}

  RuntimeCore* rt;
  // ---- lock-free: read by workers ----
  std::atomic<Timing*> timing[kChunks] = {};         // made under the mutex, before their ids are handed out
  std::atomic<const std::vector<int>*> placed{nullptr};  // worker per id (-1: none)

  // ---- under the mutex ----
  std::mutex mutex;
  std::unordered_map<std::uint64_t, std::vector<std::uint32_t>> by_hash;
  std::vector<std::vector<RecAccess>> sigs;  // by id
  bool disabled = false;
  IterationFinder finder;
  std::vector<int> mapped_workers;  // per row of the mapped matrix
  bool manual = false;
  bool work_is_bytes = false;  // the last matrix's work: bytes accessed (its tasks had not all run)
  AffinityReport report;
  std::vector<std::unique_ptr<const std::vector<int>>> snapshots;  // every `placed` ever published
  std::vector<std::unique_ptr<Timing[]>> timing_owner;

  ~StreamAffinity() = default;

  Timing& timing_of(std::uint32_t id) {
    return timing[id >> kChunkBits].load(std::memory_order_acquire)[id & ((1u << kChunkBits) - 1)];
  }

  std::uint32_t id_of(const RecAccess* a, std::size_t n) {
    const std::uint64_t h = hash_signature(a, n);
    std::vector<std::uint32_t>& bucket = by_hash[h];
    for (std::uint32_t id : bucket)
      if (same_signature(sigs[id], a, n)) return id;
    if (sigs.size() >= kMaxIds) return kNone;
    const auto id = static_cast<std::uint32_t>(sigs.size());
    if ((id & ((1u << kChunkBits) - 1)) == 0) {
      timing_owner.push_back(std::make_unique<Timing[]>(std::size_t{1} << kChunkBits));
      timing[id >> kChunkBits].store(timing_owner.back().get(), std::memory_order_release);
    }
    sigs.emplace_back(a, a + n);
    finder.add_id();
    bucket.push_back(id);
    return id;
  }

  // One more submission of task `id`: maps when an iteration is confirmed.
  void observe(std::uint32_t id) {
    if (finder.observe(id)) map();
  }

  // The recording of an iteration's occurrences, their rows (distinct
  // tasks in first-submission order) and the ids of the rows.
  void record(const std::vector<std::uint32_t>& iteration, Recording* rec, std::vector<int>* rows,
              std::vector<std::uint32_t>* row_ids) const {
    std::unordered_map<std::uint32_t, int> row_of;
    for (std::uint32_t id : iteration) {
      auto [it, fresh] = row_of.try_emplace(id, static_cast<int>(row_ids->size()));
      if (fresh) row_ids->push_back(id);
      rows->push_back(it->second);
      rec->add_task(sigs[id].data(), sigs[id].size());
    }
  }

  TaskMatrix matrix_of(const std::vector<std::uint32_t>& iteration, bool labels, Recording* rec,
                       std::vector<int>* rows, std::vector<std::uint32_t>* row_ids) {
    record(iteration, rec, rows, row_ids);
    const std::size_t R = row_ids->size();
    std::vector<std::uint32_t> count(R, 0);
    for (int r : *rows) ++count[static_cast<std::size_t>(r)];
    std::vector<double> work(R, 0.0);
    bool timed = true;
    for (std::size_t r = 0; r < R; ++r) {
      Timing& t = timing_of((*row_ids)[r]);
      const std::uint32_t runs = t.runs.load(std::memory_order_acquire);
      if (runs == 0) {
        timed = false;
        break;
      }
      work[r] = static_cast<double>(t.ns.load(std::memory_order_relaxed)) * 1e-9 / runs * count[r];
    }
    work_is_bytes = !timed;
    if (!timed) {
      // Bytes accessed, in the unit balancing expects (a "second" a GB:
      // only the ratios matter, and the 50 us floor stays small).
      for (std::size_t r = 0; r < R; ++r) {
        std::uint64_t bytes = 0;
        for (const RecAccess& a : sigs[(*row_ids)[r]]) bytes += a.bytes;
        work[r] = static_cast<double>(bytes) * 1e-9 * count[r];
      }
    }
    TaskMatrix m = build_task_matrix(*rec, true, std::move(work), false, rows, static_cast<int>(R));
    if (labels) {
      m.labels.reserve(R);
      for (std::size_t r = 0; r < R; ++r) {
        const std::vector<RecAccess>& s = sigs[(*row_ids)[r]];
        std::string l = fmt::format("s{}:", r);
        for (const RecAccess& a : s) l += fmt::format(" {}#{}", a.reads && a.writes ? "rw" : a.writes ? "w" : "r", a.index);
        m.labels.push_back(std::move(l));
      }
    }
    return m;
  }

  // Publishes `workers` (per row of `row_ids`) and moves the handles.
  void apply(const Recording& rec, const std::vector<int>& rows, const std::vector<std::uint32_t>& row_ids,
             const std::vector<int>& workers) {
    auto snap = std::make_unique<std::vector<int>>(sigs.size(), -1);
    for (std::size_t r = 0; r < row_ids.size(); ++r) (*snap)[row_ids[r]] = workers[r];
    placed.store(snap.get(), std::memory_order_release);
    snapshots.push_back(std::move(snap));
    mapped_workers = workers;
    std::vector<int> occurrence_worker(rows.size());
    for (std::size_t k = 0; k < rows.size(); ++k) occurrence_worker[k] = workers[static_cast<std::size_t>(rows[k])];
    move_handles(rt, rec, occurrence_worker, &report);
  }

  void map() {
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = thread_cpu_seconds();
    const bool shown = rt->options.display_affinity || !rt->options.affinity_dump.empty();
    Recording rec;
    std::vector<int> rows;
    std::vector<std::uint32_t> row_ids;
    const TaskMatrix m = matrix_of(finder.confirmed, shown, &rec, &rows, &row_ids);
    const Placement p = compute_placement(rt, m, "");
    const std::vector<int> workers = placement_workers(rt, p);
    const auto t1 = std::chrono::steady_clock::now();
    report.map_cpu_seconds = thread_cpu_seconds() - cpu0;
    finder.map_confirmed();
    manual = false;
    apply(rec, rows, row_ids, workers);
    const auto t2 = std::chrono::steady_clock::now();
    report.map_seconds = std::chrono::duration<double>(t1 - t0).count();
    report.move_seconds = std::chrono::duration<double>(t2 - t1).count();
    ++report.mappings;
    if (rt->options.display_affinity) {
      std::string text = fmt::format(
          "canopy affinity: stream: {} recurring tasks (iterations of {} submissions) on {} workers, policy {}, "
          "work {}, mapped in {:.2f} ms, {} pages moved{}\n",
          row_ids.size(), finder.mapped.size(), rt->num_workers, p.policy, work_is_bytes ? "bytes" : "measured",
          report.map_seconds * 1e3, report.pages_moved,
          report.pages_left == 0 ? std::string()
                                 : fmt::format(", {} pages of {} handles left where they were (first: {})",
                                               report.pages_left, report.handles_left, report.move_refusal));
      text += describe_placement(rt, m, p);
      std::fputs(text.c_str(), stderr);
    }
    if (!rt->options.affinity_dump.empty()) {
      try {
        write_affinity_files(rt->options.affinity_dump, fmt::format("stream-map-{}", report.mappings), rt, m, p);
      } catch (const Error& e) {
        // Mapped by a worker or inside submit: say so rather than fail a task.
        std::fprintf(stderr, "canopy affinity: %s\n", e.what());
      }
    }
  }
};

namespace {

StreamAffinity* stream_of(RuntimeCore* rt) {
  if (StreamAffinity* s = rt->stream.load(std::memory_order_acquire)) return s;
  std::lock_guard<std::mutex> lock(rt->affinity_mutex);
  if (!rt->stream_owner) {
    rt->stream_owner = std::make_shared<StreamAffinity>(rt);
    rt->stream.store(rt->stream_owner.get(), std::memory_order_release);
  }
  return rt->stream_owner.get();
}

// A timed task's duration (the worker that ran it).
void task_ran(StreamAffinity* s, std::uint32_t id, std::uint64_t ns) {
  Timing& t = s->timing_of(id);
  t.ns.fetch_add(ns, std::memory_order_relaxed);
  t.runs.fetch_add(1, std::memory_order_release);
}

StreamTimer* timer_of(void* fn) {
  return reinterpret_cast<StreamTimer*>(static_cast<char*>(fn) - sizeof(StreamTimer));
}

void timed_invoke(void* fn) {
  const StreamTimer* t = timer_of(fn);
  const auto t0 = std::chrono::steady_clock::now();
  t->ops->invoke(fn);
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
  task_ran(t->stream, t->id - 1, static_cast<std::uint64_t>(ns > 0 ? ns : 1));
}

void timed_destroy(void* fn) {
  const StreamTimer* t = timer_of(fn);
  if (t->ops->destroy) t->ops->destroy(fn);
}

}  // namespace

const FnOps kStreamTimedOps = {0, alignof(StreamTimer), &timed_invoke, &timed_destroy, nullptr, nullptr};

StreamTask stream_task_submitted(RuntimeCore* rt, const Access* acc, std::size_t n) {
  if (n == 0 || n > kMaxAccesses) return {};
  // The signature, as submit merges accesses (bad ones: not tracked; submit
  // reports them).
  RecAccess sig[kMaxAccesses];
  std::size_t m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Access& a = acc[i];
    const auto raw = static_cast<std::uint8_t>(a.mode);
    if (!a.data || raw > static_cast<std::uint8_t>(AccessMode::ReadWrite)) return {};
    std::uint64_t bytes;
    try {
      bytes = data_entry(a.data).bytes;
    } catch (const Error&) {
      return {};
    }
    sig[m++] = {a.data.index, a.data.generation, bytes, a.mode != AccessMode::Write, a.mode != AccessMode::Read};
  }
  std::sort(sig, sig + m, [](const RecAccess& x, const RecAccess& y) { return x.index < y.index; });
  std::size_t k = 0;
  for (std::size_t i = 0; i < m; ++i) {
    if (k > 0 && sig[k - 1].index == sig[i].index) {
      sig[k - 1].reads = sig[k - 1].reads || sig[i].reads;
      sig[k - 1].writes = sig[k - 1].writes || sig[i].writes;
      continue;
    }
    sig[k++] = sig[i];
  }
  StreamAffinity* s = stream_of(rt);
  std::lock_guard<std::mutex> lock(s->mutex);
  if (s->disabled) return {};
  const std::uint32_t id = s->id_of(sig, k);
  if (id == kNone) {
    s->disabled = true;
    return {};
  }
  s->observe(id);
  return StreamTask{id + 1, s, s->finder.phase != Phase::Applied};
}

int stream_worker(RuntimeCore* rt, std::uint32_t id) {
  const StreamAffinity* s = rt->stream.load(std::memory_order_acquire);
  if (!s || id == 0) return -1;
  const std::vector<int>* p = s->placed.load(std::memory_order_acquire);
  return p && id - 1 < p->size() ? (*p)[id - 1] : -1;
}

}  // namespace canopy::detail::flow

namespace canopy {

using detail::flow::StreamAffinity;

StreamReport stream_affinity(const Runtime& rt) {
  StreamReport r;
  StreamAffinity* s = rt.core()->stream.load(std::memory_order_acquire);
  if (!s) return r;
  std::lock_guard<std::mutex> lock(s->mutex);
  r.signatures = s->sigs.size();
  r.iteration = s->finder.mapped.size();
  r.recurring = s->finder.mapped_set.size();
  r.workers = s->mapped_workers;
  r.manual = s->manual;
  r.affinity = s->report;
  return r;
}

TaskMatrix stream_matrix(const Runtime& rt) {
  StreamAffinity* s = rt.core()->stream.load(std::memory_order_acquire);
  if (!s) throw Error("stream_matrix: the runtime's stream has no recurring tasks (CANOPY_AFFINITY is not auto?)");
  std::lock_guard<std::mutex> lock(s->mutex);
  const std::vector<std::uint32_t>& it = !s->finder.mapped.empty() ? s->finder.mapped : s->finder.confirmed;
  if (it.empty()) throw Error("stream_matrix: no iteration of the stream has been recognised yet");
  detail::flow::Recording rec;
  std::vector<int> rows;
  std::vector<std::uint32_t> row_ids;
  return s->matrix_of(it, true, &rec, &rows, &row_ids);
}

void apply_stream_placement(Runtime& rt, const Placement& p) {
  StreamAffinity* s = rt.core()->stream.load(std::memory_order_acquire);
  if (!s) throw Error("apply_stream_placement: the runtime's stream has no recurring tasks");
  std::lock_guard<std::mutex> lock(s->mutex);
  const bool confirmed = !s->finder.confirmed.empty();
  const std::vector<std::uint32_t>& it = confirmed ? s->finder.confirmed : s->finder.mapped;
  if (it.empty()) throw Error("apply_stream_placement: no iteration of the stream has been recognised yet");
  detail::flow::Recording rec;
  std::vector<int> rows;
  std::vector<std::uint32_t> row_ids;
  s->record(it, &rec, &rows, &row_ids);
  if (static_cast<std::size_t>(p.num_tasks()) != row_ids.size())
    throw Error(fmt::format("apply_stream_placement: the placement has {} tasks, the stream's iteration {}",
                            p.num_tasks(), row_ids.size()));
  if (confirmed) s->finder.map_confirmed();
  const std::vector<int> workers = detail::flow::placement_workers(rt.core(), p);
  s->apply(rec, rows, row_ids, workers);
  s->manual = true;
  s->finder.phase = detail::flow::IterationFinder::Phase::Applied;
}

}  // namespace canopy
