// Trace sessions: the runtimes that exist (each registers when it is made),
// the one session that may record (started by trace_start or by
// CANOPY_TRACE at the first runtime), the rings it gives every worker slot,
// and its end: the rings are read, time stamps turned into nanoseconds and
// the file written (chrome_writer.cpp, otf2_writer.cpp).
//
// Everything here runs under one mutex, off the hot path: the workers only
// touch their rings (canopy/detail/trace.hpp), and threads outside every
// runtime append to the session's outside buffer under the mutex.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "canopy/dataflow.hpp"
#include "canopy/error.hpp"
#include "canopy/trace.hpp"
#include "counters/run_counters.hpp"
#include "runtime/runtime_core.hpp"
#include "trace/symbols.hpp"
#include "trace/trace_data.hpp"

namespace canopy {

namespace detail {
namespace {

constexpr std::uint64_t kDefaultBufferEvents = 262144;
constexpr std::uint64_t kMinBufferEvents = 16;
constexpr std::uint64_t kMaxBufferEvents = std::uint64_t{1} << 28;
constexpr std::uint32_t kAllKinds = (1u << kTraceKinds) - 1;

const char* const kKindNames[kTraceKinds] = {"task",   "task",    "task",      "steal",     "park",
                                             "search", "release", "migration", "placement", "omp"};

std::uint64_t now_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// The rings of one runtime's slots (made at its first session, freed when
// the runtime ends: a worker may still write one record after a session
// stopped, canopy/detail/trace.hpp).
struct RuntimeEntry {
  RuntimeCore* rt = nullptr;
  int id = 0;
  std::vector<std::unique_ptr<TraceRing>> rings;
  std::vector<std::unique_ptr<TraceEvent[]>> storage;
  std::vector<std::uint64_t> local0, remote0;  // the workers' byte counts at the session's start
  std::vector<counters::Sample> counters0;     // the workers' counters at the session's start
};

// A registered thread of another runtime (TraceThreadSlot) and its ring.
struct ExtThread {
  TraceThreadSlot* slot = nullptr;
  std::string name;
  std::unique_ptr<TraceRing> ring;
  std::unique_ptr<TraceEvent[]> storage;
};

// What one slot recorded, copied out of its ring (at stop, or when its
// runtime ended during the session).
struct SlotEvents {
  trace_impl::TraceThread thread;
  std::vector<TraceEvent> events;
};

struct Session {
  std::string path;
  TraceFormat format = TraceFormat::Json;
  std::uint32_t kinds = kAllKinds;
  std::uint64_t buffer = kDefaultBufferEvents;
  std::uint64_t tsc0 = 0;
  std::uint64_t ns0 = 0;
  std::uint64_t lost = 0;
  bool from_env = false;
  std::vector<SlotEvents> slots;  // of runtimes that ended during the session
  std::vector<TraceEvent> outside;
  std::uint64_t outside_capacity = 0;
  // Counters (CANOPY_COUNTERS when the session started): the runtimes'
  // counters that have no count, by reason, and the session's energy.
  unsigned counter_sets = counters::kSetAll;
  std::vector<std::pair<std::string, std::string>> counters_missing;
  std::vector<std::string> counters_notes;
  std::vector<std::string> counter_names;
  std::unique_ptr<counters::EnergyMeter> energy;
  int perf_warm = -1;  // counters::perf_warm_up()
  ~Session() { counters::perf_warm_down(perf_warm); }
};

struct State {
  std::mutex mutex;
  std::vector<std::unique_ptr<RuntimeEntry>> runtimes;
  std::vector<std::unique_ptr<ExtThread>> threads;  // registered slots (never removed)
  std::map<int, std::string> group_names;
  int next_id = 1;
  std::unique_ptr<Session> session;
  std::atomic<bool> active{false};  // a session records (read without the mutex by outside events)
  bool env_done = false;            // CANOPY_TRACE was looked at
};

// Never destroyed: the exit handler and runtimes destroyed late use it.
State& state() {
  static State* s = new State;
  return *s;
}

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

std::uint32_t parse_events(const std::string& list, const char* what) {
  if (list.empty()) return kAllKinds;
  std::uint32_t kinds = 0;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string word = list.substr(start, end - start);
    bool known = false;
    if (word == "all") {
      kinds = kAllKinds;
      known = true;
    }
    for (int k = 0; k < kTraceKinds; ++k)
      if (word == kKindNames[k]) {
        kinds |= 1u << k;
        known = true;
      }
    if (!known)
      throw Error(fmt::format("{}='{}': unknown event '{}'; expected a comma-separated list of task, steal, park, "
                              "search, release, migration, placement, omp or all",
                              what, list, word),
                  ErrorKind::BadInput);
    start = end + 1;
  }
  return kinds;
}

TraceFormat format_of(const std::string& path, TraceFormat f) {
  if (f != TraceFormat::Auto) return f;
  const std::string ext = ".otf2";
  return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0
             ? TraceFormat::Otf2
             : TraceFormat::Json;
}

TraceFormat parse_format(const char* v) {
  const std::string s = v;
  if (s == "json") return TraceFormat::Json;
  if (s == "otf2") return TraceFormat::Otf2;
  throw Error(fmt::format("CANOPY_TRACE_FORMAT='{}': expected json or otf2", s), ErrorKind::BadInput);
}

std::uint64_t parse_buffer(const char* v) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (errno != 0 || end == v || *end != '\0' || v[0] == '-' || n < kMinBufferEvents || n > kMaxBufferEvents)
    throw Error(fmt::format("CANOPY_TRACE_BUFFER='{}': expected a number of events per worker from {} to {}", v,
                            kMinBufferEvents, kMaxBufferEvents),
                ErrorKind::BadInput);
  return n;
}

std::uint64_t round_up_pow2(std::uint64_t n) {
  std::uint64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// Gives every slot of e a ring (first session) and publishes it to the
// worker with the session's start.
void arm(RuntimeEntry& e, const Session& s) {
  RuntimeCore* rt = e.rt;
  if (e.rings.empty()) {
    for (int i = 0; i < rt->num_slots; ++i) {
      auto ring = std::make_unique<TraceRing>();
      // Not value-initialised: pages of slots that never trace stay untouched.
      e.storage.emplace_back(new TraceEvent[s.buffer]);
      ring->events = e.storage.back().get();
      ring->mask = s.buffer - 1;
      e.rings.push_back(std::move(ring));
    }
  }
  e.local0.assign(rt->num_slots, 0);
  e.remote0.assign(rt->num_slots, 0);
  // The workers' counters (opened now if CANOPY_STATS did not; a runtime
  // still in its constructor opens them once its threads run).
  open_run_counters(rt, false);
  e.counters0.assign(rt->num_slots, counters::Sample{});
  for (int i = 0; i < rt->num_workers; ++i) e.counters0[i] = worker_counters(rt, i);
  for (int i = 0; i < rt->num_slots; ++i) {
    TraceRing* r = e.rings[i].get();
    r->base.store(r->count.load(std::memory_order_acquire), std::memory_order_relaxed);
    r->kinds.store(s.kinds, std::memory_order_relaxed);
    Worker* w = rt->slots[i];
    e.local0[i] = w->bytes_local.load(std::memory_order_relaxed);
    e.remote0[i] = w->bytes_remote.load(std::memory_order_relaxed);
    w->trace.store(r, std::memory_order_release);
  }
}

// Gives a registered thread its ring (first session) and publishes it,
// keeping the owner's bit 0.
void arm_thread(ExtThread& x, const Session& s) {
  if (!x.ring) {
    x.ring = std::make_unique<TraceRing>();
    x.storage.reset(new TraceEvent[s.buffer]);
    x.ring->events = x.storage.get();
    x.ring->mask = s.buffer - 1;
  } else if (x.ring->mask + 1 < s.buffer) {
    // A later session asked for a larger buffer: the old one is kept (a
    // writer may still hold it) and a new ring published.
    x.ring.release();
    x.storage.release();
    return arm_thread(x, s);
  }
  TraceRing* r = x.ring.get();
  r->base.store(r->count.load(std::memory_order_acquire), std::memory_order_relaxed);
  r->kinds.store(s.kinds, std::memory_order_relaxed);
  const std::uintptr_t own = x.slot->word.load(std::memory_order_relaxed) & 1;
  x.slot->word.store(reinterpret_cast<std::uintptr_t>(r) | own, std::memory_order_release);
}

void collect_thread(ExtThread& x, Session& s, const std::map<int, std::string>& group_names) {
  const std::uintptr_t own = x.slot->word.load(std::memory_order_relaxed) & 1;
  x.slot->word.store(own, std::memory_order_release);
  TraceRing* r = x.ring.get();
  if (!r) return;
  const std::uint64_t count = r->count.load(std::memory_order_acquire);
  const std::uint64_t base = r->base.load(std::memory_order_relaxed);
  s.lost += r->lost.load(std::memory_order_relaxed);
  r->lost.store(0, std::memory_order_relaxed);
  if (count == base) return;  // a thread that did nothing during the session
  SlotEvents se;
  se.thread.runtime = x.slot->group;
  se.thread.worker = x.slot->index;
  se.thread.name = x.name;
  if (auto it = group_names.find(x.slot->group); it != group_names.end()) se.thread.process = it->second;
  se.events.reserve(count - base);
  for (std::uint64_t k = base; k < count; ++k) se.events.push_back(r->events[k & r->mask]);
  s.slots.push_back(std::move(se));
}

// The counters of rt without a count (and why), the /proc notes and the
// column names, merged into the session's.
void note_counters(RuntimeCore* rt, Session& s) {
  counters::RunCounters* run = rt->counters.load(std::memory_order_acquire);
  if (!run) return;
  std::vector<counters::ThreadCounters*> threads;
  for (auto& t : run->workers) threads.push_back(t.get());
  for (auto& m : counters::missing_counters(threads, run->sets))
    if (std::find(s.counters_missing.begin(), s.counters_missing.end(), m) == s.counters_missing.end())
      s.counters_missing.push_back(m);
  for (auto& n : counters::fallback_notes(threads))
    if (std::find(s.counters_notes.begin(), s.counters_notes.end(), n) == s.counters_notes.end())
      s.counters_notes.push_back(n);
  s.counter_names.resize(counters::kNumCounters);
  for (int c = 0; c < counters::kNumCounters; ++c) {
    const std::string n = counters::column_name(c, threads);
    if (s.counter_names[c].empty() || n.back() == 'u') s.counter_names[c] = n;
  }
}

// Stops e's workers from recording and copies what they recorded.
void collect(RuntimeEntry& e, Session& s) {
  RuntimeCore* rt = e.rt;
  for (int i = 0; i < rt->num_slots; ++i) rt->slots[i]->trace.store(nullptr, std::memory_order_release);
  for (int i = 0; i < rt->num_slots && i < static_cast<int>(e.rings.size()); ++i) {
    TraceRing* r = e.rings[i].get();
    Worker* w = rt->slots[i];
    const std::uint64_t count = r->count.load(std::memory_order_acquire);
    const std::uint64_t base = r->base.load(std::memory_order_relaxed);
    s.lost += r->lost.load(std::memory_order_relaxed);
    r->lost.store(0, std::memory_order_relaxed);
    const bool extra = i >= rt->num_workers;
    if (extra && count == base) continue;  // an extra slot nobody used
    SlotEvents se;
    se.thread.runtime = e.id;
    se.thread.worker = i;
    se.thread.extra = extra;
    if (!extra) {
      const WorkerPlacement& p = rt->placement[i];
      se.thread.pu = p.pu;
      se.thread.pu_os = p.pu_os;
      se.thread.core = p.core;
      se.thread.numa = p.numa;
    }
    se.thread.bytes_local = w->bytes_local.load(std::memory_order_relaxed) - e.local0[i];
    se.thread.bytes_remote = w->bytes_remote.load(std::memory_order_relaxed) - e.remote0[i];
    if (!extra) se.thread.counters = counters::difference(worker_counters(rt, i), e.counters0[i]);
    se.events.reserve(count - base);
    for (std::uint64_t k = base; k < count; ++k) se.events.push_back(r->events[k & r->mask]);
    s.slots.push_back(std::move(se));
  }
  note_counters(rt, s);
}

// Turns the session's records into TraceData.
trace_impl::TraceData decode(Session& s, std::uint64_t tsc1, std::uint64_t ns1) {
  trace_impl::TraceData d;
  d.lost = s.lost;
  d.duration_ns = ns1 - s.ns0;
  d.buffer_events = s.buffer;
  d.counters_missing = s.counters_missing;
  d.counters_notes = s.counters_notes;
  d.counter_names = s.counter_names;
  if (d.counter_names.empty())
    for (int c = 0; c < counters::kNumCounters; ++c) d.counter_names.push_back(counters::counter_name(c));
  if (s.energy) {
    d.energy = s.energy->read();
    d.energy_source = s.energy->source();
    if (d.energy.empty()) d.energy_missing = s.energy->why_missing();
  }
  const double ns_per_tick =
      tsc1 > s.tsc0 ? static_cast<double>(ns1 - s.ns0) / static_cast<double>(tsc1 - s.tsc0) : 1.0;
  auto to_ns = [&](std::uint64_t t) {
    return static_cast<std::uint64_t>(static_cast<double>(t - s.tsc0) * ns_per_tick);
  };
  std::map<std::string, int> label_ids;
  std::map<std::uint64_t, int> label_of_pointer;
  trace_impl::CodeSymbols symbols;
  std::map<std::uint64_t, std::string> code_names;
  auto text_label = [&](const std::string& text) {
    auto [it, added] = label_ids.emplace(text, static_cast<int>(d.labels.size()));
    if (added) d.labels.push_back(text);
    return it->second;
  };
  auto code_name = [&](std::uint64_t addr) -> const std::string& {
    auto it = code_names.find(addr);
    if (it == code_names.end()) it = code_names.emplace(addr, symbols.name_of(addr)).first;
    return it->second;
  };
  auto label = [&](const char* pretty, std::uint64_t key) {
    if (auto it = label_of_pointer.find(key); it != label_of_pointer.end()) return it->second;
    const std::string text = trace_impl::label_text(pretty);
    auto [it, added] = label_ids.emplace(text, static_cast<int>(d.labels.size()));
    if (added) d.labels.push_back(text);
    label_of_pointer.emplace(key, it->second);
    return it->second;
  };
  auto add = [&](const TraceEvent& e, int thread) {
    // A record from before the session (written late by a worker that
    // loaded its ring pointer just before the previous session stopped).
    if (e.t0 < s.tsc0 || e.kind >= kTraceKinds) return;
    trace_impl::TraceRecord r;
    r.kind = static_cast<TraceKind>(e.kind);
    r.thread = thread;
    r.t0 = to_ns(e.t0);
    r.t1 = to_ns(std::max(e.t1, e.t0));
    r.a = e.a;
    r.b = e.b;
    r.c = e.c;
    r.d = e.d;
    if (r.kind == kTraceTask || r.kind == kTraceGraphTask) {
      r.label = label(reinterpret_cast<const char*>(e.a), e.a);
    } else if (r.kind == kTraceFlowTask) {
      // a: the task's FnOps, a constant of the program.
      r.label = label(reinterpret_cast<const flow::FnOps*>(e.a)->label(), e.a);
    } else if (r.kind == kTraceOmp) {
      // An explicit task is named by its function where a symbol names it.
      const std::string& fn = code_name(e.a);
      if (!fn.empty()) r.code = text_label(fn);
      r.label = r.d == kOmpTask && !fn.empty() ? r.code : text_label(trace_impl::omp_construct_name(r.d));
    }
    d.records.push_back(r);
  };
  std::sort(s.slots.begin(), s.slots.end(), [](const SlotEvents& x, const SlotEvents& y) {
    return std::tie(x.thread.runtime, x.thread.worker) < std::tie(y.thread.runtime, y.thread.worker);
  });
  for (const SlotEvents& se : s.slots) {
    const int t = static_cast<int>(d.threads.size());
    d.threads.push_back(se.thread);
    const std::size_t first = d.records.size();
    for (const TraceEvent& e : se.events) add(e, t);
    std::stable_sort(d.records.begin() + static_cast<std::ptrdiff_t>(first), d.records.end(),
                     // At one start time the longer (enclosing) span first: viewers nest in file order.
                     [](const trace_impl::TraceRecord& x, const trace_impl::TraceRecord& y) {
                       return x.t0 < y.t0 || (x.t0 == y.t0 && x.t1 > y.t1);
                     });
  }
  if (!s.outside.empty()) {
    const int t = static_cast<int>(d.threads.size());
    trace_impl::TraceThread outside;
    outside.runtime = 0;
    outside.worker = 0;
    d.threads.push_back(outside);
    for (const TraceEvent& e : s.outside) add(e, t);
  }
  return d;
}

void start_locked(State& st, const std::string& path, TraceFormat format, std::uint32_t kinds,
                  std::uint64_t buffer, bool from_env, unsigned counter_sets) {
  if (st.session)
    throw Error(fmt::format("trace: a session is already recording to '{}' (one at a time; trace_stop ends it)",
                            st.session->path),
                ErrorKind::BadInput);
  if (path.empty()) throw Error("trace: the file name is empty", ErrorKind::BadInput);
  auto s = std::make_unique<Session>();
  s->path = path;
  s->format = format_of(path, format);
  s->kinds = kinds;
  s->buffer = round_up_pow2(buffer);
  s->from_env = from_env;
  s->outside_capacity = s->buffer;
  s->counter_sets = counter_sets;
  if (counter_sets & (counters::kSetOs | counters::kSetHardware)) s->perf_warm = counters::perf_warm_up();
  if (counter_sets & counters::kSetEnergy) {
    s->energy = std::make_unique<counters::EnergyMeter>();
    s->energy->start(counters::current_probe().sysfs_root);
  }
  s->ns0 = now_ns();
  s->tsc0 = trace_clock();
  for (auto& e : st.runtimes) arm(*e, *s);
  for (auto& x : st.threads) arm_thread(*x, *s);
  st.session = std::move(s);
  st.active.store(true, std::memory_order_release);
}

TraceResult stop_locked(State& st) {
  if (!st.session) throw Error("trace_stop: no trace session is recording", ErrorKind::BadInput);
  std::unique_ptr<Session> s = std::move(st.session);
  st.active.store(false, std::memory_order_release);
  for (auto& e : st.runtimes) collect(*e, *s);
  for (auto& x : st.threads) collect_thread(*x, *s, st.group_names);
  // The time stamp counter's rate is measured over the session: give it a
  // few milliseconds at least.
  constexpr std::uint64_t kMinCalibrationNs = 5'000'000;
  const std::uint64_t elapsed = now_ns() - s->ns0;
  if (elapsed < kMinCalibrationNs) std::this_thread::sleep_for(std::chrono::nanoseconds(kMinCalibrationNs - elapsed));
  const std::uint64_t ns1 = now_ns();
  const std::uint64_t tsc1 = trace_clock();
  trace_impl::TraceData d = decode(*s, tsc1, ns1);
  if (s->format == TraceFormat::Otf2)
    trace_impl::write_otf2(s->path, d);
  else
    trace_impl::write_chrome_json(s->path, d);
  return TraceResult{s->path, static_cast<std::uint64_t>(d.records.size()), d.lost};
}

// At exit: the CANOPY_TRACE session's file.
void stop_at_exit() {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  if (!st.session || !st.session->from_env) return;
  const std::string path = st.session->path;
  try {
    const TraceResult r = stop_locked(st);
    if (r.lost > 0)
      std::fprintf(stderr,
                   "canopy: trace %s: %llu events lost (a worker's buffer was full; CANOPY_TRACE_BUFFER sets its "
                   "size)\n",
                   r.path.c_str(), static_cast<unsigned long long>(r.lost));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "canopy: trace %s: %s\n", path.c_str(), e.what());
  }
}

// CANOPY_TRACE and its companions, looked at once (the first runtime).
void start_from_env_once(State& st) {
  const char* path = env("CANOPY_TRACE");
  const char* fmt_v = env("CANOPY_TRACE_FORMAT");
  const char* events = env("CANOPY_TRACE_EVENTS");
  const char* buffer = env("CANOPY_TRACE_BUFFER");
  // Validated even without CANOPY_TRACE: a typo is an error, not ignored.
  const TraceFormat format = fmt_v ? parse_format(fmt_v) : TraceFormat::Auto;
  const std::uint32_t kinds = parse_events(events ? events : "", "CANOPY_TRACE_EVENTS");
  const std::uint64_t n = buffer ? parse_buffer(buffer) : kDefaultBufferEvents;
  const unsigned sets = counters::sets_from_env();
  if (!path || st.session) return;
  start_locked(st, path, format, kinds, n, true, sets);
  std::atexit(stop_at_exit);
}

// The CANOPY_TRACE variables, read by the first runtime or group that
// registers; a bad value is that one's error, and the next one reports it
// again (env_done stays false).
void start_from_env(State& st) {
  if (st.env_done) return;
  st.env_done = true;
  try {
    start_from_env_once(st);
  } catch (...) {
    st.env_done = false;
    throw;
  }
}

}  // namespace

void trace_attach(RuntimeCore* rt) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  start_from_env(st);
  auto e = std::make_unique<RuntimeEntry>();
  e->rt = rt;
  e->id = st.next_id++;
  if (st.session) arm(*e, *st.session);
  st.runtimes.push_back(std::move(e));
}

int trace_register_group(const char* name) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  start_from_env(st);
  const int id = st.next_id++;
  st.group_names[id] = name;
  return id;
}

void trace_register_thread(TraceThreadSlot* slot, int group, int index, const char* name) {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  slot->group = group;
  slot->index = index;
  auto x = std::make_unique<ExtThread>();
  x->slot = slot;
  x->name = name;
  if (st.session) arm_thread(*x, *st.session);
  st.threads.push_back(std::move(x));
}

void trace_detach(RuntimeCore* rt) noexcept {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  auto it = std::find_if(st.runtimes.begin(), st.runtimes.end(), [rt](const auto& e) { return e->rt == rt; });
  if (it == st.runtimes.end()) return;
  try {
    if (st.session) collect(**it, *st.session);
  } catch (...) {
    // Out of memory copying the events: they are lost with the runtime.
  }
  for (Worker* w : rt->slots) w->trace.store(nullptr, std::memory_order_relaxed);
  st.runtimes.erase(it);
}

void trace_outside(TraceKind kind, std::uint64_t a, std::uint64_t b, std::uint32_t c, std::uint16_t d) noexcept {
  State& st = state();
  if (!st.active.load(std::memory_order_acquire)) return;
  const std::uint64_t t = trace_clock();
  std::lock_guard<std::mutex> lock(st.mutex);
  Session* s = st.session.get();
  if (!s || (s->kinds & (1u << kind)) == 0) return;
  if (s->outside.size() >= s->outside_capacity) {
    ++s->lost;
    return;
  }
  try {
    s->outside.push_back(TraceEvent{t, t, a, b, c, d, kind, 0});
  } catch (...) {
    ++s->lost;
  }
}

void trace_event_anywhere(TraceKind kind, std::uint64_t a, std::uint64_t b, std::uint32_t c,
                          std::uint16_t d) noexcept {
  if (Worker* w = tls_worker) {
    if (TraceRing* r = trace_ring(w)) {
      const std::uint64_t t = trace_clock();
      trace_put(r, kind, t, t, a, b, c, d);
    }
    return;
  }
  trace_outside(kind, a, b, c, d);
}

}  // namespace detail

namespace trace_impl {
const char* kind_name(detail::TraceKind k) { return k < detail::kTraceKinds ? detail::kKindNames[k] : "?"; }

const char* omp_construct_name(unsigned construct) {
  static const char* const names[detail::kOmpConstructs] = {
      "parallel", "implicit task", "task", "barrier", "barrier (end of parallel)", "taskwait", "taskgroup"};
  return construct < detail::kOmpConstructs ? names[construct] : "omp ?";
}

const char* omp_construct_category(unsigned construct) {
  // Implicit and explicit tasks are tasks (the summary's busy time); the
  // waits are "omp,sync".
  static const char* const cats[detail::kOmpConstructs] = {"omp,parallel", "task,omp,implicit", "task,omp",
                                                           "omp,sync",     "omp,sync",          "omp,sync",
                                                           "omp,sync"};
  return construct < detail::kOmpConstructs ? cats[construct] : "omp";
}
}  // namespace trace_impl

void trace_start(const std::string& path, const TraceOptions& options) {
  using namespace detail;
  const std::uint32_t kinds = parse_events(options.events, "trace_start: events");
  std::uint64_t buffer = options.buffer_events;
  if (buffer == 0) {
    const char* v = env("CANOPY_TRACE_BUFFER");
    buffer = v ? parse_buffer(v) : kDefaultBufferEvents;
  } else if (buffer < kMinBufferEvents || buffer > kMaxBufferEvents) {
    throw Error(fmt::format("trace_start: buffer_events {}: expected {} to {}", buffer, kMinBufferEvents,
                            kMaxBufferEvents),
                ErrorKind::BadInput);
  }
  const unsigned sets = counters::sets_from_env();
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  start_locked(st, path, options.format, kinds, buffer, false, sets);
}

TraceResult trace_stop() {
  detail::State& st = detail::state();
  std::lock_guard<std::mutex> lock(st.mutex);
  return detail::stop_locked(st);
}

bool trace_active() { return detail::state().active.load(std::memory_order_acquire); }

}  // namespace canopy
