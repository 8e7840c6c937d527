// The tasking engine (see tasks.hpp).
//
// Queues. Each thread of a team owns a Chase-Lev deque (task_deque.hpp):
// the tasks it creates, and the tasks its completions make ready, go to
// the bottom and it takes them back from there (LIFO, no lock); a thread
// without work steals the oldest task at the top of another thread's deque,
// trying the threads closest to it on the machine first (task_victims.hpp).
// Tasks with a priority above 0 go to the team's small locked `shared`
// queue instead, highest priority first, which every thread looks at before
// its deque (OpenMP: run higher-priority ready tasks first); so do tasks
// made ready by a thread outside the team (omp_fulfill_event from anywhere)
// and tasks a waiting thread stole but may not run (below).
//
// The wait rule. A thread waiting inside task P (taskwait, taskgroup end,
// an undeferred task waiting for its dependences or its detach event,
// taskyield) runs only descendants of P. That is OpenMP's tied-task
// scheduling constraint (every task runs tied in canopy: a task never
// moves to another thread), and it bounds the nesting of waits on one
// stack by the depth of the task tree (fib(25) nests 25 waits, not one per
// task run). The descendants are found cheaply: every task a thread pushed
// on its deque since P started there is a descendant of P (only P and its
// descendants ran on that thread since, and completions readied there are
// siblings of descendants), so P pops its own deque only above `P->mark`,
// the deque's bottom when P started. A task stolen from another deque is
// checked by walking its parent chain (safe: the thief owns it now and a
// task's ancestors outlive it); one that is not a descendant is moved to
// the team's shared queue, where a thread at a barrier takes it. Threads at
// a barrier or at the region's end (run_one_task) run any task.
//
// Sleeping. A thread that finds no task announces itself in the barrier's
// `sleepers`, reads the event word, looks for a task (and its condition)
// once more and sleeps on the event. Whoever pushes a task (a seq_cst store
// of its deque's bottom, or a seq_cst increment of the shared or affinity
// queues' count) or completes one does so with seq_cst operations, then
// reads `sleepers` and, only if someone sleeps, bumps the event and wakes:
// the Dekker pair that makes a lost wake-up impossible without a shared
// write per task. (There is no team-wide count of ready tasks: the looks
// read the deques themselves, ready_tasks_visible.)
#include "tasks.hpp"
#include "observe.hpp"
#include "ompt.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sched.h>
#include <unordered_map>

#include <canopy/binding.hpp>
#include <canopy/topology.hpp>

#include "futex.hpp"
#include "task_blocks.hpp"
#include "task_victims.hpp"

namespace canopy::omp {

namespace {

constexpr unsigned kFlagFinal = kTaskFlagFinal, kFlagDepend = kTaskFlagDepend, kFlagDetach = kTaskFlagDetach;
// Tasks a thread's deque may hold before the thread runs new ones at once.
constexpr std::int64_t kMaxQueued = 256;

void noop(void*) {}

const Topology* machine_topology() {
  static const Topology* topo = [] () -> const Topology* {
    try {
      return &process_topology();
    } catch (const std::exception&) {
      return nullptr;  // runtime.cpp already said so; steal in index order
    }
  }();
  return topo;
}

// Wake sleeping waiters of the team if there are any (after a seq_cst push
// or completion, see "Sleeping" above): threads asleep on the event word,
// and workers parked at the region's end (runtime.cpp's park_at_join, which
// announces itself in join_parked before it reads the pending count).
void wake_if_sleepers(Team& team) {
  if (team.barrier.sleepers.load(std::memory_order_seq_cst) > 0 ||
      team.join_parked.load(std::memory_order_seq_cst) > 0)
    wake_team_waiters(team);
}

// One more in a count that only its own thread writes: no read-modify-write
// needed, but a seq_cst store (the wake-up protocol pairs it with the
// waiters' seq_cst reads, as it did the shared count's fetch_add).
void count_one(std::atomic<std::int64_t>& c) {
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_seq_cst);
}

// Takes one unit off a count that holders only ever lower (a task's
// references, its completions left): whether it was the last. The holder of
// the last unit sees 1, and nobody else can change the count then, so it
// needs no locked read-modify-write (about 20 cycles each on x86, two per
// task: a tenth of a task's time at one thread).
bool drop_last(std::atomic<int>& count) {
  if (count.load(std::memory_order_acquire) == 1) {
    count.store(0, std::memory_order_release);  // for a waiter of 0 (detach)
    return true;
  }
  return count.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

void release(Task* t) {
  if (drop_last(t->refs) && !t->implicit) {
    if (DepNode* d = t->dep) {
      const std::uint8_t cls = d->block_class;
      d->~DepNode();
      task_block_free(d, cls);
    }
    delete t->child_deps;
    const bool own = t->own_block;
    const std::uint8_t size_class = t->block_class;
    t->~Task();
    if (own) task_block_free(t, size_class);
  }
}

bool is_descendant(const Task* t, const Task* ancestor) {
  const int d = ancestor->depth;
  while (t && t->depth > d) t = t->parent;
  return t == ancestor;
}

// Highest priority first, first come first served among equals.
void push_shared(TaskQueue& q, Task* t) {
  {
    std::lock_guard<std::mutex> lock(q.shared_m);
    auto it = std::find_if(q.shared.begin(), q.shared.end(), [&](Task* o) { return o->priority < t->priority; });
    q.shared.insert(it, t);
    q.shared_count.fetch_add(1, std::memory_order_seq_cst);
  }
}

// A task became ready. `ts`: the thread doing it when that thread is one of
// the team's (its deque), nullptr otherwise.
// A task with an affinity goes to its thread's queue or its node's (when
// the team has a thread there, and the machine more than one node); false:
// an ordinary task.
bool push_affine(TaskQueue& q, Team& team, Task* t) {
  AffineQueue* aq = nullptr;
  if (t->affinity_thread >= 0 && t->affinity_thread < team.nthreads)
    aq = q.thread_queues[t->affinity_thread].get();
  else if (t->affinity_node >= 0 && q.node_queues.size() > 1 &&
           static_cast<std::size_t>(t->affinity_node) < q.node_queues.size() && q.node_present[t->affinity_node])
    aq = q.node_queues[t->affinity_node].get();
  if (!aq) return false;
  {
    std::lock_guard<std::mutex> lock(aq->m);
    aq->tasks.push_back(t);
    aq->count.fetch_add(1, std::memory_order_relaxed);
  }
  q.affine_count.fetch_add(1, std::memory_order_seq_cst);
  return true;
}

void make_ready(ThreadState* ts, Task* t) {
  Team& team = *t->team;
  TaskQueue& q = *team.tasks;
  if (t->priority <= 0 && (t->affinity_node >= 0 || t->affinity_thread >= 0) && push_affine(q, team, t)) {
    // in its queue
  } else if (t->priority > 0 || !ts || ts->team != &team)
    push_shared(q, t);
  else
    q.deques[ts->num]->push(t);
  wake_if_sleepers(team);
}

Task* take_shared(TaskQueue& q, const Task* within) {
  if (q.shared_count.load(std::memory_order_seq_cst) == 0) return nullptr;
  std::lock_guard<std::mutex> lock(q.shared_m);
  auto it = q.shared.begin();
  if (within) it = std::find_if(q.shared.begin(), q.shared.end(), [&](const Task* c) { return is_descendant(c, within); });
  if (it == q.shared.end()) return nullptr;
  Task* t = *it;
  q.shared.erase(it);
  q.shared_count.fetch_sub(1, std::memory_order_relaxed);
  return t;
}

const std::vector<int>& victims_of(TaskQueue& q, int self) {
  TaskQueue::Victims& v = q.victims[self];
  if (v.epoch != q.epoch) {
    v.order = victim_order(machine_topology(), q.slot_pu, self);
    v.epoch = q.epoch;
  }
  return v.order;
}

// One ready task for thread `ts` of `team`, taken; `within`: only a descendant of that task (the wait rule).
// `may_steal` false: only the shared queue and the own deque; after a
// stolen task turned out not to be a descendant, `*rejected` is set and the
// search stops (the waiter backs off instead of draining other deques).
// Oldest task of an affinity queue (a descendant of `within` when given).
Task* take_affine(TaskQueue& q, AffineQueue& aq, const Task* within) {
  if (aq.count.load(std::memory_order_relaxed) == 0) return nullptr;
  std::lock_guard<std::mutex> lock(aq.m);
  auto it = aq.tasks.begin();
  if (within) it = std::find_if(aq.tasks.begin(), aq.tasks.end(), [&](const Task* c) { return is_descendant(c, within); });
  if (it == aq.tasks.end()) return nullptr;
  Task* t = *it;
  aq.tasks.erase(it);
  aq.count.fetch_sub(1, std::memory_order_relaxed);
  q.affine_count.fetch_sub(1, std::memory_order_relaxed);
  return t;
}

// Consecutive looks of this thread that found no task, and since when:
// how long it has been idle. Loose affinity lets a thread take another
// node's (or thread's) tasks once it has been idle for kLooseIdle and for
// twice the time a task with an affinity takes (the queue's running
// average): in a balanced program the task's own node takes it within
// about one task's time, when its threads finish what they run, so a
// thread of another node that steals sooner only moves work away from its
// data (numa-check's loose locality); a node that is really behind or
// descheduled leaves its tasks waiting longer, and those move. Strict
// never, except a thread waiting for its own descendants after
// kStrictWaitIdle looks (so that a wait cannot hang on tasks queued for a
// node whose threads all wait too).
thread_local int tls_idle_looks = 0;
thread_local std::chrono::steady_clock::time_point tls_idle_since;
constexpr int kStrictWaitIdle = 1 << 16;
constexpr std::chrono::microseconds kLooseIdle{200};

constexpr std::chrono::milliseconds kStrictWaitIdleTime{2};
// Another node's tasks (aimed at the node, or at one of its threads: under
// automatic affinity the pages a task writes are on its thread's node) wait
// this many times longer than the same node's before an idle thread takes
// them (4: in the 4-node VM, Jacobi with automatic affinity kept 80-88% of
// its bytes local after the mapping with 1, 89-91% with 4).
constexpr int kCrossNodeIdleFactor = 4;

bool idle_for_loose(const TaskQueue& q, int factor = 1) {
  const auto idle = std::chrono::steady_clock::now() - tls_idle_since;
  const std::chrono::nanoseconds task_time{2 * q.affine_run_ns.load(std::memory_order_relaxed)};
  return idle >= factor * kLooseIdle && idle >= factor * task_time;
}

// A waiting thread that may take its descendants from other affinity
// queues (strict: after kStrictWaitIdle looks or kStrictWaitIdleTime idle,
// so that a wait that sleeps between looks gets there too).
bool strict_wait_may_take() {
  return tls_idle_looks > kStrictWaitIdle ||
         (tls_idle_looks > 0 && std::chrono::steady_clock::now() - tls_idle_since >= kStrictWaitIdleTime);
}

// How long a waiter sleeps while affinity queues hold tasks: until the
// loose rule lets it take another thread's (strict: the wait rule's time).
std::int64_t affine_wait_ns(const TaskQueue& q) {
  if (affinity_settings().strict) return std::chrono::nanoseconds(kStrictWaitIdleTime).count();
  return std::max<std::int64_t>(std::chrono::nanoseconds(kLooseIdle).count(),
                                2 * q.affine_run_ns.load(std::memory_order_relaxed));
}

Task* find_affine(TaskQueue& q, ThreadState& ts, const Task* within) {
  const int me = ts.num;
  if (static_cast<std::size_t>(me) < q.thread_queues.size())
    if (Task* t = take_affine(q, *q.thread_queues[me], within)) return t;
  const int nodes = static_cast<int>(q.node_queues.size());
  const int mine = static_cast<std::size_t>(me) < q.slot_node.size() ? q.slot_node[me] : 0;
  if (nodes > 1)
    if (Task* t = take_affine(q, *q.node_queues[mine], within)) return t;
  const bool strict = affinity_settings().strict;
  if (strict ? !(within && strict_wait_may_take()) : tls_idle_looks == 0 || !idle_for_loose(q))
    return nullptr;
  // Idle long enough: the queues of the other threads of this thread's
  // node; idle kCrossNodeIdleFactor times longer, those of the threads of
  // other nodes, then the other nodes' queues (the next ones first).
  const std::size_t n = q.thread_queues.size();
  for (std::size_t k = 1; k < n; ++k) {
    const std::size_t other = (me + k) % n;
    if (other < q.slot_node.size() && q.slot_node[other] == mine)
      if (Task* t = take_affine(q, *q.thread_queues[other], within)) return t;
  }
  if (!strict && !idle_for_loose(q, kCrossNodeIdleFactor)) return nullptr;
  for (std::size_t k = 1; k < n; ++k) {
    const std::size_t other = (me + k) % n;
    if (other >= q.slot_node.size() || q.slot_node[other] != mine)
      if (Task* t = take_affine(q, *q.thread_queues[other], within)) return t;
  }
  for (int k = 1; k < nodes; ++k)
    if (Task* t = take_affine(q, *q.node_queues[(mine + k) % nodes], within)) return t;
  return nullptr;
}

// Stealing tiny tasks. Moving a task to another core costs both threads
// cache misses (the victim's deque, the parent's counts, the task's own
// lines: a few hundred ns on the 2-core development machine). When one
// thread creates tasks shorter than that and another steals each one as it
// appears, the creator pays those misses at every task and gets slower than
// it would be running them all itself (epcc's task-master at 2 threads:
// 0.29 us per task with the thief taking 85% of them, against 0.17 us when
// it takes 15%). So a thread whose stolen task ran (with its completion)
// in less than kTinySteal steals nothing for kStealPause: it still runs
// what its own deque and the shared and affinity queues hold, and the
// creator meanwhile runs its new tasks itself once its deque is full
// (kMaxQueued). Longer tasks are stolen as before.
constexpr std::chrono::nanoseconds kTinySteal{500};
constexpr std::chrono::nanoseconds kStealPause{1000};
__attribute__((tls_model("initial-exec"))) thread_local std::chrono::steady_clock::time_point tls_steal_paused_until{};
__attribute__((tls_model("initial-exec"))) thread_local bool tls_stole = false;  // find_task's task was stolen

bool steal_paused() {
  if (tls_steal_paused_until == std::chrono::steady_clock::time_point{}) return false;
  if (std::chrono::steady_clock::now() < tls_steal_paused_until) return true;
  tls_steal_paused_until = {};
  return false;
}

Task* find_task_anywhere(ThreadState& ts, Team& team, const Task* within, bool may_steal, bool* rejected);

Task* find_task(ThreadState& ts, Team& team, const Task* within, bool may_steal = true, bool* rejected = nullptr) {
  Task* t = find_task_anywhere(ts, team, within, may_steal, rejected);
  if (t) {
    tls_idle_looks = 0;
  } else if (tls_idle_looks <= kStrictWaitIdle) {
    if (tls_idle_looks++ == 0) tls_idle_since = std::chrono::steady_clock::now();
  }
  return t;
}

Task* find_task_anywhere(ThreadState& ts, Team& team, const Task* within, bool may_steal, bool* rejected) {
  TaskQueue& q = *team.tasks;
  if (q.affine_count.load(std::memory_order_seq_cst) > 0)
    if (Task* t = find_affine(q, ts, within)) return t;
  if (Task* t = take_shared(q, within)) return t;
  TaskDeque& mine = *q.deques[ts.num];
  if (!within || mine.bottom() > within->mark)
    if (Task* t = mine.pop()) return t;
  if (team.nthreads == 1 || !may_steal || steal_paused()) return nullptr;
  for (int v : victims_of(q, ts.num)) {
    Task* t = q.deques[v]->steal();
    if (!t) continue;
    if (!within || is_descendant(t, within)) {
      tls_stole = true;
      return t;
    }
    push_shared(q, t);  // not ours to run: for a thread at a barrier
    wake_if_sleepers(team);
    if (rejected) *rejected = true;
    return nullptr;
  }
  return nullptr;
}

void finish(ThreadState* ts, Task* t);

void execute_observed(ThreadState& ts, Task* t);

// The moving average of affine tasks' run times (1/8 of the new one; races
// between threads lose an update, which an average can afford).
void note_affine_run(Team& team, std::chrono::nanoseconds ran) {
  if (!team.tasks) return;
  std::atomic<std::int64_t>& avg = team.tasks->affine_run_ns;
  const std::int64_t old = avg.load(std::memory_order_relaxed);
  avg.store(old + (static_cast<std::int64_t>(ran.count()) - old) / 8, std::memory_order_relaxed);
}

void execute(ThreadState& ts, Task* t) {
  if (observed(ts)) [[unlikely]] {
    execute_observed(ts, t);
    return;
  }
  Task* prev = ts.task;
  ts.task = t;
  t->mark = ts.team == t->team ? t->team->tasks->deques[ts.num]->bottom() : 0;
  // A task of a cancelled taskgroup or parallel region is discarded, unless
  // its firstprivate copy constructors ran: it runs (as libgomp does) so
  // that the destructors in its body run too.
  const bool cancelled = !t->copied && ((t->member_of && t->member_of->is_cancelled()) ||
                                        t->team->cancel_parallel.load(std::memory_order_relaxed));
  if (!cancelled) {
    if (t->affinity_node >= 0 || t->affinity_thread >= 0) {
      const auto start = std::chrono::steady_clock::now();
      t->fn(t->arg);
      note_affine_run(*t->team, std::chrono::steady_clock::now() - start);
    } else {
      t->fn(t->arg);
    }
  }
  ts.task = prev;
  if (drop_last(t->completion_left)) finish(&ts, t);
}

// execute with the task's span (the trace labels it by its function).
[[gnu::noinline]] void execute_observed(ThreadState& ts, Task* t) {
  Task* prev = ts.task;
  ts.task = t;
  t->mark = ts.team == t->team ? t->team->tasks->deques[ts.num]->bottom() : 0;
  const bool cancelled = !t->copied && ((t->member_of && t->member_of->is_cancelled()) ||
                                        t->team->cancel_parallel.load(std::memory_order_relaxed));
  obs_task_switch(prev, t);
  if (!cancelled && t->fn != noop) {
    const std::uint64_t t0 = obs_now(ts);
    t->fn(t->arg);
    obs_span(ts, detail::kOmpTask, t0, code_of(t->fn, t->arg));
  }
  obs_task_done(t, cancelled ? ompt_task_cancel : obs_body_end_status(t), prev);
  ts.task = prev;
  if (drop_last(t->completion_left)) finish(&ts, t);
}

// Whether any queue of the team holds a ready task, the thread's own deque
// first (`self`; its lines are its own when it has tasks). seq_cst loads:
// they pair with the seq_cst push of a task (the deque's bottom, the shared
// and affinity counts) when a waiter checks after announcing itself as a
// sleeper (see "Sleeping" above).
bool ready_tasks_visible(Team& team, int self) {
  const TaskQueue& q = *team.tasks;
  if (!q.used.load(std::memory_order_seq_cst)) return false;  // nothing was queued since the fork
  const int n = std::min<int>(team.nthreads, static_cast<int>(q.deques.size()));
  if (self >= 0 && self < n && q.deques[self]->looks_nonempty()) return true;
  if (q.shared_count.load(std::memory_order_seq_cst) > 0 || q.affine_count.load(std::memory_order_seq_cst) > 0)
    return true;
  for (int i = 0; i < n; ++i)
    if (i != self && q.deques[i]->looks_nonempty()) return true;
  return false;
}

bool run_task_within(ThreadState& ts, Team& team, const Task* within, bool may_steal = true,
                     bool* rejected = nullptr) {
  if (!team.tasks || !ready_tasks_visible(team, ts.num)) return false;
  tls_stole = false;
  Task* t = find_task(ts, team, within, may_steal, rejected);
  if (!t) return false;
  if (!tls_stole) {
    execute(ts, t);
    return true;
  }
  const auto start = std::chrono::steady_clock::now();
  execute(ts, t);
  const auto end = std::chrono::steady_clock::now();
  static const bool nopause = getenv("NOPAUSE") != nullptr;
  if (!nopause && end - start < kTinySteal) tls_steal_paused_until = end + kStealPause;
  return true;
}

// Wait inside the current task until `done()`, running its descendants
// meanwhile (the wait rule), sleeping on the team's event word when there
// is nothing to run.
template <class Pred>
void help_until(Pred&& done) {
  ThreadState& ts = this_thread();
  Team& team = *ts.team;
  const Task* me = ts.task;
  Barrier& b = team.barrier;
  WaitSteps steps(spin_budget());
  // After stealing a task that was not a descendant, look only at the own
  // deque and the shared queue for a while.
  constexpr int kStealBackoff = 64;
  int no_steal = 0;
  for (;;) {
    if (done()) return;
    bool rejected = false;
    if (run_task_within(ts, team, me, no_steal == 0, &rejected)) continue;
    if (rejected) no_steal = kStealBackoff;
    else if (no_steal > 0) --no_steal;
    // Poll, and oversubscribed yield, before sleeping, as the barrier and
    // the join do: the task waited for is often running on a thread that
    // took it (one at the region's end steals it between its push and the
    // taskwait) and ends in a few microseconds; a sleeper here costs a
    // futex wait and a wake-up of every sleeper at each completion (one
    // task and a taskwait per thread and iteration, 16 threads on 2 cores:
    // 4.97 -> 3.18 us per iteration, libomp 3.06; docs/bench-omp.md).
    if (steps.step()) continue;
    // While stealing is paused (tiny stolen tasks), spin: the look before
    // sleeping below would not steal, and nothing would wake this thread
    // for a task already queued elsewhere.
    if (steal_paused()) {
      cpu_relax();
      continue;
    }
    b.sleepers.fetch_add(1, std::memory_order_seq_cst);
    std::uint32_t ev = b.event.load(std::memory_order_seq_cst);
    // A task pushed, or a completion, before `ev` was read is seen here; a
    // later one sees the sleeper and bumps the event.
    const bool ran = run_task_within(ts, team, me);
    if (!ran && !done()) {
      // Descendants of `me` may wait in another thread's (or node's)
      // affinity queue, whose threads may all be waiting too (several
      // threads creating tasks aimed at each other, as automatic affinity
      // does): no push or completion will come to wake this one, so it
      // wakes when the affinity rules let it take them (find_affine).
      if (team.tasks->affine_count.load(std::memory_order_relaxed) > 0)
        futex_wait_for(b.event, ev, affine_wait_ns(*team.tasks));
      else
        futex_wait(b.event, ev);
    }
    b.sleepers.fetch_sub(1, std::memory_order_relaxed);
  }
}

// The task's body has run and (if detached) its event is fulfilled. `ts`:
// the calling thread when it runs in the task's team (nullptr: an event
// fulfilled from elsewhere).
void finish(ThreadState* ts, Task* t) {
  Team& team = *t->team;
  TaskQueue& q = *team.tasks;
  Task* parent = t->parent;
  if (t->dep) {  // only a task with dependences is in the records or has successors
    SmallVec<Task*, 4> ready;
    {
      std::lock_guard<SpinMutex> lock(parent->child_deps->m);
      auto& map = parent->child_deps->map;
      for (void* addr : t->dep->addrs) {
        auto it = map.find(addr);
        if (it == map.end()) continue;
        DepRecord& rec = it->second;
        if (rec.last_out == t) rec.last_out = nullptr;
        rec.readers.erase(std::remove(rec.readers.begin(), rec.readers.end(), t), rec.readers.end());
        if (!rec.last_out && rec.readers.empty()) map.erase(it);
      }
      t->dep->completed = true;
      for (Task* s : t->dep->successors)
        if (s->dep->unresolved.fetch_sub(1, std::memory_order_seq_cst) == 1) ready.push_back(s);
      t->dep->successors.clear();
    }
    for (Task* s : ready) {
      if (s->undeferred)
        wake_if_sleepers(team);  // its creator waits for `unresolved`
      else
        make_ready(ts, s);
    }
  }
  // Order matters: the team's pending count goes last, because the join
  // (and so the end of the implicit parent task) waits for it. The
  // decrements are seq_cst: a waiter's sleep check pairs with the
  // `sleepers` read below.
  if (!t->counted) {  // an undeferred task without dependences: its creator was waiting, nobody else
    release(t);
    return;
  }
  if (t->member_of) t->member_of->pending.fetch_sub(1, std::memory_order_seq_cst);
  parent->children.fetch_sub(1, std::memory_order_seq_cst);
  if (!parent->implicit) release(parent);  // an implicit task is never freed here: no reference taken
  release(t);
  if (ts && ts->team == &team)
    count_one(q.counts[ts->num].finished);
  else
    q.finished_elsewhere.fetch_add(1, std::memory_order_seq_cst);
  wake_if_sleepers(team);
}

// The dependences of t, for an OMPT tool (out of line: observed only).
[[gnu::noinline]] void observe_dependences(Task* t, const DepList& deps) {
  std::vector<const void*> addrs;
  std::unique_ptr<bool[]> out(new bool[deps.size() + 1]);
  for (std::size_t i = 0; i < deps.size(); ++i) {
    addrs.push_back(deps[i].addr);
    out[i] = deps[i].out;
  }
  obs_dependences(t, addrs.data(), out.get(), static_cast<int>(deps.size()));
}

void parse_depend(void** d, DepList& deps) {
  std::uintptr_t n, nout, nmutex = 0, nin = 0;
  void** addrs;
  if (d[0]) {
    n = reinterpret_cast<std::uintptr_t>(d[0]);
    nout = reinterpret_cast<std::uintptr_t>(d[1]);
    nin = n - nout;
    addrs = d + 2;
  } else {
    n = reinterpret_cast<std::uintptr_t>(d[1]);
    nout = reinterpret_cast<std::uintptr_t>(d[2]);
    nmutex = reinterpret_cast<std::uintptr_t>(d[3]);
    nin = reinterpret_cast<std::uintptr_t>(d[4]);
    addrs = d + 5;
  }
  for (std::uintptr_t i = 0; i < n; ++i) {
    if (i < nout + nmutex) {
      deps.push_back({addrs[i], true});  // out, inout, mutexinoutset (serialised: correct, less parallel)
    } else if (i < nout + nmutex + nin) {
      deps.push_back({addrs[i], false});
    } else {  // depobj: {address, kind}; kind 1 is `in`, others (out, inout, mutexinoutset, inoutset) serialise
      void** obj = static_cast<void**>(addrs[i]);
      deps.push_back({obj[0], reinterpret_cast<std::uintptr_t>(obj[1]) != 1});
    }
  }
}

// The bytes of each depend item when the ABI gave them (kTaskFlagDependLen), else null.
const std::size_t* depend_lengths(const TaskSpec& spec) {
  if (!(spec.flags & kTaskFlagDependLen) || !spec.depend[0]) return nullptr;
  return reinterpret_cast<const std::size_t*>(spec.depend + 2 + reinterpret_cast<std::uintptr_t>(spec.depend[0]));
}

// Under the parent's ChildDeps mutex: link `t` after its predecessors among its siblings.
void register_deps_locked(ChildDeps& cd, Task* t, const DepList& deps) {
  DepNode& node = *t->dep;
  auto add_pred = [&](Task* p) {
    if (!p || p == t || p->dep->completed) return;
    p->dep->successors.push_back(t);
    node.unresolved.fetch_add(1, std::memory_order_relaxed);
  };
  for (const Dep& d : deps) {
    DepRecord& rec = cd.map[d.addr];
    if (d.out) {
      for (Task* r : rec.readers) add_pred(r);
      add_pred(rec.last_out);
      rec.last_out = t;
      rec.readers.clear();
    } else {
      add_pred(rec.last_out);
      rec.readers.push_back(t);
    }
    if (!node.addrs.contains(d.addr)) node.addrs.push_back(d.addr);
  }
}

DepNode* new_dep_node() {
  std::uint8_t size_class = 0;
  void* block = task_block_alloc(sizeof(DepNode), alignof(DepNode), &size_class);
  auto* d = new (block) DepNode;
  d->block_class = size_class;
  return d;
}

// A task and, when `data_size` > 0, room for its copy of the compiler's
// data right after it, in one block.
Task* new_task(long data_size, long data_align, char** data) {
  // Alignments are powers of two: a mask, not a 64-bit division (15% of
  // prepare_task's samples in perf record of fib at one thread).
  const std::size_t align = std::bit_ceil(std::max<std::size_t>(std::max<long>(data_align, 1), alignof(Task)));
  const std::size_t offset = (sizeof(Task) + align - 1) & ~(align - 1);
  std::size_t size = data_size > 0 ? offset + static_cast<std::size_t>(data_size) : sizeof(Task);
  std::uint8_t size_class = 0;
  void* block = task_block_alloc(size, align, &size_class);
  auto* t = new (block) Task;
  t->own_block = true;
  t->block_class = size_class;
  *data = data_size > 0 ? static_cast<char*>(block) + offset : nullptr;
  return t;
}

// A queue per node (only with several), and which nodes have a thread of the team.
void set_nodes_present(TaskQueue& q, int nodes) {
  if (nodes > 1)
    while (q.node_queues.size() < static_cast<std::size_t>(nodes)) q.node_queues.push_back(std::make_unique<AffineQueue>());
  q.node_present.assign(static_cast<std::size_t>(std::max(nodes, 1)), 0);
  for (int node : q.slot_node)
    if (node >= 0 && node < nodes) q.node_present[node] = 1;
}

}  // namespace

void reset_task_deps(Task& t) {
  delete t.child_deps;
  t.child_deps = nullptr;
}

void ensure_task_queue(Team& team) {
  if (!team.tasks) {
    team.tasks = std::make_unique<TaskQueue>();
    if (affinity_settings().auto_affinity) attach_depend_affinity(*team.tasks);
  }
  TaskQueue& q = *team.tasks;
  const std::size_t n = static_cast<std::size_t>(std::max(1, team.nthreads));
  while (q.deques.size() < n) q.deques.push_back(std::make_unique<TaskDeque>());
  q.counts.grow_to(n);
  // Quiescent, and no task pending (the join waited for them all): the
  // counts can start again from zero, so that team_pending_tasks reads
  // only this team size's slots (a slot beyond it may hold a count that
  // only the sum over all slots balances).
  if (q.counted_slots.load(std::memory_order_relaxed) != static_cast<int>(n)) {
    for (std::size_t i = 0; i < q.counts.size(); ++i) {
      q.counts[static_cast<int>(i)].created.store(0, std::memory_order_relaxed);
      q.counts[static_cast<int>(i)].finished.store(0, std::memory_order_relaxed);
    }
    q.finished_elsewhere.store(0, std::memory_order_relaxed);
    q.counted_slots.store(static_cast<int>(n), std::memory_order_release);
  }
  if (q.used.load(std::memory_order_relaxed)) q.used.store(false, std::memory_order_relaxed);
  if (q.victims.size() < n) q.victims.resize(n);
  while (q.thread_queues.size() < n) q.thread_queues.push_back(std::make_unique<AffineQueue>());
  if (q.slot_node.size() != n) {
    q.slot_node.assign(n, 0);
    // Pretend nodes (tests): thread i on node i mod n; real ones come with the placement.
    const int test = affinity_settings().test_nodes;
    if (test > 0)
      for (std::size_t i = 0; i < n; ++i) q.slot_node[i] = static_cast<int>(i % static_cast<std::size_t>(test));
    set_nodes_present(q, test > 0 ? test : 1);
  }
  // Quiescent: the previous region's threads have all left the team.
  for (auto& d : q.deques) d->free_retired();
  // The previous placement stays until set_task_placement changes it (a
  // stale one only changes the order in which victims are tried).
  if (q.slot_pu.size() != n) {
    q.slot_pu.resize(n, -1);
    q.slot_pinned.resize(n, 0);
    ++q.epoch;
  }
}

void set_task_placement(Team& team, const std::vector<std::vector<int>>& cpus_by_thread) {
  TaskQueue& q = *team.tasks;
  const Topology* topo = machine_topology();
  bool changed = false;
  for (std::size_t i = 0; i < q.slot_pu.size() && i < cpus_by_thread.size(); ++i) {
    const int pu = pu_of_cpus(topo, cpus_by_thread[i]);
    const char pinned = pinned_to_one_core(topo, cpus_by_thread[i]);
    if (pu != q.slot_pu[i] || pinned != q.slot_pinned[i]) {
      q.slot_pu[i] = pu;
      q.slot_pinned[i] = pinned;
      changed = true;
    }
  }
  if (!changed) return;
  ++q.epoch;
  if (affinity_settings().test_nodes > 0 || !topo) return;
  // Each thread's NUMA node (an unbound thread counts as node 0's).
  for (std::size_t i = 0; i < q.slot_node.size() && i < q.slot_pu.size(); ++i)
    q.slot_node[i] = q.slot_pu[i] >= 0 ? topo->pu(q.slot_pu[i]).numa : 0;
  set_nodes_present(q, std::max(1, topo->num_numa_nodes()));
}

// The finished counts first, then the created ones: every count only grows
// and a task is counted created before it can be counted finished, so
// between the two passes there was a moment when at least `finished` tasks
// had finished and at most `created` had been created; equal sums mean
// none was pending at that moment (and none can appear after it but from
// the threads that are waiting for this answer). A difference above 0 may
// be out of date, as a shared counter's value may.
bool team_has_ready_tasks(Team& team) { return team.tasks && ready_tasks_visible(team, -1); }

int count_pending_tasks(const TaskQueue& q) {
  const int slots = q.counted_slots.load(std::memory_order_acquire);  // then the array: at least that long
  TaskCounts* const* counts = q.counts.array();
  std::int64_t finished = q.finished_elsewhere.load(std::memory_order_seq_cst);
  for (int i = 0; i < slots; ++i) finished += counts[i]->finished.load(std::memory_order_seq_cst);
  std::int64_t created = 0;
  for (int i = 0; i < slots; ++i) created += counts[i]->created.load(std::memory_order_seq_cst);
  return static_cast<int>(created - finished);
}

bool run_one_task(Team& team) { return run_task_within(this_thread(), team, nullptr); }

namespace {

// The first half of task_create: the Task and its copy of the data, not
// yet visible to anyone.
Task* prepare_task(ThreadState& ts, const TaskSpec& spec, bool copy) {
  Team& team = *ts.team;
  Task* parent = ts.task;
  const bool detach = (spec.flags & kFlagDetach) != 0;
  char* storage = nullptr;
  Task* t = new_task(copy ? std::max<long>(spec.arg_size, spec.set_bounds ? 16 : 1) : 0, spec.arg_align, &storage);
  t->icvs = parent->icvs;
  t->parent = parent;
  t->depth = parent->depth + 1;
  t->team = &team;
  t->member_of = parent->group;
  t->group = parent->group;
  t->final_task = parent->final_task || (spec.flags & kFlagFinal);
  t->priority = spec.priority;
  t->fn = spec.fn;
  if (spec.fn != noop) take_next_task_affinity(t->affinity_node, t->affinity_thread);
  t->completion_left.store(detach ? 2 : 1, std::memory_order_relaxed);
  // The event handle goes where the detach argument points and into the
  // first word of the compiler's data (GCC puts the task's firstprivate
  // copy of the handle first), before the data is copied, as libgomp does.
  if (detach && spec.detach) {
    *static_cast<void**>(spec.detach) = t;
    if (spec.data) *static_cast<void**>(spec.data) = t;
  }
  if (copy) {
    if (spec.cpyfn) {
      spec.cpyfn(storage, spec.data);
      t->copied = true;
    } else if (spec.arg_size > 0 && spec.data) {
      std::memcpy(storage, spec.data, spec.arg_size);
    }
    if (spec.set_bounds) {
      std::memcpy(storage, &spec.lo, sizeof spec.lo);
      std::memcpy(storage + sizeof spec.lo, &spec.hi, sizeof spec.hi);
    }
    t->arg = storage;
  } else {
    t->arg = spec.data;
  }
  return t;
}

// The second half: run it now, or queue it (after its dependences).
// `undeferred`: the creator runs it (if(0), final, a team of one).
void submit_task(ThreadState& ts, Task* t, const TaskSpec& spec, bool undeferred) {
  Team& team = *ts.team;
  Task* parent = ts.task;
  const bool detach = (spec.flags & kFlagDetach) != 0;
  t->undeferred = undeferred;
  const bool has_deps = (spec.flags & kFlagDepend) && spec.depend &&
                        (team.nthreads > 1 || detach || parent->child_deps);  // task_dependences_matter
  // Throttle: a thread that already holds kMaxQueued tasks in its deque
  // runs a new plain task at once (its creator's child: allowed by the
  // wait rule) instead of queueing it, as libgomp does beyond 64 queued
  // tasks per thread and libomp when a deque is full. Memory stays bounded
  // when one thread creates a flood of tasks (bench/omp/taskmem.c).
  if (!t->undeferred && !has_deps && !detach && t->priority == 0 &&
      team.tasks->deques[ts.num]->holds_at_least(kMaxQueued))
    t->undeferred = true;
  if (t->undeferred && !has_deps && !detach) {
    // Fast path (if(0), final, a team of one): run now, no bookkeeping that
    // other threads could observe; the task object stays on the heap because
    // its own children point to it.
    t->counted = false;
    execute(ts, t);
    return;
  }
  if (!parent->implicit) parent->refs.fetch_add(1, std::memory_order_relaxed);
  parent->children.fetch_add(1, std::memory_order_relaxed);
  if (t->member_of) t->member_of->pending.fetch_add(1, std::memory_order_relaxed);
  TaskQueue& q = *team.tasks;
  if (!q.used.load(std::memory_order_relaxed)) q.used.store(true, std::memory_order_seq_cst);  // before the count
  count_one(q.counts[ts.num].created);  // seq_cst: pairs with park_at_join's read
  t->refs.fetch_add(1, std::memory_order_relaxed);  // held until the creator is done with it below
  bool ready = true;
  if (has_deps) {
    t->dep = new_dep_node();
    if (!parent->child_deps) parent->child_deps = new ChildDeps;  // only this thread creates parent's children
    DepList deps;
    parse_depend(spec.depend, deps);
    if (observed(ts)) [[unlikely]] observe_dependences(t, deps);
    if (team.tasks->depend_affinity && !t->undeferred) [[unlikely]]
      depend_affinity_task(team, t, deps.data(), deps.size(), depend_lengths(spec));
    std::lock_guard<SpinMutex> lock(parent->child_deps->m);
    register_deps_locked(*parent->child_deps, t, deps);
    ready = t->dep->unresolved.load(std::memory_order_relaxed) == 0;
  }
  if (t->undeferred) {
    if (has_deps) help_until([&] { return t->dep->unresolved.load(std::memory_order_acquire) == 0; });
    execute(ts, t);
    if (detach) help_until([&] { return t->completion_left.load(std::memory_order_acquire) == 0; });
  } else if (ready) {
    make_ready(&ts, t);
  }
  release(t);
}

// submit_task with the creation event first (the thread is observed); the
// callers test, so that submit_task itself is what it is untraced.
[[gnu::noinline]] void submit_task_observed(ThreadState& ts, Task* t, const TaskSpec& spec, bool undeferred) {
  const bool has_deps = (spec.flags & kFlagDepend) && spec.depend;
  obs_task_create(ts, t,
                  ompt_task_explicit | (undeferred ? int{ompt_task_undeferred} : 0) | (t->final_task ? int{ompt_task_final} : 0),
                  has_deps, spec.codeptr);
  submit_task(ts, t, spec, undeferred);
}

bool creation_cancelled(const ThreadState& ts) {
  // A cancelled parallel region or taskgroup starts no new task.
  return ts.team->cancel_parallel.load(std::memory_order_relaxed) ||
         (ts.task->group && ts.task->group->is_cancelled());
}

bool runs_undeferred(const ThreadState& ts, const TaskSpec& spec) {
  // A team of one runs tasks at once, except detached ones and, once a
  // detached sibling made dependences matter (child_deps), tasks with
  // dependences: their event may be fulfilled by a task created later, so
  // waiting for them (or for a task that depends on them) here could hang.
  const bool may_wait_on_event =
      (spec.flags & kFlagDetach) || ((spec.flags & kFlagDepend) && ts.task->child_deps != nullptr);
  return !spec.if_clause || ts.task->final_task || (ts.team->nthreads == 1 && !may_wait_on_event);
}

}  // namespace

void task_create(const TaskSpec& spec) {
  ThreadState& ts = this_thread();
  if (creation_cancelled(ts)) return;
  const bool undeferred = runs_undeferred(ts, spec);
  // An undeferred task without a copy constructor uses the creator's data
  // (the creator waits); any other task gets its own copy.
  const bool copy = !(undeferred && !spec.set_bounds && !spec.cpyfn);
  Task* t = prepare_task(ts, spec, copy);
  if (observed(ts)) [[unlikely]] {
    submit_task_observed(ts, t, spec, undeferred);
    return;
  }
  submit_task(ts, t, spec, undeferred);
}

Task* task_alloc(const TaskSpec& spec, void** data) {
  ThreadState& ts = this_thread();
  Task* t = prepare_task(ts, spec, true);
  *data = t->arg;
  return t;
}

void task_submit(Task* t, const TaskSpec& spec) {
  ThreadState& ts = this_thread();
  if (creation_cancelled(ts)) {
    release(t);  // never visible to anyone: freed here
    return;
  }
  if (observed(ts)) [[unlikely]] {
    submit_task_observed(ts, t, spec, runs_undeferred(ts, spec));
    return;
  }
  submit_task(ts, t, spec, runs_undeferred(ts, spec));
}

void task_discard(Task* t) { release(t); }

bool task_dependences_matter(bool detach) {
  const ThreadState& ts = this_thread();
  return ts.team->nthreads > 1 || detach || ts.task->child_deps;
}

void task_begin_inline(Task* t) {
  ThreadState& ts = this_thread();
  t->undeferred = true;
  t->counted = false;
  if (observed(ts)) [[unlikely]] {
    obs_task_create(ts, t, ompt_task_explicit | ompt_task_undeferred | (t->final_task ? int{ompt_task_final} : 0), false,
                    nullptr);
    obs_task_switch(ts.task, t);
  }
  ts.task = t;
  t->mark = ts.team == t->team ? t->team->tasks->deques[ts.num]->bottom() : 0;
}

void task_end_inline(Task* t) {
  ThreadState& ts = this_thread();
  if (observed(ts)) [[unlikely]]
    obs_task_done(t, obs_body_end_status(t), t->parent);
  ts.task = t->parent;
  if (drop_last(t->completion_left)) {
    finish(&ts, t);
    return;
  }
  // Detached: complete when its event is fulfilled; an undeferred task's creator waits for that.
  help_until([&] { return t->completion_left.load(std::memory_order_acquire) == 0; });
}

namespace {
[[gnu::noinline]] void taskwait_observed(ThreadState& ts) {
  Task* me = ts.task;
  obs_sync_begin(ts, ompt_sync_region_taskwait, &ts.team->ompt_parallel, &me->ompt_task);
  const std::uint64_t t0 = obs_now(ts);
  if (me->children.load(std::memory_order_acquire) != 0)
    help_until([&] { return me->children.load(std::memory_order_acquire) == 0; });
  obs_span(ts, detail::kOmpTaskwait, t0);
  obs_sync_end(ts, ompt_sync_region_taskwait, &ts.team->ompt_parallel, &me->ompt_task);
}
}  // namespace

void taskwait() {
  ThreadState& ts = this_thread();
  if (observed(ts)) [[unlikely]] {
    taskwait_observed(ts);
    return;
  }
  Task* me = ts.task;
  if (me->children.load(std::memory_order_acquire) == 0) return;
  help_until([&] { return me->children.load(std::memory_order_acquire) == 0; });
}

void taskwait_depend(void** depend) {
  TaskSpec spec;
  spec.fn = noop;
  spec.if_clause = false;
  spec.flags = kFlagDepend;
  spec.depend = depend;
  task_create(spec);
}

void taskyield() {
  ThreadState& ts = this_thread();
  run_task_within(ts, *ts.team, ts.task);
}

void taskgroup_start() {
  Task* me = this_thread().task;
  auto* g = new TaskGroup;
  g->outer = me->group;
  g->reductions = me->group ? me->group->reductions : nullptr;
  me->group = g;
}

void taskgroup_end() {
  ThreadState& ts = this_thread();
  Task* me = ts.task;
  TaskGroup* g = me->group;
  if (!g) return;
  if (observed(ts)) [[unlikely]] {
    obs_sync_begin(ts, ompt_sync_region_taskgroup, &ts.team->ompt_parallel, &me->ompt_task);
    const std::uint64_t t0 = obs_now(ts);
    help_until([&] { return g->pending.load(std::memory_order_acquire) == 0; });
    obs_span(ts, detail::kOmpTaskgroup, t0);
    obs_sync_end(ts, ompt_sync_region_taskgroup, &ts.team->ompt_parallel, &me->ompt_task);
  } else {
    help_until([&] { return g->pending.load(std::memory_order_acquire) == 0; });
  }
  me->group = g->outer;
  delete g;
}

void fulfill_event(void* event) {
  auto* t = static_cast<Task*>(event);
  if (!t) fatal("omp_fulfill_event: null event handle");
  // An OMPT tool hears whether the body had ended (late) or not (early);
  // the calling thread may be outside OpenMP, so the test is the tool's flag.
  if (ompt::active.load(std::memory_order_relaxed)) [[unlikely]] obs_task_fulfilled(t);
  // Readied successors go to the team's shared queue: this thread may be
  // running anything, anywhere (the wait rule's invariant on deques).
  if (drop_last(t->completion_left)) finish(nullptr, t);
}

bool in_final() { return this_thread().task->final_task; }

// Task reductions. The compiler's descriptor layout is described in
// tasks.hpp; the runtime's own lookup (original address -> item entry,
// including the enclosing groups' items) hangs off data[5] of the head array.
namespace {

using ReductionLookup = std::unordered_map<std::uintptr_t, std::uintptr_t*>;

constexpr std::size_t kRedHeader = 7, kRedItem = 3;

std::uintptr_t* red_item(std::uintptr_t* d, std::size_t j) { return d + kRedHeader + j * kRedItem; }

}  // namespace

void task_reduction_register(std::uintptr_t* data, std::uintptr_t* orig) {
  ThreadState& ts = this_thread();
  TaskGroup* g = ts.task->group;
  if (!g) fatal("task reduction registered outside a taskgroup (GOMP_taskgroup_reduction_register)");
  std::uintptr_t* old = g->reductions;
  const std::size_t nthreads = static_cast<std::size_t>(std::max(1, ts.team->nthreads));
  // Give every array of the chain its blocks of private copies, and chain the
  // last one to the enclosing registration.
  std::uintptr_t* d = data;
  for (;;) {
    if (orig) {  // a work share: the first thread allocated the blocks
      d[2] = orig[2];
      d[6] = orig[6];
      orig = reinterpret_cast<std::uintptr_t*>(orig[4]);
    } else {
      const std::size_t align = std::max<std::size_t>(d[2] ? d[2] : 1, alignof(std::max_align_t));
      std::size_t size = std::max<std::size_t>(d[1] * nthreads, 1);
      size = (size + align - 1) / align * align;
      void* blocks = std::aligned_alloc(align, size);
      if (!blocks) fatal("task reduction: cannot allocate %zu bytes of private copies", size);
      std::memset(blocks, 0, size);
      d[2] = reinterpret_cast<std::uintptr_t>(blocks);
      d[6] = d[2] + d[1] * nthreads;
    }
    d[5] = 0;
    if (d[4] == 0) {
      d[4] = reinterpret_cast<std::uintptr_t>(old);
      break;
    }
    d = reinterpret_cast<std::uintptr_t*>(d[4]);
  }
  auto* lookup = new ReductionLookup;
  if (old && old[5]) *lookup = *reinterpret_cast<ReductionLookup*>(old[5]);
  for (d = data;;) {
    for (std::size_t j = 0; j < d[0]; ++j) {
      std::uintptr_t* item = red_item(d, j);
      item[2] = reinterpret_cast<std::uintptr_t>(d);
      (*lookup)[item[0]] = item;
    }
    if (d[4] == reinterpret_cast<std::uintptr_t>(old)) break;
    d = reinterpret_cast<std::uintptr_t*>(d[4]);
  }
  data[5] = reinterpret_cast<std::uintptr_t>(lookup);
  g->reductions = data;
}

void task_reduction_unregister(std::uintptr_t* data, bool free_blocks) {
  if (!data) return;
  delete reinterpret_cast<ReductionLookup*>(data[5]);
  data[5] = 0;
  if (!free_blocks) return;
  // The arrays of this registration are chained up to the enclosing one,
  // whose head carries its own lookup (data[5] != 0).
  std::uintptr_t* d = data;
  do {
    std::free(reinterpret_cast<void*>(d[2]));
    d = reinterpret_cast<std::uintptr_t*>(d[4]);
  } while (d && !d[5]);
}

void task_reduction_remap(std::size_t cnt, std::size_t cntorig, void** ptrs) {
  ThreadState& ts = this_thread();
  TaskGroup* g = ts.task->group;
  std::uintptr_t* data = g ? g->reductions : nullptr;
  if (!data) fatal("in_reduction without an enclosing task_reduction (GOMP_task_reduction_remap)");
  const std::uintptr_t id = static_cast<std::uintptr_t>(ts.num);
  const auto* lookup = reinterpret_cast<const ReductionLookup*>(data[5]);
  for (std::size_t i = 0; i < cnt; ++i) {
    const std::uintptr_t addr = reinterpret_cast<std::uintptr_t>(ptrs[i]);
    if (lookup) {
      auto it = lookup->find(addr);
      if (it != lookup->end()) {
        std::uintptr_t* item = it->second;
        auto* d = reinterpret_cast<std::uintptr_t*>(item[2]);
        ptrs[i] = reinterpret_cast<void*>(d[2] + id * d[1] + item[1]);
        if (i < cntorig) ptrs[cnt + i] = reinterpret_cast<void*>(item[0]);
        continue;
      }
    }
    // Not an original item: an address inside some thread's private copies
    // (a task nested in a task that already remapped it).
    std::uintptr_t* d = data;
    while (d && !(addr >= d[2] && addr < d[6])) d = reinterpret_cast<std::uintptr_t*>(d[4]);
    if (!d) fatal("no task_reduction or task-modifier reduction matches the in_reduction item at %p", ptrs[i]);
    const std::uintptr_t off = (addr - d[2]) % d[1];
    ptrs[i] = reinterpret_cast<void*>(d[2] + id * d[1] + off);
    if (i < cntorig) {
      bool found = false;
      for (std::size_t j = 0; j < d[0]; ++j) {
        if (red_item(d, j)[1] == off) {
          ptrs[cnt + i] = reinterpret_cast<void*>(red_item(d, j)[0]);
          found = true;
          break;
        }
      }
      if (!found) fatal("no task_reduction item at offset %zu matches the in_reduction item at %p", static_cast<std::size_t>(off), ptrs[i]);
    }
  }
}

void workshare_task_reduction_end(bool cancelled) {
  ThreadState& ts = this_thread();
  TaskGroup* g = ts.task->group;
  std::uintptr_t* data = g ? g->reductions : nullptr;
  taskgroup_end();
  task_reduction_unregister(data, ts.num == 0);
  if (!cancelled) team_barrier();
}

}  // namespace canopy::omp
