// canopy::Runtime: building the workers (placement, victim lists), starting
// and binding their threads, letting outside threads in (slot 0 or an extra
// slot), and shutting down. The scheduling itself is in scheduler.cpp.
#include <fmt/format.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <latch>
#include <memory>
#include <ostream>
#include <sstream>

#include "canopy/binding.hpp"
#include "canopy/error.hpp"
#include "canopy/bubble.hpp"
#include "canopy/data.hpp"
#include "canopy/runtime.hpp"
#include "canopy/topology.hpp"
#include "canopy/detail/trace.hpp"
#include "canopy/trace.hpp"
#include "counters/run_counters.hpp"
#include "runtime/bubbles.hpp"
#include "runtime/runtime_core.hpp"

namespace canopy {

namespace detail {

namespace {

constexpr std::size_t kWorkerStackBytes = 16u << 20;  // deep fork-join recursion

pid_t this_tid() {
  static thread_local pid_t tid = static_cast<pid_t>(syscall(SYS_gettid));
  return tid;
}

struct ThreadStart {
  Worker* worker;
  std::vector<int> cpus;
  std::string error;
  std::latch* ready;
};

void* thread_entry(void* arg) {
  auto* s = static_cast<ThreadStart*>(arg);
  Worker* w = s->worker;
  char name[16];
  std::snprintf(name, sizeof name, "canopy-w%d", w->index);
  pthread_setname_np(pthread_self(), name);
  bool ok = true;
  if (!s->cpus.empty()) {
    try {
      bind_current_thread(s->cpus);
    } catch (const std::exception& e) {
      s->error = e.what();
      ok = false;
    }
  }
  w->rt->worker_tids[w->index] = this_tid();  // before the latch: read after ready.wait()
  s->ready->count_down();  // `s` may be gone after this
  if (ok) worker_main(w);
  finish_worker_counters(w);  // its /proc counts go away with the thread
  return nullptr;
}

void stop_threads(RuntimeCore* rt) {
  rt->stopping.store(true, std::memory_order_seq_cst);
  rt->notifier.notify_all();
  for (pthread_t t : rt->threads) pthread_join(t, nullptr);
  rt->threads.clear();
}

void destroy_core(RuntimeCore* rt) {
  // Mail nobody read: every group was waited for, so each proxy was claimed
  // through its deque copy; dropping the mailbox copy frees it.
  Worker* const prev = tls_worker;
  for (Worker* w : rt->slots) {
    tls_worker = w;
    while (ProxyHeader* p = w->mail_pending ? w->mail_pending
                                            : static_cast<ProxyHeader*>(w->mailbox.exchange(nullptr))) {
      w->mail_pending = p->mail_next;
      p->run(p, w);
    }
  }
  tls_worker = prev;
  for (Worker* w : rt->slots) delete w;
  delete rt;
}

// Binds the thread that just claimed slot 0, unless it is the one bound
// last time. The saved CPUs are written and read only by that thread.
void bind_slot0_thread(RuntimeCore* rt) {
  const std::vector<int>& cpus = rt->placement[0].cpus;
  if (cpus.empty() || rt->slot0_tid.load(std::memory_order_relaxed) == this_tid()) return;
  std::vector<int> saved = current_thread_binding();
  bind_current_thread(cpus);
  rt->slot0_saved_cpus = std::move(saved);
  rt->slot0_tid.store(this_tid(), std::memory_order_relaxed);
}

}  // namespace

RuntimeCore::~RuntimeCore() = default;

int num_workers(const RuntimeCore* rt) { return rt->num_workers; }

Worker* mail_target(Worker* w, int index) {
  RuntimeCore* rt = w->rt;
  if (index < 0 || index >= rt->num_slots || index == w->index) return nullptr;
  Worker* t = rt->slots[index];
  // Slots taken by outside threads may be empty; mail there would wait.
  if ((index == 0 || index >= rt->num_workers) && t->held.load(std::memory_order_relaxed) == 0) return nullptr;
  return t;
}

Worker* enter_runtime(RuntimeCore* rt, Worker** prev) {
  *prev = tls_worker;
  for (;;) {
    {
      std::uint32_t expected = 0;
      Worker* w = rt->slots[0];
      if (w->held.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
        try {
          bind_slot0_thread(rt);
        } catch (...) {
          w->held.store(0, std::memory_order_release);
          throw;
        }
        tls_worker = w;
        return w;
      }
    }
    for (int i = rt->num_workers; i < rt->num_slots; ++i) {
      std::uint32_t expected = 0;
      Worker* w = rt->slots[i];
      if (w->held.load(std::memory_order_relaxed) == 0 &&
          w->held.compare_exchange_strong(expected, 1, std::memory_order_acquire)) {
        rt->extras_held.fetch_add(1, std::memory_order_relaxed);
        tls_worker = w;
        return w;
      }
    }
    // Every slot is taken by another outside thread: wait for one.
    std::unique_lock<std::mutex> lock(rt->slot_mutex);
    rt->slot_cv.wait_for(lock, std::chrono::milliseconds(1));
  }
}

void leave_runtime(Worker* slot, Worker* prev) noexcept {
  RuntimeCore* rt = slot->rt;
  slot->pool.flush_remote();
  tls_worker = prev;
  if (slot->index >= rt->num_workers) rt->extras_held.fetch_sub(1, std::memory_order_relaxed);
  slot->held.store(0, std::memory_order_release);
  rt->slot_cv.notify_one();
}

RuntimeCore* default_core() { return default_runtime().core(); }

namespace {
// Set once default_runtime() has made its runtime.
std::atomic<RuntimeCore*> g_default_core{nullptr};
}  // namespace

RuntimeCore* default_core_if_any() { return g_default_core.load(std::memory_order_acquire); }

void throw_wrong_thread(const char* what) {
  throw Error(fmt::format("{}: called from a thread that may not use this task group (spawn: the thread that "
                          "created it or a task of its runtime; wait: the thread that created it)",
                          what),
              ErrorKind::BadInput);
}

void throw_bad_grain(std::int64_t grain) {
  throw Error(fmt::format("parallel loop grain {}: expected 0 (chosen by the runtime) or a positive size", grain));
}

}  // namespace detail

Runtime::Runtime() : Runtime(RuntimeOptions::from_env()) {}

Runtime::Runtime(const RuntimeOptions& options) : Runtime(options, process_topology()) {}

Runtime::Runtime(const RuntimeOptions& options, const Topology& topo) : core_(nullptr) {
  using namespace detail;
  if (!topo.is_this_machine() && options.bind != BindMode::None)
    throw Error(fmt::format("runtime on the machine '{}' with CANOPY_BIND={}: workers can only be bound on this "
                            "machine; use BindMode::None",
                            topo.source(), to_string(options.bind)),
                ErrorKind::BadInput);
  auto* rt = new RuntimeCore;
  try {
    rt->options = options;
    rt->topology = std::make_shared<const Topology>(topo);
    rt->placement = place_workers(topo, options);
    rt->num_workers = static_cast<int>(rt->placement.size());
    rt->num_slots = rt->num_workers + kExtraSlots;
    rt->counter_sets = counters::sets_from_env();  // CANOPY_COUNTERS: a bad value is this runtime's error
    rt->worker_tids.assign(rt->num_workers, 0);
    rt->worker_tids[0] = this_tid();
    for (int i = 0; i < rt->num_slots; ++i) {
      auto* w = new Worker;
      w->rt = rt;
      w->index = i;
      w->rng = 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(i + 1);
      rt->slots.push_back(w);
    }
    build_nodes(rt, topo);
    trace_attach(rt);  // CANOPY_TRACE, or a session running: rings for the slots
    std::vector<int> worker_pu;
    for (const WorkerPlacement& p : rt->placement) worker_pu.push_back(p.pu);
    rt->victims = build_victim_lists(topo, worker_pu);
    build_bubble_domains(rt, topo, worker_pu);
    // Extra slots steal from every worker, in index order.
    for (int i = rt->num_workers; i < rt->num_slots; ++i) {
      VictimList l;
      for (int j = 0; j < rt->num_workers; ++j) l.workers.push_back(j);
      l.group_end.push_back(rt->num_workers);
      l.group_level.push_back(0);
      l.group_class.push_back(kStealRemote);
      rt->victims.push_back(std::move(l));
    }
    std::vector<std::vector<std::uint8_t>> dist(rt->num_slots, std::vector<std::uint8_t>(rt->num_slots, 255));
    for (int i = 0; i < rt->num_workers; ++i)
      for (int j = 0; j < rt->num_workers; ++j)
        dist[i][j] = static_cast<std::uint8_t>(std::min(254, topo.distance(worker_pu[i], worker_pu[j])));
    rt->notifier.set_workers(rt->slots, std::move(dist));

    // Start workers 1..N-1; each binds itself, then reports.
    const int n = rt->num_workers;
    std::vector<ThreadStart> starts(n);
    std::latch ready(n - 1);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, kWorkerStackBytes);
    std::string error;
    int started = 0;
    for (int i = 1; i < n; ++i) {
      starts[i] = ThreadStart{rt->slots[i], rt->placement[i].cpus, {}, &ready};
      pthread_t t;
      if (int e = pthread_create(&t, &attr, &thread_entry, &starts[i]); e != 0) {
        error = fmt::format("cannot start worker thread {}: {}", i, std::strerror(e));
        break;
      }
      rt->threads.push_back(t);
      ++started;
    }
    pthread_attr_destroy(&attr);
    for (int i = started + 1; i < n; ++i) ready.count_down();  // never started
    ready.wait();
    for (int i = 1; i < n && error.empty(); ++i)
      if (!starts[i].error.empty())
        error = fmt::format("binding worker {} to CPUs {}: {}", i, Topology::cpuset_list_string(starts[i].cpus),
                            starts[i].error);
    if (!error.empty()) {
      stop_threads(rt);
      throw Error(error, ErrorKind::System);
    }
  } catch (...) {
    stop_threads(rt);
    trace_detach(rt);
    destroy_core(rt);
    throw;
  }
  core_ = rt;
  // Counters only when asked for (no cost otherwise): CANOPY_STATS, or a
  // trace session recording now (a later one opens them when it starts).
  {
    std::lock_guard<std::mutex> lock(rt->counters_mutex);
    rt->workers_known = true;
  }
  if (options.stats || trace_active()) open_run_counters(rt, options.stats);
  if (options.display_affinity) {
    char host[256] = "?";
    gethostname(host, sizeof host - 1);
    for (const WorkerPlacement& p : rt->placement)
      std::fprintf(stderr, "canopy: host %s worker %d pu L#%d (P#%d) core %d numa %d bound to %s%s\n", host,
                   p.worker, p.pu, p.pu_os, p.core, p.numa,
                   p.cpus.empty() ? "nothing" : Topology::cpuset_list_string(p.cpus).c_str(),
                   p.worker == 0 ? " (the thread that calls in)" : "");
  }
}

Runtime::~Runtime() {
  using namespace detail;
  RuntimeCore* rt = core_;
  stop_threads(rt);
  trace_detach(rt);  // the session keeps a copy of its events
  if (rt->options.stats) {
    std::ostringstream s;
    print_stats(s);
    std::fputs(s.str().c_str(), stderr);
  }
  if (rt->slot0_tid.load(std::memory_order_relaxed) == this_tid() && !rt->slot0_saved_cpus.empty()) {
    try {
      bind_current_thread(rt->slot0_saved_cpus);
    } catch (...) {
      // The thread's old CPUs are gone (cpuset changed): keep it where it is.
    }
  }
  destroy_core(rt);
}

int Runtime::num_workers() const { return core_->num_workers; }
int Runtime::num_numa_nodes() const { return detail::num_numa_nodes(core_); }
int Runtime::worker_numa_node(int worker) const {
  if (worker < 0 || worker >= core_->num_workers)
    throw Error(fmt::format("worker {}: expected 0 to {}", worker, core_->num_workers - 1), ErrorKind::BadInput);
  return core_->slots[worker]->numa_node;
}
const RuntimeOptions& Runtime::options() const { return core_->options; }
const std::vector<WorkerPlacement>& Runtime::placement() const { return core_->placement; }

std::vector<WorkerStats> Runtime::stats() const {
  std::vector<WorkerStats> out;
  auto get = [](const std::atomic<std::uint64_t>& a) { return a.load(std::memory_order_relaxed); };
  for (int i = 0; i < core_->num_workers; ++i) {
    const detail::Worker* w = core_->slots[i];
    WorkerStats s;
    s.tasks_run = w->tasks_run;
    s.steals_same_core = get(w->steals[detail::kStealSameCore]);
    s.steals_same_numa = get(w->steals[detail::kStealSameNuma]);
    s.steals_remote = get(w->steals[detail::kStealRemote]);
    s.failed_steal_rounds = get(w->failed_steal_rounds);
    s.parks = get(w->parks);
    s.parked_seconds = static_cast<double>(get(w->parked_ns)) * 1e-9;
    s.hinted_here = get(w->hinted_here);
    s.hinted_away = get(w->hinted_away);
    s.bytes_local = get(w->bytes_local);
    s.bytes_remote = get(w->bytes_remote);
    out.push_back(s);
  }
  // Outside threads in extra slots count with worker 0 (the caller's slot).
  for (int i = core_->num_workers; i < core_->num_slots; ++i) {
    const detail::Worker* w = core_->slots[i];
    WorkerStats& s = out[0];
    s.tasks_run += w->tasks_run;
    s.steals_remote += get(w->steals[detail::kStealRemote]);
    s.failed_steal_rounds += get(w->failed_steal_rounds);
    s.parks += get(w->parks);
    s.parked_seconds += static_cast<double>(get(w->parked_ns)) * 1e-9;
    s.hinted_here += get(w->hinted_here);
    s.hinted_away += get(w->hinted_away);
    s.bytes_local += get(w->bytes_local);
    s.bytes_remote += get(w->bytes_remote);
  }
  return out;
}

void Runtime::print_stats(std::ostream& out) const {
  const std::vector<WorkerStats> st = stats();
  out << fmt::format("canopy stats: {} workers\n", st.size());
  out << fmt::format("{:>6} {:>5} {:>12} {:>12} {:>12} {:>12} {:>8} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "worker",
                     "numa", "tasks", "steals.core", "steals.numa", "steals.remote", "parks", "parked.ms",
                     "hinted.here", "hinted.away", "local.MB", "remote.MB");
  for (std::size_t i = 0; i < st.size(); ++i)
    out << fmt::format(
        "{:>6} {:>5} {:>12} {:>12} {:>12} {:>12} {:>8} {:>12.1f} {:>12} {:>12} {:>12.1f} {:>12.1f}\n", i,
        core_->slots[i]->numa_node, st[i].tasks_run, st[i].steals_same_core, st[i].steals_same_numa,
        st[i].steals_remote, st[i].parks, st[i].parked_seconds * 1e3, st[i].hinted_here, st[i].hinted_away,
        static_cast<double>(st[i].bytes_local) / 1e6, static_cast<double>(st[i].bytes_remote) / 1e6);
  std::uint64_t local = 0, remote = 0;
  for (const WorkerStats& s : st) {
    local += s.bytes_local;
    remote += s.bytes_remote;
  }
  if (local + remote > 0)
    out << fmt::format("canopy stats: {:.1f}% of {:.1f} MB accessed on the worker's own NUMA node\n",
                       100.0 * static_cast<double>(local) / static_cast<double>(local + remote),
                       static_cast<double>(local + remote) / 1e6);
  // Process-wide (the data layer is shared by every runtime).
  const DataStats d = data_stats();
  if (d.looks + d.pages_migrated + d.pages_not_moved > 0)
    out << fmt::format(
        "canopy stats: data: {} first-touch handle locations learned ({} kernel looks), {:.1f} MB migrated ({} "
        "pages), {} pages the kernel did not move\n",
        d.learned, d.looks, static_cast<double>(d.bytes_migrated) / 1e6, d.pages_migrated, d.pages_not_moved);
  if (d.touch_claims > 0)
    out << fmt::format(
        "canopy stats: data: next-touch/next-write: {} marks claimed, {:.1f} MB migrated ({} pages), {} pages the "
        "kernel did not move\n",
        d.touch_claims, static_cast<double>(d.touch_bytes_migrated) / 1e6, d.touch_pages_migrated,
        d.touch_pages_not_moved);
  const MemorySchedulerStats m = memory_scheduler_stats();
  if (m.phases > 0) {
    auto share = [&](std::uint64_t x) {
      return m.bytes_attached ? 100.0 * static_cast<double>(x) / static_cast<double>(m.bytes_attached) : 100.0;
    };
    out << fmt::format(
        "canopy stats: memory scheduler: {} phases, {} groups ({} moved to their data), {:.1f}% -> {:.1f}% of "
        "{:.1f} MB attached local, {:.1f} MB migrated ({} pages, {} handles), {} pages the kernel did not move\n",
        m.phases, m.groups, m.groups_moved, share(m.bytes_local_before), share(m.bytes_local_after),
        static_cast<double>(m.bytes_attached) / 1e6, static_cast<double>(m.bytes_migrated) / 1e6, m.pages_migrated,
        m.handles_migrated, m.pages_not_moved);
    if (m.model_measured)
      out << fmt::format(
          "canopy stats: memory scheduler model: migration {:.1f} us per call + {:.3f} ns/B, local read {:.3f} ns/B\n",
          m.migrate_fixed_ns / 1e3, m.migrate_ns_per_byte, m.read_ns_per_byte);
  }
  detail::print_run_counters(core_, out);
}

int Runtime::this_worker_index() {
  detail::Worker* w = detail::tls_worker;
  return w ? w->index : -1;
}

Runtime& default_runtime() {
  static Runtime rt;
  static const bool published = (detail::g_default_core.store(rt.core(), std::memory_order_release), true);
  (void)published;
  return rt;
}

}  // namespace canopy
