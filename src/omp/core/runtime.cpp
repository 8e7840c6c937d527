// The process-wide runtime: settings and places at start-up, the thread
// pool (idle workers parked on a futex, reused across parallel regions),
// placement of a new team's threads, fork/join and the team barrier.
#include "runtime.hpp"
#include "one_runtime.hpp"

#include <canopy/binding.hpp>
#include <canopy/topology.hpp>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <pthread.h>
#include <sstream>

#include "futex.hpp"
#include "observe.hpp"
#include "tasks.hpp"
#include "workshare.hpp"

namespace canopy::omp {

[[noreturn]] void fatal(const char* fmt, ...) {
  std::va_list ap;
  va_start(ap, fmt);
  std::fputs("canopy-omp: ", stderr);
  std::vfprintf(stderr, fmt, ap);
  std::fputc('\n', stderr);
  va_end(ap);
  std::abort();
}

namespace {

Runtime* make_runtime() {
  auto* rt = new Runtime;  // never destroyed: workers may still run at exit
  const Topology* topo = nullptr;
  try {
    topo = &process_topology();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "canopy-omp: cannot read the machine's topology (%s); threads will not be bound\n", e.what());
  }
  std::ostringstream warnings;
  if (topo) {
    rt->settings = parse_settings(process_getenv(), *topo, warnings);
    rt->usable_pus = std::max(1, topo->num_pus());
    rt->num_cores = std::max(1, topo->num_cores());
    for (const CoreInfo& core : topo->cores()) {
      std::vector<int> cpus;
      for (int pu : core.pus) cpus.push_back(topo->pu(pu).os_index);
      std::sort(cpus.begin(), cpus.end());
      rt->places.push_back(cpus);
    }
  }
  std::cerr << warnings.str();
  const Settings& s = rt->settings;
  if (!s.places.empty()) {
    rt->places.clear();
    for (const Place& p : s.places) rt->places.push_back(p.os_cpus);
    rt->places_set = true;
  }
  Icvs& icvs = rt->initial_icvs;
  icvs.nthreads = s.num_threads.empty() ? rt->num_cores : s.num_threads.front();
  icvs.dynamic = s.dynamic;
  int levels = 1;
  if (s.nested.value_or(false)) levels = 255;
  levels = std::max<int>(levels, static_cast<int>(std::max(s.num_threads.size(), s.proc_bind.size())));
  icvs.max_active_levels = s.max_active_levels.value_or(levels);
  icvs.run_sched = s.run_sched;
  icvs.thread_limit = s.thread_limit;
  icvs.default_device = s.default_device;
  if (s.spin_count) rt->spin_count = static_cast<int>(std::min<std::uint64_t>(*s.spin_count, 1u << 30));
  if (s.wait_policy == WaitPolicy::Passive) rt->spin_count = 0;
  if (s.wait_policy == WaitPolicy::Active && !s.spin_count) rt->spin_count = 1 << 22;
  rt->settings.default_num_threads = rt->num_cores;  // canopy's default team: one thread per core
  refresh_wait_state(*rt);
  if (s.display_env) display_env(s, s.display_env_verbose, std::cerr);
  (void)affinity_settings();  // the CANOPY_* ones: a bad value stops the program now, not at its first task
  observe_init();
  return rt;
}

// initial-exec: every entry point reads it, and the default model for a
// shared library calls __tls_get_addr on each read (libgomp's own TLS is
// initial-exec too).
}  // namespace
__attribute__((tls_model("initial-exec"), visibility("hidden"))) constinit thread_local ThreadState* tls_thread =
    nullptr;  // runtime.hpp
namespace {

void init_implicit_task(ThreadState& ts, const Icvs& icvs, Team* team) {
  if (!ts.implicit) ts.implicit = std::make_unique<Task>();
  Task& t = *ts.implicit;
  t.icvs = icvs;
  t.parent = nullptr;
  t.team = team;
  t.group = nullptr;
  t.member_of = nullptr;
  t.implicit = true;
  t.id = next_task_id();  // a new implicit task: locks owned by the previous one are not its own
  t.final_task = false;
  t.children.store(0, std::memory_order_relaxed);
  t.refs.store(1, std::memory_order_relaxed);
  reset_task_deps(t);
  ts.task = &t;
}

void bind_to(ThreadState& ts, const std::vector<int>& cpus) {
  if (cpus.empty() || cpus == ts.bound_cpus) return;
  try {
    bind_current_thread(cpus);
    ts.bound_cpus = cpus;
  } catch (const std::exception& e) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) std::fprintf(stderr, "canopy-omp: cannot bind a thread (%s); continuing unbound\n", e.what());
  }
}

void* worker_main(void* arg);

ThreadState* new_worker() {
  check_one_runtime();  // a runtime dlopen'ed since the last check would get threads of its own too
  auto* ts = new ThreadState;
  ts->is_worker = true;
  Runtime& rt = runtime();
  rt.live_threads.fetch_add(1, std::memory_order_relaxed);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  if (rt.settings.stacksize) pthread_attr_setstacksize(&attr, rt.settings.stacksize);
  pthread_t th;
  int err = pthread_create(&th, &attr, worker_main, ts);
  pthread_attr_destroy(&attr);
  if (err) fatal("cannot create an OpenMP thread (pthread_create error %d)", err);
  pthread_detach(th);
  return ts;
}

// Where each thread of a new team goes: place index into `part` per thread
// (-1: unbound) and each thread's place partition.
struct Placement {
  std::vector<std::vector<int>> cpus;
  std::vector<PlaceList> partitions;
  std::vector<int> place_idx;
};

Placement place_team(const ThreadState& master, int n, ProcBind bind, bool canopy_default) {
  Placement out;
  out.cpus.resize(n);
  out.partitions.resize(n);
  out.place_idx.assign(n, -1);
  PlaceList part = master.partition;
  if (part.empty()) part = runtime().places;
  auto all_cpus = [](const PlaceList& places) {
    std::vector<int> cpus;
    for (const auto& p : places) cpus.insert(cpus.end(), p.begin(), p.end());
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
  };
  if (bind == ProcBind::False || part.empty()) {
    // Unbound: every CPU the process may use (a reused worker may have been bound before).
    std::vector<int> cpus = all_cpus(runtime().places);
    for (int i = 0; i < n; ++i) {
      out.partitions[i] = part;
      out.cpus[i] = cpus;
    }
    return out;
  }
  // canopy's default when the team has more threads than its partition has
  // places: no pinning inside the partition. Pinned oversubscribed threads
  // cannot move away from a busy CPU, and a barrier then waits for the
  // slowest CPU's queue (measured: 5-10x slower barriers on a loaded machine).
  if (canopy_default && n > static_cast<int>(part.size()) &&
      !(part.size() == 1 && static_cast<int>(part[0].size()) >= n)) {
    std::vector<int> cpus = all_cpus(part);
    for (int i = 0; i < n; ++i) {
      out.partitions[i] = part;
      out.cpus[i] = cpus;
    }
    return out;
  }
  int m = std::max(0, master.place);
  // canopy's default: a nested team inside one core spreads over that core's PUs.
  if (canopy_default && part.size() == 1 && part[0].size() > 1 && n > 1) {
    PlaceList pus;
    for (int cpu : part[0]) pus.push_back({cpu});
    part = pus;
    m = 0;
  }
  const int P = static_cast<int>(part.size());
  m %= P;
  for (int i = 0; i < n; ++i) {
    int idx;
    PlaceList sub;
    if (bind == ProcBind::Primary) {
      idx = m;
      sub = part;
    } else if (n > P) {
      idx = (m + static_cast<int>(static_cast<long>(i) * P / n)) % P;
      sub = bind == ProcBind::Close ? part : PlaceList{part[idx]};
    } else if (bind == ProcBind::Close) {
      idx = (m + i) % P;
      sub = part;
    } else {  // spread (and true, and canopy's default)
      int lo = static_cast<int>(static_cast<long>(i) * P / n), hi = static_cast<int>(static_cast<long>(i + 1) * P / n);
      idx = (m + lo) % P;
      for (int k = lo; k < hi; ++k) sub.push_back(part[(m + k) % P]);
    }
    out.cpus[i] = part[idx];
    // place index within the new partition
    out.partitions[i] = sub;
    out.place_idx[i] = static_cast<int>(std::find(sub.begin(), sub.end(), part[idx]) - sub.begin());
  }
  return out;
}

// The last placement computed at each nesting depth of this thread, with
// what it was computed from: a loop of parallel regions computes it once
// (place_team allocates a partition per thread).
struct PlacementMemo {
  bool valid = false;
  int n = 0;
  ProcBind bind = ProcBind::False;
  bool canopy_default = false;
  int master_place = -1;
  PlaceList master_partition;
  Placement placement;
};

// Saved state of the primary thread while it runs a nested team.
struct Saved {
  Team* team;
  int num;
  Task* task;
  long ws_count;
  long single_count;
  LoopCursor loop;
  PlaceList partition;
  int place;
  std::unique_ptr<Task> implicit;
  std::vector<int> bound_cpus;
};

}  // namespace

// Entries are kept when popped, so that a region reuses the previous one's
// buffers (partition, binding, implicit task) instead of allocating them
// again: saved[0, depth) is live.
struct ForkStack {
  std::vector<Saved> saved;
  std::size_t depth = 0;
  std::vector<std::unique_ptr<Task>> spare_implicit;  // per depth: the implicit task the last region there used
  std::vector<PlacementMemo> placements;              // per depth
  std::vector<ThreadState*> workers;                  // fork_start's scratch: the new team's workers
};

namespace {

ForkStack& fork_stack(ThreadState& ts) {
  if (!ts.fork_stack) ts.fork_stack = new ForkStack;
  return *ts.fork_stack;
}

const Placement& team_placement(ThreadState& master, std::size_t depth, int n, ProcBind bind, bool canopy_default) {
  std::vector<PlacementMemo>& memo = fork_stack(master).placements;
  if (memo.size() <= depth) memo.resize(depth + 1);
  PlacementMemo& m = memo[depth];
  if (!m.valid || m.n != n || m.bind != bind || m.canopy_default != canopy_default || m.master_place != master.place ||
      m.master_partition != master.partition) {
    m.placement = place_team(master, n, bind, canopy_default);
    m.n = n;
    m.bind = bind;
    m.canopy_default = canopy_default;
    m.master_place = master.place;
    m.master_partition = master.partition;
    m.valid = true;
  }
  return m.placement;
}

void run_implicit(ThreadState& ts) {
  Team& team = *ts.team;
  if (runtime().settings.display_affinity) display_affinity_if_changed(ts);
  if (team.has_initial_loop) loop_enter(team.initial_loop);
  team.fn(team.data);
}

// The join: the region's implicit barrier. Workers run the team's tasks
// until every thread has reached the end and no task is pending, then
// leave; the primary waits for them to leave. (Workers must not leave while
// the primary may still create tasks: GCC drops a single's barrier before
// the region's end, and a primary waiting in a taskgroup may need another
// thread to run a task that one of its group's tasks depends on.) A
// counter of its own, not the barrier's `arrived`, which a cancelled
// barrier may leave counted.
//
// Wake-ups are targeted, because with more threads than PUs every needless
// wake-up is a context switch:
// - A worker with nothing left to do parks: it sleeps on its own pool word
//   (ThreadState::wake), not on the team's event, holding the claim token
//   join_parked. Once every thread has arrived and no task is pending, the
//   primary claims the parked workers (counts them as left) and puts them
//   back in the pool without waking them: the next fork's wake-up is their
//   next one. A parked worker is woken (kWakeRecheck) only when a task
//   appears before the region is over (wake_team_waiters), as the team's
//   tasks may need it. Each worker thus sleeps once per region.
// - Workers that wait while tasks are pending sleep on the event word (the
//   task engine's sleepers protocol); only the last thread to arrive wakes
//   the sleepers, and only the last worker to leave by itself wakes the
//   primary.
// - The primary puts the workers back in the pool under one lock, rather
//   than each worker taking the pool's lock on its way out.
// Whoever clears join_parked (true -> false) owns the worker's next step:
// the worker itself (it found work or the end before sleeping), a task's
// wake-up, or the primary's claim.

// A thread's pool word (ThreadState::wake): the waker exchanges in the
// reason and makes the futex system call only if the thread announced it
// sleeps (kWakeSleeping), so waking a thread that is still spinning or
// yielding costs no system call.
void post_wake(ThreadState& w, std::uint32_t why) {
  if (w.wake.exchange(why, std::memory_order_acq_rel) == kWakeSleeping) futex_wake(w.wake, 1);
}

// Wait until the calling thread's pool word holds a reason (returned, left
// in the word): `spins` polls, then `yields` sched_yield calls, then sleep.
std::uint32_t wait_for_wake(ThreadState& ts, int spins, int yields) {
  for (;;) {
    std::uint32_t w = ts.wake.load(std::memory_order_acquire);
    if (w != 0 && w != kWakeSleeping) return w;
    if (spins > 0) {
      --spins;
      cpu_relax();
    } else if (yields > 0) {
      --yields;
      if (!yield_cpu()) yields = 0;
    } else if (w == kWakeSleeping || ts.wake.compare_exchange_strong(w, kWakeSleeping, std::memory_order_acq_rel)) {
      futex_wait(ts.wake, kWakeSleeping);
    }
  }
}

// Wake the threads sleeping on the team's event word (not the parked
// workers). Safe on a team its primary may already be reusing: it touches
// only the barrier's words.
void wake_event_sleepers(Team& team) {
  Barrier& b = team.barrier;
  b.event.fetch_add(1, std::memory_order_seq_cst);
  if (b.sleepers.load(std::memory_order_seq_cst) > 0) futex_wake(b.event, -1);
}

// The join's wake-ups (an arrival that completes the join, a worker's
// leaving): they follow a seq_cst change of join_arrived or left that
// sleep_at_join's ready() reads with seq_cst after announcing itself in
// `sleepers`, so when nobody sleeps the event word is left alone (no line
// taken from the other threads at every region's end).
void wake_join_sleepers(Team& team) {
  if (team.barrier.sleepers.load(std::memory_order_seq_cst) > 0) wake_event_sleepers(team);
}

// Sleep on the team's event word unless `ready()` or a task is queued; the
// sleepers/event protocol the task engine wakes (wake_team_waiters).
template <class Ready>
void sleep_at_join(Team& team, Ready&& ready) {
  Barrier& b = team.barrier;
  b.sleepers.fetch_add(1, std::memory_order_seq_cst);
  std::uint32_t ev = b.event.load(std::memory_order_seq_cst);
  if (!ready() && !team_has_ready_tasks(team)) futex_wait(b.event, ev);
  b.sleepers.fetch_sub(1, std::memory_order_relaxed);
}

// Park the calling worker until a task's wake-up (returns true: look for
// work again) or the primary's claim (returns false: the worker has left
// the team; its next wake-up is a fork's).
bool park_at_join(ThreadState& ts, Team& team, int n) {
  // The count first: it never falls below the number of tokens held, so a
  // count of 0 means no worker is parked (a token taken by a waker before
  // the count went up would make it 0 while another worker is parked).
  team.join_parked.fetch_add(1, std::memory_order_seq_cst);
  ts.join_parked.store(true, std::memory_order_seq_cst);
  std::atomic_thread_fence(std::memory_order_seq_cst);
  const bool finished = team.join_arrived.load(std::memory_order_seq_cst) == n && team_pending_tasks(team) == 0;
  if (finished || team_pending_tasks(team) > 0) {
    bool parked = true;
    if (ts.join_parked.compare_exchange_strong(parked, false, std::memory_order_acq_rel)) {
      team.join_parked.fetch_sub(1, std::memory_order_acq_rel);
      return true;
    }
  }
  // Oversubscribed, yield first: the next fork's or a task's wake-up then
  // finds this thread runnable instead of asleep on an idle CPU.
  if (wait_for_wake(ts, 0, yield_budget()) == kWakeRecheck) {
    ts.wake.store(0, std::memory_order_relaxed);
    return true;
  }
  return false;  // a fork's (or a retirement's) wake-up: worker_main handles it
}

// The end of an observed worker's implicit task (run_implicit_observed):
// recorded before the worker counts as having left, while its team and
// task are still its own (the primary may fork the next region at once).
struct ObservedJoin {
  std::uint64_t t0, tj;
  const void* code;
};
void observed_join_end(ThreadState& ts, const ObservedJoin& o);

// `obs` (the worker is observed): it does not park but sleeps on the
// team's event word and leaves by itself, recording its implicit task's
// end first (a parked worker learns that its region ended only at the
// next fork's wake-up, which may come after the trace was written).
void worker_join(ThreadState& ts, const ObservedJoin* obs = nullptr) {
  Team* team = ts.team;
  const int n = team->nthreads;
  if (team->join_arrived.fetch_add(1, std::memory_order_seq_cst) + 1 == n) wake_join_sleepers(*team);
  auto done = [&] {
    return team->join_arrived.load(std::memory_order_seq_cst) == n && team_pending_tasks(*team) == 0;
  };
  int spins = spin_budget();
  WaitSteps yields(0);  // its yield budget is asked for only when tasks keep it waiting
  for (;;) {
    if (run_one_task(*team)) continue;
    if (done()) break;
    if (spins > 0) {
      --spins;
      cpu_relax();
      continue;
    }
    if (team_pending_tasks(*team) > 0 || obs) {
      // Oversubscribed, yield first: a sleeper here makes every task the
      // other threads create wake it with a system call, and the task is
      // often run by its creator before the woken thread gets a CPU.
      if (!obs && yields.step()) continue;
      sleep_at_join(*team, done);
      continue;
    }
    if (!park_at_join(ts, *team, n)) return;  // claimed by the primary: it did the leaving
  }
  if (obs) [[unlikely]] observed_join_end(ts, *obs);
  ts.team = nullptr;
  ts.task = nullptr;
  // After this increment the team may be reused by its primary's next fork:
  // only the wake-up below touches it (teams are never freed; a stray
  // wake-up of the next region's sleepers is harmless).
  if (team->left.fetch_add(1, std::memory_order_seq_cst) + 1 == n - 1) wake_join_sleepers(*team);
}

// Clears worker w's join_parked token (true -> false) if it holds one: the
// caller then owns the worker's next step (see "Whoever clears join_parked").
bool take_join_token(Team& team, ThreadState& w) {
  bool parked = true;
  if (!w.join_parked.load(std::memory_order_seq_cst) ||
      !w.join_parked.compare_exchange_strong(parked, false, std::memory_order_acq_rel))
    return false;
  team.join_parked.fetch_sub(1, std::memory_order_acq_rel);
  return true;
}

// The primary's side of parking: once the region is over, every worker
// still holding its join_parked token has left (it sleeps on its pool word).
void claim_parked_workers(Team& team) {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (int i = 1; i < team.nthreads; ++i) {
    ThreadState* w = team.threads[i];
    if (take_join_token(team, *w)) {
      w->team = nullptr;
      w->task = nullptr;
      team.left.fetch_add(1, std::memory_order_acq_rel);
    }
  }
}

void primary_join(ThreadState& ts, Team& team) {
  const int n = team.nthreads;
  if (team.join_arrived.fetch_add(1, std::memory_order_seq_cst) + 1 == n && n > 1) wake_join_sleepers(team);
  const int workers = n - 1;
  auto over = [&] {
    return team.join_arrived.load(std::memory_order_seq_cst) == n && team_pending_tasks(team) == 0;
  };
  auto done = [&] { return team.left.load(std::memory_order_seq_cst) == workers && team_pending_tasks(team) == 0; };
  auto ready = [&] { return done() || (over() && team.join_parked.load(std::memory_order_seq_cst) > 0); };
  int spins = spin_budget(), yields = yield_budget();
  for (;;) {
    if (run_one_task(team)) continue;
    if (over() && team.join_parked.load(std::memory_order_seq_cst) > 0) claim_parked_workers(team);
    if (done()) break;
    if (spins > 0) {
      --spins;
      cpu_relax();
      continue;
    }
    if (yields > 0) {  // oversubscribed: let the workers that have yet to finish run
      --yields;
      if (!yield_cpu()) yields = 0;
      continue;
    }
    sleep_at_join(team, ready);
  }
  if (workers > 0) {
    Runtime& rt = runtime();
    std::lock_guard<std::mutex> lock(rt.pool_mutex);
    for (int i = 1; i < n; ++i) {
      ThreadState* w = team.threads[i];
      w->idle.store(true, std::memory_order_relaxed);
      rt.pool.push_back(w);
    }
    rt.idle_workers.fetch_add(workers, std::memory_order_relaxed);
    refresh_wait_state(rt);
  }
  (void)ts;
}

// Fork wake-ups go down a tree over the team's thread numbers: thread t
// wakes threads t*f+1 .. t*f+f (f = Team::fork_fanout), so the wake-ups of
// a large team are spread over the threads (and CPUs) already running
// instead of all made, one after another, by the primary. When the process
// is oversubscribed and the team's threads may all run on the same CPUs
// (canopy's default: oversubscribed teams are not pinned), the tree is a
// chain (f = 1): each woken thread wakes the next before it runs, so
// threads become runnable in the order they get a CPU, one at a time,
// rather than a burst of woken threads preempting their wakers (measured
// at 8 and 16 threads on 2 cores: 9 and 17 context switches per parallel
// region instead of 11 and 22). Threads pinned to different places keep
// the tree: a chain would leave the other places idle until the chain
// reached their threads (measured with OMP_PROC_BIND=close
// OMP_PLACES=cores: 10-20% slower regions). While oversubscribed threads
// yield instead of sleeping (yield_budget() > 0), a wake-up is a store
// that a yielding thread sees when it next gets a CPU, and a chain makes
// the fork wait for each thread's turn in order: there the primary wakes
// every worker itself (a store each, no system call), pinned or not, so
// whichever worker gets a CPU next finds its wake-up. Quiet 2-core machine, 8 / 16 threads,
// loops of 20,000 regions, after yielding stopped misfiring (184c995), per
// region: fanout 2: 8.5-19.5 / 27.5-42 us, 4: 9.5-17 / 24-42.5, 8: 9.5-10
// / 27.5-41.5, all: 7.5-10.5 / 15-24 (three interleaved rounds).
void wake_fork_children(Team& team, int t) {
  const int f = team.fork_fanout;
  for (int c = t * f + 1; c <= t * f + f && c < team.nthreads; ++c) {
    post_wake(*team.threads[c], kWakeRun);
  }
}

// A worker's implicit task with its events (the worker is observed).
[[gnu::noinline]] void run_implicit_observed(ThreadState& ts) {
  const std::uint64_t t0 = obs_now(ts);
  Team& team = *ts.team;
  const void* code = code_of(team.fn, team.data);
  obs_implicit_begin(ts, team);
  run_implicit(ts);
  obs_sync_begin(ts, ompt_sync_region_barrier_implicit_parallel, &team.ompt_parallel, &ts.task->ompt_task);
  const ObservedJoin o{t0, obs_now(ts), code};
  worker_join(ts, &o);
}

void observed_join_end(ThreadState& ts, const ObservedJoin& o) {
  obs_sync_end(ts, ompt_sync_region_barrier_implicit_parallel, nullptr, &ts.task->ompt_task);
  obs_span(ts, detail::kOmpJoinBarrier, o.tj);
  obs_implicit_end(ts, &ts.task->ompt_task, ts.num);
  obs_span(ts, detail::kOmpImplicitTask, o.t0, o.code);
}

// A woken worker's own part of the fork: its per-region counters and its
// implicit task, written here rather than by the primary so that they stay
// in this thread's cache.
void start_worker_region(ThreadState& ts) {
  ts.ws_count = 0;
  ts.single_count = 0;
  ts.loop = LoopCursor{};
  init_implicit_task(ts, ts.team->child_icvs, ts.team);
}

void* worker_main(void* arg) {
  auto* ts = static_cast<ThreadState*>(arg);
  tls_thread = ts;
  observe_thread(*ts, false);
  for (;;) {
    wait_for_wake(*ts, spin_budget(), yield_budget());
    ts->wake.store(0, std::memory_order_relaxed);
    if (ts->retire) {
      if (observed(*ts)) [[unlikely]] obs_thread_end(*ts);
      // Released by omp_pause_resource: out of the pool already. The
      // ThreadState stays allocated (other threads' last_workers may still
      // name it; they find it not idle and skip it).
      runtime().live_threads.fetch_sub(1, std::memory_order_relaxed);
      refresh_wait_state(runtime());
      return nullptr;
    }
    ts->team = ts->next_team;
    wake_fork_children(*ts->team, ts->num);
    start_worker_region(*ts);
    bind_to(*ts, ts->want_cpus);
    if (observed(*ts)) [[unlikely]] {
      run_implicit_observed(*ts);
      continue;
    }
    run_implicit(*ts);
    worker_join(*ts);
  }
  return nullptr;
}

// Stores only a value that differs: a team forked again and again with the
// same shape leaves the cache lines its workers read unwritten, so they stay
// shared instead of moving to the primary's cache and back at every fork
// (as libomp's hot teams do, KMP_CHECK_UPDATE).
template <class T>
void set_if_changed(T& field, const T& value) {
  if (!(field == value)) field = value;
}
template <class T>
void clear_if_set(std::atomic<T>& a) {
  if (a.load(std::memory_order_relaxed) != T{}) a.store(T{}, std::memory_order_relaxed);
}

void reset_team(Team& t, int n) {
  set_if_changed(t.nthreads, n);
  if (t.threads.size() != static_cast<std::size_t>(n)) t.threads.assign(n, nullptr);
  clear_if_set(t.barrier.arrived);
  clear_if_set(t.barrier.sleepers);
  t.left.store(0, std::memory_order_relaxed);
  t.join_arrived.store(0, std::memory_order_relaxed);
  clear_if_set(t.join_parked);
  // Only the slots the last region used (a region of one thread with no
  // work share pays nothing for the ring).
  const long used = std::min<long>(t.ws_started.load(std::memory_order_relaxed), kWorkShareRing);
  for (int k = 0; k < used; ++k) {
    t.ws[k].id = -1;
    t.ws[k].next_id = k;
    t.ws[k].left.store(0, std::memory_order_relaxed);
  }
  clear_if_set(t.ws_started);
  clear_if_set(t.singles_claimed);
  set_if_changed(t.copyprivate, static_cast<void*>(nullptr));
  clear_if_set(t.cancel_parallel);
  clear_if_set(t.cancel_static_loop);
  set_if_changed(t.has_initial_loop, false);
  ensure_task_queue(t);
}

// The calling thread's state in the enclosing team, kept while it leads a
// nested team or runs a target region as a new initial task. The thread's
// implicit task is left empty or a spare one, for init_implicit_task; its
// partition becomes `partition` (nullptr: stays as it is).
void push_saved(ThreadState& ts, const PlaceList* partition = nullptr) {
  ForkStack& fs = fork_stack(ts);
  if (fs.depth == fs.saved.size()) {
    fs.saved.emplace_back();
    fs.spare_implicit.emplace_back();
  }
  Saved& sv = fs.saved[fs.depth];
  sv.team = ts.team;
  sv.num = ts.num;
  sv.task = ts.task;
  sv.ws_count = ts.ws_count;
  sv.single_count = ts.single_count;
  sv.loop = ts.loop;
  sv.partition.swap(ts.partition);
  ts.partition = partition ? *partition : sv.partition;  // into the buffers the slot held: no allocation
  sv.place = ts.place;
  sv.implicit = std::move(ts.implicit);
  ts.implicit = std::move(fs.spare_implicit[fs.depth]);
  sv.bound_cpus = ts.bound_cpus;
  ++fs.depth;
}
// Restores what push_saved kept; returns the binding it had there (valid
// until the next push_saved).
const std::vector<int>& pop_saved(ThreadState& ts) {
  ForkStack& fs = *ts.fork_stack;
  Saved& sv = fs.saved[--fs.depth];
  ts.team = sv.team;
  ts.num = sv.num;
  ts.task = sv.task;
  ts.ws_count = sv.ws_count;
  ts.single_count = sv.single_count;
  ts.loop = sv.loop;
  ts.partition.swap(sv.partition);
  ts.place = sv.place;
  fs.spare_implicit[fs.depth] = std::move(ts.implicit);
  ts.implicit = std::move(sv.implicit);
  return sv.bound_cpus;
}

}  // namespace

Runtime& runtime() {
  static Runtime* rt = make_runtime();
  return *rt;
}

ThreadState& first_this_thread() {
  Runtime& rt = runtime();
  auto* ts = new ThreadState;  // lives as long as the process (threadprivate data may point here)
  tls_thread = ts;
  ts->own_team = std::make_unique<Team>();
  reset_team(*ts->own_team, 1);
  ts->own_team->threads[0] = ts;
  ts->team = ts->own_team.get();
  ts->partition = rt.places;
  init_implicit_task(*ts, rt.initial_icvs, ts->team);
  observe_thread(*ts, true);
  return *ts;
}

Icvs& current_icvs() { return this_thread().task->icvs; }

ThreadState* current_thread() noexcept { return tls_thread; }

void fork_start(void (*fn)(void*), void* data, unsigned requested, unsigned proc_bind_clause, const LoopSpec* loop,
                const void* codeptr) {
  Runtime& rt = runtime();
  ThreadState& ts = this_thread();
  Team& parent = *ts.team;
  const Icvs& picvs = ts.task->icvs;
  int n = requested ? static_cast<int>(requested) : picvs.nthreads;
  if (n < 1) n = 1;
  if (parent.active_level >= picvs.max_active_levels) n = 1;
  if (picvs.dynamic) n = std::min(n, rt.usable_pus);
  // Reserve the n - 1 workers against thread-limit-var (the initial thread
  // is the one thread outside the count): a compare-and-swap so that
  // threads forking nested regions at the same time share the limit. A
  // group without a limit counts nothing: its limit is set only when the
  // group starts (OMP_THREAD_LIMIT, a teams or target region's initial
  // task), before any of its regions, so no count is ever read there. (In
  // a loop of empty 2-thread regions, the locked add that counted them had
  // half of fork_start's perf samples: it waits for the fork's earlier
  // stores, some to lines the workers read in the last region.)
  int reserved = 0;
  if (picvs.thread_limit > 0) {
    std::atomic<int>& count = parent.group_root->busy_workers;
    int busy = count.load(std::memory_order_relaxed);
    for (;;) {
      reserved = std::max(0, std::min(n - 1, picvs.thread_limit - 1 - busy));
      if (count.compare_exchange_weak(busy, busy + reserved, std::memory_order_acq_rel)) break;
    }
    n = reserved + 1;
  }
  // Binding policy of the new team.
  const Settings& s = rt.settings;
  ProcBind bind;
  bool canopy_default = false;
  int child_bind_var = -1;
  if (!s.proc_bind.empty()) {
    bind = picvs.bind_var >= 0 ? static_cast<ProcBind>(picvs.bind_var)
                               : s.proc_bind[std::min<std::size_t>(picvs.bind_level, s.proc_bind.size() - 1)];
    if (bind != ProcBind::False && proc_bind_clause >= 2 && proc_bind_clause <= 4)
      bind = static_cast<ProcBind>(proc_bind_clause);
    // Past the end of the list, the new team's bind-var is the policy this
    // team used (a proc_bind clause included), as in libgomp: a nested
    // region inside proc_bind(spread) reports and inherits spread.
    if (static_cast<std::size_t>(picvs.bind_level) + 1 >= s.proc_bind.size()) child_bind_var = static_cast<int>(bind);
  } else if (rt.places_set) {
    bind = proc_bind_clause >= 2 && proc_bind_clause <= 4 ? static_cast<ProcBind>(proc_bind_clause) : ProcBind::True;
  } else {
    canopy_default = proc_bind_clause < 2 || proc_bind_clause > 4;
    bind = canopy_default ? ProcBind::Spread : static_cast<ProcBind>(proc_bind_clause);
  }
  if (bind == ProcBind::True) bind = ProcBind::Spread;

  const std::size_t depth = fork_stack(ts).depth;
  while (ts.forked_teams.size() <= depth) ts.forked_teams.push_back(std::make_unique<Team>());
  Team* team = ts.forked_teams[depth].get();
  reset_team(*team, n);
  set_if_changed(team->level, parent.level + 1);
  set_if_changed(team->active_level, parent.active_level + (n > 1 ? 1 : 0));
  set_if_changed(team->parent, &parent);
  set_if_changed(team->parent_thread_num, ts.num);
  set_if_changed(team->team_num, parent.team_num);
  set_if_changed(team->num_teams, parent.num_teams);
  set_if_changed(team->group_root, parent.group_root);
  set_if_changed(team->reserved_workers, reserved);
  set_if_changed(team->fn, fn);
  set_if_changed(team->data, data);
  if (observed(ts)) [[unlikely]]
    obs_parallel_begin(ts, *team, codeptr);  // before the workers start: they report this region
  else
    set_if_changed(team->obs_t0, std::uint64_t{0});
  if (loop) {
    team->has_initial_loop = true;
    team->initial_loop = *loop;
  }

  Icvs child = picvs;
  child.nthreads_level = picvs.nthreads_level + 1;
  if (child.nthreads_level < static_cast<int>(s.num_threads.size())) child.nthreads = s.num_threads[child.nthreads_level];
  child.bind_level = picvs.bind_level + 1;
  child.bind_var = child_bind_var;
  set_if_changed(team->child_icvs, child);

  static const Placement kUnplaced;
  const Placement& pl = (n > 1 || team->level == 1) ? team_placement(ts, depth, n, bind, canopy_default) : kUnplaced;

  // Save the primary thread's state (restored by join_end); its partition in the new team.
  push_saved(ts, pl.partitions.empty() ? nullptr : &pl.partitions[0]);

  // Workers: the ones this thread used last time first (they are warm and bound), then the pool.
  std::vector<ThreadState*>& workers = fork_stack(ts).workers;
  workers.assign(n > 0 ? n - 1 : 0, nullptr);
  if (n > 1) {
    std::lock_guard<std::mutex> lock(rt.pool_mutex);
    for (int i = 1; i < n; ++i) {
      if (i - 1 < static_cast<int>(ts.last_workers.size())) {
        ThreadState* w = ts.last_workers[i - 1];
        if (w->idle.load(std::memory_order_relaxed)) {
          auto it = std::find(rt.pool.begin(), rt.pool.end(), w);
          if (it != rt.pool.end()) {
            rt.pool.erase(it);
            w->idle.store(false, std::memory_order_relaxed);
            workers[i - 1] = w;
          }
        }
      }
    }
    for (int i = 1; i < n; ++i) {
      if (workers[i - 1]) continue;
      if (!rt.pool.empty()) {
        workers[i - 1] = rt.pool.back();
        rt.pool.pop_back();
        workers[i - 1]->idle.store(false, std::memory_order_relaxed);
      }
    }
  }
  int from_pool = 0;
  for (auto& w : workers) {
    if (w) ++from_pool;
    else w = new_worker();
  }
  if (from_pool) rt.idle_workers.fetch_sub(from_pool, std::memory_order_relaxed);
  if (n > 1) refresh_wait_state(rt);
  if (ts.last_workers != workers) ts.last_workers = workers;

  // Only what the worker cannot find in the team; it starts its implicit
  // task itself (start_worker_region). Unchanged fields are not written.
  set_if_changed(team->threads[0], &ts);
  for (int i = 1; i < n; ++i) {
    ThreadState* w = workers[i - 1];
    set_if_changed(team->threads[i], w);
    set_if_changed(w->next_team, team);
    set_if_changed(w->num, i);
    if (!pl.partitions.empty()) {
      set_if_changed(w->partition, pl.partitions[i]);
      set_if_changed(w->place, pl.place_idx[i]);
      set_if_changed(w->want_cpus, pl.cpus[i]);
    } else if (!w->want_cpus.empty()) {
      w->want_cpus.clear();
    }
  }
  if (n > 1 && !pl.cpus.empty()) set_task_placement(*team, pl.cpus);
  // All at once while yielding; else a chain only when the threads are not
  // pinned apart (see wake_fork_children).
  bool unpinned = true;
  for (int i = 1; i < n && unpinned && !pl.cpus.empty(); ++i) unpinned = pl.cpus[i] == pl.cpus[0];
  const bool yielding = oversubscribed() && yield_budget() > 0;
  set_if_changed(team->fork_fanout, yielding ? std::max(1, n - 1) : !oversubscribed() || !unpinned ? 2 : 1);
  wake_fork_children(*team, 0);
  ts.team = team;
  ts.num = 0;
  ts.ws_count = 0;
  ts.single_count = 0;
  ts.loop = LoopCursor{};
  if (!pl.partitions.empty()) {
    ts.place = pl.place_idx[0];
    bind_to(ts, pl.cpus[0]);
  }
  init_implicit_task(ts, child, team);
  if (observed(ts)) [[unlikely]] obs_implicit_begin(ts, *team);
  if (rt.settings.display_affinity) display_affinity_if_changed(ts);
  if (loop) loop_enter(*loop);
}

namespace {

void leave_team(ThreadState& ts, Team* team) {
  // reserved_workers stays as it is (the team's next fork sets it): a
  // store here would take a line the workers read back to this thread.
  if (team->reserved_workers) team->group_root->busy_workers.fetch_sub(team->reserved_workers, std::memory_order_acq_rel);
  const std::vector<int>& bound = pop_saved(ts);
  if (!bound.empty()) bind_to(ts, bound);  // back to the place it had in the enclosing team
}

// join_end with its events: the join barrier, the primary's implicit task
// and the region (both from the fork's time stamp).
[[gnu::noinline]] void join_end_observed(ThreadState& ts, Team* team) {
  const void* code = code_of(team->fn, team->data);
  ompt_data_t* task = &ts.task->ompt_task;
  obs_sync_begin(ts, ompt_sync_region_barrier_implicit_parallel, &team->ompt_parallel, task);
  const std::uint64_t tj = obs_now(ts);
  primary_join(ts, *team);
  obs_sync_end(ts, ompt_sync_region_barrier_implicit_parallel, &team->ompt_parallel, task);
  obs_span(ts, detail::kOmpJoinBarrier, tj);
  obs_implicit_end(ts, task, 0);
  obs_span(ts, detail::kOmpImplicitTask, team->obs_t0, code);
  const std::uint64_t t0 = team->obs_t0;
  leave_team(ts, team);
  obs_parallel_end(ts, *team, t0, code);
}

}  // namespace

void join_end() {
  ThreadState& ts = this_thread();
  Team* team = ts.team;
  if (observed(ts)) [[unlikely]] {
    join_end_observed(ts, team);
    return;
  }
  primary_join(ts, *team);
  leave_team(ts, team);
}

void fork_join(void (*fn)(void*), void* data, unsigned requested, unsigned proc_bind, const LoopSpec* loop,
               const void* codeptr) {
  fork_start(fn, data, requested, proc_bind, loop, codeptr);
  fn(data);
  join_end();
}

namespace {

bool barrier_wait(Team& team, bool cancellable) {
  Barrier& b = team.barrier;
  const std::uint32_t n = static_cast<std::uint32_t>(team.nthreads);
  if (n == 1) {
    while (team_pending_tasks(team) > 0)
      if (!run_one_task(team)) cpu_relax();
    if (team.cancel_static_loop.load(std::memory_order_relaxed)) team.cancel_static_loop.store(false, std::memory_order_relaxed);
    return cancellable && team.cancel_parallel.load();
  }
  const std::uint32_t gen = b.generation.load(std::memory_order_acquire);
  b.arrived.fetch_add(1, std::memory_order_acq_rel);
  int spins = spin_budget();
  int yields = yield_budget();
  for (;;) {
    if (b.generation.load(std::memory_order_acquire) != gen) break;
    if (cancellable && team.cancel_parallel.load(std::memory_order_relaxed)) return true;
    if (run_one_task(team)) continue;
    if (b.arrived.load(std::memory_order_acquire) == n && team_pending_tasks(team) == 0) {
      std::uint32_t expected = n;
      if (b.arrived.compare_exchange_strong(expected, 0, std::memory_order_acq_rel)) {
        if (team.cancel_static_loop.load(std::memory_order_relaxed))
          team.cancel_static_loop.store(false, std::memory_order_relaxed);
        b.generation.store(gen + 1, std::memory_order_release);
        b.event.fetch_add(1, std::memory_order_seq_cst);
        if (b.sleepers.load(std::memory_order_seq_cst) > 0) futex_wake(b.event, -1);
        break;
      }
      continue;
    }
    if (spins > 0) {
      --spins;
      cpu_relax();
      continue;
    }
    if (yields > 0) {  // oversubscribed: hand the CPU to a thread that has yet to arrive
      --yields;
      if (!yield_cpu()) yields = 0;
      continue;
    }
    b.sleepers.fetch_add(1, std::memory_order_seq_cst);
    std::uint32_t ev = b.event.load(std::memory_order_seq_cst);
    bool ready = b.generation.load(std::memory_order_acquire) != gen ||
                 (b.arrived.load() == n && team_pending_tasks(team) == 0) || team_has_ready_tasks(team) ||
                 (cancellable && team.cancel_parallel.load());
    if (!ready) futex_wait(b.event, ev);
    b.sleepers.fetch_sub(1, std::memory_order_relaxed);
  }
  return cancellable && team.cancel_parallel.load(std::memory_order_relaxed);
}

}  // namespace

int release_idle_workers() {
  Runtime& rt = runtime();
  std::vector<ThreadState*> released;
  {
    std::lock_guard<std::mutex> lock(rt.pool_mutex);
    released.swap(rt.pool);
    rt.idle_workers.fetch_sub(static_cast<int>(released.size()), std::memory_order_relaxed);
    refresh_wait_state(rt);
    for (ThreadState* w : released) {
      w->idle.store(false, std::memory_order_relaxed);
      w->retire = true;
    }
  }
  for (ThreadState* w : released) post_wake(*w, kWakeRun);
  this_thread().last_workers.clear();
  return static_cast<int>(released.size());
}

void wake_team_waiters(Team& team) {
  wake_event_sleepers(team);
  // Workers parked at the join (worker_join) come back for the new task.
  if (team.join_parked.load(std::memory_order_seq_cst) > 0 && team_pending_tasks(team) > 0) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    for (int i = 1; i < team.nthreads; ++i) {
      ThreadState* w = team.threads[i];
      if (take_join_token(team, *w)) post_wake(*w, kWakeRecheck);
    }
  }
}

void run_as_initial_task(void (*fn)(void*), void* data, int thread_limit) {
  ThreadState& ts = this_thread();
  push_saved(ts);
  const std::size_t depth = ts.fork_stack->depth - 1;
  while (ts.forked_teams.size() <= depth) ts.forked_teams.push_back(std::make_unique<Team>());
  Team* team = ts.forked_teams[depth].get();
  reset_team(*team, 1);
  team->level = 0;
  team->active_level = 0;
  team->parent = nullptr;
  team->team_num = 0;
  team->num_teams = 1;
  team->group_root = team;  // a target region's initial task starts a contention group
  team->busy_workers.store(0, std::memory_order_relaxed);
  team->reserved_workers = 0;
  team->threads[0] = &ts;
  ts.team = team;
  ts.num = 0;
  ts.ws_count = 0;
  ts.single_count = 0;
  ts.loop = LoopCursor{};
  init_implicit_task(ts, runtime().initial_icvs, team);
  if (thread_limit > 0) ts.task->icvs.thread_limit = thread_limit;
  fn(data);
  while (team_pending_tasks(*team) > 0)
    if (!run_one_task(*team)) cpu_relax();
  pop_saved(ts);
}

namespace {
// The ABI does not say whether a barrier is the construct or a work
// share's implicit one: OMPT hears the generic kind (ompt_sync_region_barrier).
constexpr auto kAnyBarrier = static_cast<ompt_sync_region_t>(1);
[[gnu::noinline]] bool barrier_observed(ThreadState& ts, bool cancellable) {
  Team& team = *ts.team;
  ompt_data_t* task = &ts.task->ompt_task;
  obs_sync_begin(ts, kAnyBarrier, &team.ompt_parallel, task);
  const std::uint64_t t0 = obs_now(ts);
  const bool cancelled = barrier_wait(team, cancellable);
  obs_span(ts, detail::kOmpBarrier, t0);
  obs_sync_end(ts, kAnyBarrier, &team.ompt_parallel, task);
  return cancelled;
}
}  // namespace

void team_barrier() {
  ThreadState& ts = this_thread();
  if (observed(ts)) [[unlikely]] {
    barrier_observed(ts, false);
    return;
  }
  barrier_wait(*ts.team, false);
}
bool team_barrier_cancellable() {
  ThreadState& ts = this_thread();
  if (observed(ts)) [[unlikely]] return barrier_observed(ts, true);
  return barrier_wait(*ts.team, true);
}

}  // namespace canopy::omp

// For canopy's profiling library (src/profile/preload/sampler.cpp), which
// calls it from its sampling signal handler to number each sample's thread
// as OpenMP does: the calling thread's number in its outermost enclosing
// parallel region (0 for an initial thread outside any), or -1 for an idle
// pool worker or a thread that never took part in OpenMP. Only reads this
// thread's own state, never creates it (no allocation, no lock).
extern "C" __attribute__((visibility("default"))) int canopy_omp_profile_thread_num() {
  using namespace canopy::omp;
  const ThreadState* ts = tls_thread;
  if (!ts || !ts->team || (ts->is_worker && ts->idle.load(std::memory_order_relaxed))) return -1;
  const Team* t = ts->team;
  int num = ts->num;
  while (t->level > 1 && t->parent) {
    num = t->parent_thread_num;
    t = t->parent;
  }
  return t->level == 0 ? 0 : num;
}
