// Work-sharing constructs (see workshare.hpp). Ordered is a token passed in
// chunk order: the thread running chunk k may enter `ordered` when the turn
// is k, and passes the turn when it asks for its next chunk or leaves.
#include "workshare.hpp"

#include <algorithm>
#include <cstring>
#include <sched.h>

#include "futex.hpp"
#include "observe.hpp"
#include "tasks.hpp"

namespace canopy::omp {

namespace {

// The calling thread's next work-share slot; `init` runs in the first thread to arrive.
template <class Init>
WorkShare& ws_enter(ThreadState& ts, Init&& init) {
  Team& team = *ts.team;
  const long id = ts.ws_count++;
  WorkShare& w = team.ws[id % kWorkShareRing];
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(w.m);
      if (w.id == id) return w;
      if (w.id == -1 && w.next_id == id) {
        init(w);
        w.id = id;
        long started = team.ws_started.load(std::memory_order_relaxed);
        while (started < id + 1 && !team.ws_started.compare_exchange_weak(started, id + 1, std::memory_order_relaxed)) {
        }
        return w;
      }
    }
    sched_yield();  // the slot still serves a construct kWorkShareRing behind: wait for the slow threads
  }
}

void ws_leave(ThreadState& ts, WorkShare& w) {
  if (w.left.fetch_add(1, std::memory_order_acq_rel) + 1 == ts.team->nthreads) {
    std::lock_guard<std::mutex> lock(w.m);
    w.left.store(0, std::memory_order_relaxed);
    w.id = -1;
    w.next_id += kWorkShareRing;
  }
}

// The ordered turn. A thread waiting for turn `mine` polls, yields when
// oversubscribed (the thread holding the turn may need its CPU), then
// announces itself in ordered_sleepers and sleeps on the turn word with the
// bit of its turn; passing the turn makes a system call only when someone
// sleeps, and wakes only the sleepers of the new turn's bit (a thread per
// turn in a loop of chunks handed round the team, not every waiter). The
// seq_cst store of the turn and load of the count pair with the sleeper's
// seq_cst increment and load of the turn: one of them sees the other.
// (A futex wake-up per chunk, whether anyone slept or not, cost 190 ns per
// ordered iteration at one thread; sleeping at once when oversubscribed and
// waking every waiter, 23 us at 8 threads on 2 cores, libomp 2.5.)
std::uint32_t turn_bit(std::uint32_t turn) { return 1u << (turn % 32); }

[[gnu::noinline]] void wait_turn(WorkShare& w, std::uint32_t mine) {  // out of loop_next's common path
  WaitSteps steps(spin_budget());
  for (;;) {
    if (w.ordered_turn.load(std::memory_order_acquire) == mine) return;
    if (steps.step()) continue;
    w.ordered_sleepers.fetch_add(1, std::memory_order_seq_cst);
    const std::uint32_t now = w.ordered_turn.load(std::memory_order_seq_cst);
    if (now != mine) futex_wait_bits(w.ordered_turn, now, turn_bit(mine));
    w.ordered_sleepers.fetch_sub(1, std::memory_order_relaxed);
  }
}

void pass_ordered_token(LoopCursor& c) {
  if (!c.ordered || !c.has_chunk) return;
  WorkShare& w = *c.ws;
  const std::uint32_t mine = static_cast<std::uint32_t>(c.seq);
  wait_turn(w, mine);
  w.ordered_turn.store(mine + 1, std::memory_order_seq_cst);
  if (w.ordered_sleepers.load(std::memory_order_seq_cst) > 0) futex_wake_bits(w.ordered_turn, turn_bit(mine + 1));
  c.has_chunk = false;
}

}  // namespace

void runtime_schedule(int& kind, std::uint64_t& chunk) {
  const Schedule& s = current_icvs().run_sched;
  kind = s.kind == ScheduleKind::Auto ? 1 : static_cast<int>(s.kind);
  chunk = s.chunk > 0 ? static_cast<std::uint64_t>(s.chunk) : 0;
}

WorkShare& loop_enter(const LoopSpec& spec) {
  ThreadState& ts = this_thread();
  // Task reductions: every thread's work share runs in its own taskgroup;
  // the first thread allocates the private copies, the others share them.
  if (spec.reductions) {
    taskgroup_start();
    ts.task->group->workshare = true;
  }
  bool first = false;
  WorkShare& w = ws_enter(ts, [&](WorkShare& s) {
    first = true;
    s.task_reductions = spec.reductions;
    if (spec.reductions) task_reduction_register(spec.reductions);
    s.count = spec.count;
    s.kind = spec.kind == 4 ? 1 : spec.kind;
    s.work = spec.work;
    s.chunk = spec.chunk ? spec.chunk : (s.kind == 1 ? 0 : 1);
    s.chunks = s.chunk ? (s.count + s.chunk - 1) / s.chunk : 0;
    s.next.store(0, std::memory_order_relaxed);
    s.seq_handed = 0;
    s.ordered_turn.store(0, std::memory_order_relaxed);
    s.cancelled.store(false, std::memory_order_relaxed);
    s.mem.assign(spec.mem_size, 0);
    if (spec.ndims > 0) {
      s.dims.assign(spec.dims, spec.dims + spec.ndims);
      s.doacross.reset(new std::atomic<std::uint64_t>[std::max<std::uint64_t>(1, spec.dims[0])]);
      for (std::uint64_t i = 0; i < spec.dims[0]; ++i) s.doacross[i].store(0, std::memory_order_relaxed);
    } else {
      s.dims.clear();
    }
  });
  if (spec.reductions && !first) task_reduction_register(spec.reductions, w.task_reductions);
  ts.loop = LoopCursor{};
  ts.loop.ws = &w;
  ts.loop.ordered = spec.ordered && ts.team->nthreads > 1;  // one thread runs its chunks in order anyway
  ts.loop.base = spec.base;
  ts.loop.step = spec.step;
  if (observed(ts)) [[unlikely]] obs_work(ts, w.work, ompt_scope_begin, w.count);
  return w;
}

namespace {
// The next guided chunk (out of loop_next's common path: its lock and
// divisions would make every static and dynamic chunk pay a larger frame).
[[gnu::noinline]] bool guided_next(LoopCursor& c, WorkShare& w, std::uint64_t n, std::uint64_t& lo, std::uint64_t& hi) {
  if (c.ordered) {
    std::lock_guard<std::mutex> lock(w.handout);
    lo = w.next.load(std::memory_order_relaxed);
    if (lo >= w.count) return false;
    std::uint64_t size = std::max(w.chunk, (w.count - lo + n - 1) / n);
    hi = std::min(w.count, lo + size);
    w.next.store(hi, std::memory_order_relaxed);
    c.seq = w.seq_handed++;
    c.has_chunk = true;
    return true;
  }
  std::uint64_t cur = w.next.load(std::memory_order_relaxed);
  for (;;) {
    if (cur >= w.count) return false;
    std::uint64_t size = std::max(w.chunk, (w.count - cur + n - 1) / n);
    std::uint64_t end = std::min(w.count, cur + size);
    if (w.next.compare_exchange_weak(cur, end, std::memory_order_relaxed)) {
      lo = cur;
      hi = end;
      c.has_chunk = true;
      return true;
    }
  }
}

}  // namespace

bool loop_next(std::uint64_t& lo, std::uint64_t& hi) {
  ThreadState& ts = this_thread();
  LoopCursor& c = ts.loop;
  WorkShare& w = *c.ws;
  pass_ordered_token(c);
  const std::uint64_t n = static_cast<std::uint64_t>(ts.team->nthreads);
  const std::uint64_t me = static_cast<std::uint64_t>(ts.num);
  switch (w.kind) {
    case 1: {  // static
      if (w.chunk == 0) {
        if (c.static_next++ > 0) return false;
        const std::uint64_t q = w.count / n, r = w.count % n;
        lo = me * q + std::min(me, r);
        hi = lo + q + (me < r ? 1 : 0);
        c.seq = me;
      } else {
        const std::uint64_t idx = me + c.static_next++ * n;
        if (idx >= w.chunks) return false;
        lo = idx * w.chunk;
        hi = std::min(w.count, lo + w.chunk);
        c.seq = idx;
      }
      c.has_chunk = true;
      return lo < hi;
    }
    case 2: {  // dynamic
      if (w.next.load(std::memory_order_relaxed) >= w.count) return false;
      lo = w.next.fetch_add(w.chunk, std::memory_order_relaxed);
      if (lo >= w.count) return false;
      hi = std::min(w.count, lo + w.chunk);
      if (c.ordered) c.seq = lo / w.chunk;  // a division: only where the sequence is used
      c.has_chunk = true;
      return true;
    }
    default:
      return guided_next(c, w, n, lo, hi);
  }
}

void loop_leave() {
  ThreadState& ts = this_thread();
  LoopCursor& c = ts.loop;
  if (!c.ws) return;
  pass_ordered_token(c);
  WorkShare* w = c.ws;
  if (observed(ts)) [[unlikely]] obs_work(ts, w->work, ompt_scope_end, w->count);
  c = LoopCursor{};
  ws_leave(ts, *w);
}

void* loop_mem() {
  WorkShare* w = this_thread().loop.ws;
  return w && !w->mem.empty() ? w->mem.data() : nullptr;
}

void ordered_start() {
  LoopCursor& c = this_thread().loop;
  if (!c.ws || !c.ordered || !c.has_chunk) return;  // not in an ordered loop: nothing to order
  wait_turn(*c.ws, static_cast<std::uint32_t>(c.seq));
}

void ordered_end() {}

namespace {
std::uint64_t flatten_inner(const WorkShare& w, const std::uint64_t* idx) {
  std::uint64_t f = 0;
  for (std::size_t d = 1; d < w.dims.size(); ++d) f = f * w.dims[d] + idx[d];
  return f;
}
}  // namespace

// In a team of one, posts and waits do nothing: one thread runs the
// iterations in order, so every sink is complete before its wait (libomp's
// serialized teams skip them too; the libomp ABI's layer skips the whole
// doacross set-up there).
void doacross_post(const std::uint64_t* idx) {
  const ThreadState& ts = this_thread();
  WorkShare* w = ts.loop.ws;
  if (!w || w->dims.empty() || ts.team->nthreads == 1 || idx[0] >= w->dims[0]) return;
  std::uint64_t v = flatten_inner(*w, idx) + 1;
  std::atomic<std::uint64_t>& slot = w->doacross[idx[0]];
  std::uint64_t cur = slot.load(std::memory_order_relaxed);
  while (cur < v && !slot.compare_exchange_weak(cur, v, std::memory_order_release)) {
  }
}

void doacross_wait(const std::uint64_t* idx) {
  const ThreadState& ts = this_thread();
  WorkShare* w = ts.loop.ws;
  if (!w || w->dims.empty() || ts.team->nthreads == 1) return;
  for (std::size_t d = 0; d < w->dims.size(); ++d)
    if (idx[d] >= w->dims[d]) return;  // a sink outside the iteration space is ignored
  const std::uint64_t need = flatten_inner(*w, idx) + 1;
  int spins = spin_budget();
  while (w->doacross[idx[0]].load(std::memory_order_acquire) < need) {
    if (spins > 0) {
      --spins;
      cpu_relax();
    } else {
      sched_yield();
    }
  }
}

void scope_enter(std::uintptr_t* reductions) {
  if (!reductions) return;
  ThreadState& ts = this_thread();
  taskgroup_start();
  ts.task->group->workshare = true;
  bool first = false;
  WorkShare& w = ws_enter(ts, [&](WorkShare& s) {
    first = true;
    s.task_reductions = reductions;
    task_reduction_register(reductions);
  });
  if (!first) task_reduction_register(reductions, w.task_reductions);
  // The slot holds nothing else for the scope: leave it now (the first
  // thread's descriptor stays valid until every thread ends the scope).
  ws_leave(ts, w);
}

// Without a work-share slot (whose lock the threads of a team would contend
// for at every single): the team counts the singles claimed. A thread's k-th
// single is claimed by whoever moves the count from k-1 to k; a thread that
// arrives at its k-th single finds the count at k-1 (nobody took it yet) or
// at k or more (taken: any thread past it has claimed it or seen it claimed).
namespace {
bool claim_single(ThreadState& ts) {
  if (ts.team->nthreads == 1) return true;
  const long k = ++ts.single_count;
  long claimed = ts.team->singles_claimed.load(std::memory_order_relaxed);
  return claimed == k - 1 && ts.team->singles_claimed.compare_exchange_strong(claimed, k, std::memory_order_acq_rel);
}
}  // namespace

bool single_start() {
  ThreadState& ts = this_thread();
  const bool mine = claim_single(ts);
  if (observed(ts)) [[unlikely]] obs_single_start(ts, mine);
  return mine;
}

void* single_copy_start() {
  if (single_start()) return nullptr;
  team_barrier();
  return this_thread().team->copyprivate;
}

void single_copy_end(void* data) {
  single_end();
  this_thread().team->copyprivate = data;
  team_barrier();
}

}  // namespace canopy::omp
