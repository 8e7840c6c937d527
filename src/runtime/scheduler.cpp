// The scheduler: what a worker does when its own deque is empty. Workers
// look in their mailbox (affinity proxies), then, once any task with an
// affinity hint was queued, in their own and their node's affinity queues
// (affinity.cpp), then steal along their victim list (closest first), then
// take loose hinted tasks queued for others (of its node after searching in
// vain for kLooseDelayNs, so that a target woken for them gets them first;
// of other nodes after kRemoteLooseDelayNs, and a node's own loose queue
// only while that node is overloaded: node_may_lend in affine.hpp, fed by
// the run times of hinted tasks measured here); they search for a while
// (spin), then park through the notifier. A worker waiting for stolen tasks
// of its group does the same, except that it stops as soon as the group is
// complete.
//
// Invariants:
//  - a worker executes a task only after taking it exactly once (pop, steal
//    CAS, or a proxy claim), and the task counts itself for its group
//    exactly once: --pending when the group's owner ran a task it spawned,
//    otherwise complete_remote();
//  - complete_remote() reads the owner before its increment and touches
//    only the owner's Worker (which outlives every group) afterwards;
//  - a worker counted in `searching` runs no task: it leaves `searching`
//    before it runs what it found, so its own pushes wake sleepers.
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <new>

#include "canopy/detail/affine.hpp"
#include "canopy/detail/spawn.hpp"
#include "canopy/detail/trace.hpp"
#include "runtime/bubbles.hpp"
#include "runtime/runtime_core.hpp"

namespace canopy::detail {

constinit thread_local Worker* tls_worker = nullptr;

namespace {

// Pauses between two failed steal rounds of a searching worker (~0.2 µs on
// Zen): fewer notices new work sooner but disturbs the victims' cache lines
// more, and steals tasks so short that their owner would have run them
// sooner itself (measured with bench/runtime/epcc: 1 or 2 are worse).
#ifndef CANOPY_RELAX_PER_ROUND
#define CANOPY_RELAX_PER_ROUND 8
#endif
constexpr int kRelaxPerRound = CANOPY_RELAX_PER_ROUND;

// How long a worker searches in vain (awake: a park restarts the count)
// before it takes a loose hinted task queued for another worker of its own
// NUMA node: long enough for an idle target to be woken and take it itself
// (a futex wake-up is tens of µs), short against any task worth hinting.
// A busy target's tasks still go to idle workers.
constexpr std::int64_t kLooseDelayNs = 25'000;
// The same for a loose task of another node (a worker or node queue
// there): longer, since running it here costs remote memory traffic for
// the whole task, and each time (running one restarts the count): workers
// of other nodes help a node that stays overloaded, but do not take its
// tasks at every short gap in their own work. (A node's own loose queue
// also has to be overloaded by then: node_may_lend, affine.hpp.)
constexpr std::int64_t kRemoteLooseDelayNs = 200'000;

// A searcher that has spun for a whole round (spin_ns) while hinted tasks
// stay queued that it may not take yet (loose tasks of a busy worker, of a
// node that keeps them: node_may_lend) sleeps this long, then searches
// again. It must not park: nobody would wake it when it may take them. Nor
// go through prepare_wait to find that out: its heavy barrier
// (membarrier) interrupts every busy worker, each time (in a VM on a loaded
// host this stalled whole NUMA nodes for 100 ms and more). Nor spin on:
// that takes the CPU from busy workers wherever CPUs are shared (SMT
// siblings, vCPUs). The cost: it notices new work up to kNapNs late, only
// while such tasks wait.
constexpr std::int64_t kNapNs = 100'000;

void nap() {
  const timespec ts{0, kNapNs};
  nanosleep(&ts, nullptr);
}

// What a searcher that has been idle for `idle_ns` may take from others'
// loose queues (0 nothing, 1 its node's, 2 any).
int loose_level(std::int64_t idle_ns) {
  return idle_ns >= kRemoteLooseDelayNs ? 2 : idle_ns >= kLooseDelayNs ? 1 : 0;
}

std::int64_t now_ns() { return monotonic_ns(); }

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

std::uint32_t next_random(Worker* w) {
  // xorshift64*: a thief's private generator, for where to start in a group.
  std::uint64_t x = w->rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  w->rng = x;
  return static_cast<std::uint32_t>((x * 0x2545F4914F6CDD1Dull) >> 32);
}

// A proxy mailed to w, or nullptr. The mailbox is taken whole; the rest
// waits in mail_pending (owner-only) for the next call.
Task* take_mail(Worker* w) {
  ProxyHeader* p = w->mail_pending;
  if (!p) {
    if (w->mailbox.load(std::memory_order_relaxed) == nullptr) return nullptr;
    p = static_cast<ProxyHeader*>(w->mailbox.exchange(nullptr, std::memory_order_acquire));
    if (!p) return nullptr;
  }
  w->mail_pending = p->mail_next;
  return p;
}

void count_steal(Worker* w, int cls) {
  w->steals[cls].store(w->steals[cls].load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// One pass over w's victims, closest group first, each group from a random
// member; a stolen task's slot is copied into `out`. `contended` is set
// when a victim had work but another thief (or its owner) took it first:
// worth trying again at once.
bool steal_deques(Worker* w, TaskSlot* out, bool* contended) {
  RuntimeCore* rt = w->rt;
  const VictimList& vl = rt->victims[w->index];
  int begin = 0;
  for (std::size_t gi = 0; gi < vl.group_end.size(); ++gi) {
    const int end = vl.group_end[gi];
    const int n = end - begin;
    const int start = n > 1 ? static_cast<int>(next_random(w) % static_cast<std::uint32_t>(n)) : 0;
    for (int k = 0; k < n; ++k) {
      int idx = start + k;
      if (idx >= n) idx -= n;
      Worker* v = rt->slots[vl.workers[begin + idx]];
      const StealResult r = v->deque.steal(out);
      if (r == StealResult::Ok) {
        count_steal(w, vl.group_class[gi]);
        trace_instant(w, kTraceSteal, 0, 0, static_cast<std::uint32_t>(v->index), vl.group_class[gi]);
        return true;
      }
      if (r == StealResult::LostRace) *contended = true;
    }
    begin = end;
  }
  if (rt->extras_held.load(std::memory_order_relaxed) > 0) {
    for (int i = rt->num_workers; i < rt->num_slots; ++i) {
      if (i == w->index) continue;
      const StealResult r = rt->slots[i]->deque.steal(out);
      if (r == StealResult::Ok) {
        count_steal(w, kStealRemote);
        trace_instant(w, kTraceSteal, 0, 0, static_cast<std::uint32_t>(i), kStealRemote);
        return true;
      }
      if (r == StealResult::LostRace) *contended = true;
    }
  }
  return false;
}

// Work found by a worker: mail (a task), a hinted task from an affinity
// queue, or a stolen slot's copy.
struct Found {
  Task* mail = nullptr;
  AffineTask* affine = nullptr;
  TaskSlot slot;
  void run(Worker* w) {
    if (affine) {
      ++w->tasks_run;
      if (w->numa_node >= 0 && w->rt->nodes.size() > 1)
        run_timed(w);
      else
        affine->run(affine, w);
    } else if (mail) {
      execute(w, mail);
    } else {
      execute(w, &slot);
    }
  }
  // A hinted task on a runtime of several nodes: its run time goes into
  // the mean of w's node (NodeLoad::task_ns), which sets how long another
  // node's idle workers leave that node's loose tasks alone (node_may_lend).
  // Clamped, so that one task stuck for long does not stall the others.
  void run_timed(Worker* w) {
    const std::int64_t t0 = now_ns();
    affine->run(affine, w);
    const std::int64_t d = std::min(now_ns() - t0, kLendStallMaxNs);
    std::atomic<std::int64_t>& mean = w->rt->nodes[w->numa_node]->load.task_ns;
    const std::int64_t m = mean.load(std::memory_order_relaxed);
    mean.store(m == 0 ? d : m + (d - m) / 8, std::memory_order_relaxed);
  }
};

// One search round in the scheduler's order (see the top): mail, own and
// node affinity queues, victims' deques, and loose queues of others as far
// as its idle time (loose_level, node_may_lend) allows; `idle_ns` is 0
// until the searcher's first time check.
bool search_round(Worker* w, Found* found, bool* contended, std::int64_t idle_ns) {
  const int loose = loose_level(idle_ns);
  found->affine = nullptr;
  found->mail = take_mail(w);
  if (found->mail) return true;
  const bool hints = w->rt->hints_used.load(std::memory_order_relaxed);
  if (hints && (found->affine = take_affine(w, contended))) return true;
  if (hints && (found->affine = take_bubble_task(w, contended))) return true;
  if (steal_deques(w, &found->slot, contended)) return true;
  // Whole groups of other subtrees before single loose tasks (bubbles.cpp).
  if (hints && loose > 0 &&
      (found->affine = steal_bubble(w, contended, idle_ns, kRemoteLooseDelayNs, kLooseDelayNs)))
    return true;
  if (hints && loose > 0 && (found->affine = steal_loose(w, contended, loose > 1, idle_ns))) return true;
  w->failed_steal_rounds.store(w->failed_steal_rounds.load(std::memory_order_relaxed) + 1,
                               std::memory_order_relaxed);
  return false;
}

// After a searcher found work: if it was the last searcher and workers are
// asleep, wake one to keep looking (more work may be queued).
void stop_searching(Worker* w) {
  Notifier& nt = w->rt->notifier;
  if (nt.searching().fetch_sub(1, std::memory_order_seq_cst) == 1 &&
      (nt.hint()->load(std::memory_order_seq_cst) & Notifier::kCountMask) != 0)
    nt.notify_one(w);
}

void park(Worker* w, std::uint32_t epoch) {
  w->parks.store(w->parks.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  const std::int64_t t0 = now_ns();
  // Asleep (loose_since < 0): other nodes' workers leave our loose tasks to
  // us meanwhile (worker_lends, affinity.cpp); the stall clock restarts
  // when we are back.
  w->loose_since.store(-t0, std::memory_order_relaxed);
  const std::uint64_t traced = trace_begin(w);
  w->rt->notifier.commit_wait(w, epoch);
  trace_end(w, kTracePark, traced);
  w->loose_since.store(now_ns(), std::memory_order_relaxed);
  w->parked_ns.store(w->parked_ns.load(std::memory_order_relaxed) + (now_ns() - t0), std::memory_order_relaxed);
}

// Searches for a task (mailbox, victims) while counted in `searching`;
// parks when the search has found nothing for spin_ns. false: stop.
bool find_work(Worker* w, Found* found) {
  RuntimeCore* rt = w->rt;
  Notifier& nt = rt->notifier;
  nt.searching().fetch_add(1, std::memory_order_seq_cst);
  std::int64_t idle_start = now_ns();  // awake and idle since
  std::uint64_t searched = trace_begin(w);  // a span of searching (stealing), when traced
  for (;;) {
    const std::int64_t deadline = now_ns() + rt->spin_ns;
    std::int64_t idle = 0;
    for (unsigned rounds = 1;; ++rounds) {
      if (rt->stopping.load(std::memory_order_relaxed)) {
        nt.searching().fetch_sub(1, std::memory_order_seq_cst);
        trace_end(w, kTraceSearch, searched);
        return false;
      }
      bool contended = false;
      if (search_round(w, found, &contended, idle)) {
        stop_searching(w);
        trace_end(w, kTraceSearch, searched);
        return true;
      }
      if (contended) continue;
      if ((rounds & 15) == 0) {
        const std::int64_t t = now_ns();
        if (t > deadline) break;
        idle = t - idle_start;
      }
      for (int i = 0; i < kRelaxPerRound; ++i) cpu_relax();
    }
    // Leave `searching` before registering: a pusher that still counts us
    // as searching relies on this re-check (see notifier.hpp).
    nt.searching().fetch_sub(1, std::memory_order_seq_cst);
    if (affine_work_visible(rt, w)) {
      // Hinted tasks it could not take for a whole round (see kNapNs).
      nap();
      nt.searching().fetch_add(1, std::memory_order_seq_cst);
      continue;
    }
    w->pool.flush_remote();  // blocks of stolen tasks go home before we sleep
    const std::uint32_t epoch = nt.prepare_wait(w);
    if (rt->stopping.load(std::memory_order_seq_cst) || any_work_visible(rt, w)) {
      nt.cancel_wait(w);
    } else {
      trace_end(w, kTraceSearch, searched);
      park(w, epoch);
      idle_start = now_ns();
      searched = trace_begin(w);
    }
    nt.searching().fetch_add(1, std::memory_order_seq_cst);
  }
}

ErrorBox oom_box;  // used when even the exception cannot be boxed

}  // namespace

bool any_work_visible(RuntimeCore* rt, Worker* w) {
  if (w->mail_pending || w->mailbox.load(std::memory_order_seq_cst) != nullptr) return true;
  for (Worker* v : rt->slots)
    if (v != w && v->deque.looks_nonempty()) return true;
  return affine_work_visible(rt, w);
}

void worker_main(Worker* w) {
  tls_worker = w;
  Found found;
  for (;;) {
    // Tasks left in our own deque first: foreign spawns of tasks that
    // returned.
    if (w->deque.looks_nonempty()) {
      if (const TaskSlot* s = w->deque.pop()) {
        execute(w, s);
        continue;
      }
    }
    if (!find_work(w, &found)) break;
    found.run(w);
  }
  w->pool.flush_remote();
  tls_worker = nullptr;
}

void wait_slow(Worker* w, Group* g) {
  RuntimeCore* rt = w->rt;
  Notifier& nt = rt->notifier;
  Found found;
  // The search's clock starts at the first time check (0: not yet), so that
  // a helper running task after task reads no clock per task. `idle_start`
  // (for loose tasks) survives a park that found work at the re-check.
  std::int64_t idle_start = 0;
  for (;;) {
    std::int64_t start = 0;
    std::int64_t idle = 0;
    for (unsigned rounds = 1;; ++rounds) {
      if (g->complete()) return;
      bool contended = false;
      // Tasks pushed above our group's base while we helped (foreign
      // spawns of tasks we ran) first, then as an idle worker would.
      if (w->deque.has_above(g->base)) {
        if (const TaskSlot* s = w->deque.pop()) {
          execute(w, s);
          start = idle_start = 0;
          idle = 0;
          continue;
        }
      }
      if (search_round(w, &found, &contended, idle)) {
        found.run(w);
        start = idle_start = 0;
        idle = 0;
        continue;
      }
      if (contended) continue;
      if ((rounds & 15) == 0) {
        const std::int64_t t = now_ns();
        if (start == 0) start = t;
        if (idle_start == 0) idle_start = t;
        if (t - start > rt->spin_ns) break;
        idle = t - idle_start;
      }
      cpu_relax();
    }
    // Park until a thief completes a task of g (complete_remote wakes us),
    // or work appears. The seq_cst load pairs with complete_remote.
    if (affine_work_visible(rt, w)) {
      nap();  // hinted tasks it could not take for a whole round (see kNapNs)
      continue;
    }
    w->pool.flush_remote();
    const std::uint32_t epoch = nt.prepare_wait(w);
    if (g->pending == g->remote.load(std::memory_order_seq_cst) || any_work_visible(rt, w)) {
      nt.cancel_wait(w);
    } else {
      park(w, epoch);
      idle_start = 0;
    }
  }
}

bool take_back_slow(Worker* w, const TaskSlot* popped, const Group* mine, std::int64_t base) {
  // `popped` was above f1's slot: a foreign spawn left by f2 (or nullptr:
  // the deque was empty, f1's task was stolen).
  const TaskSlot* s = popped;
  while (s) {
    if (slot_group(s) == mine) return true;
    execute(w, s);
    if (w->deque.bottom() <= base) return false;
    s = w->deque.pop();
  }
  return false;
}

void invoke_unwind(Worker* w, Group* g, std::int64_t base) noexcept {
  const TaskSlot* p = w->deque.bottom() > base ? w->deque.pop() : nullptr;
  if (!take_back_slow(w, p, g, base)) wait_slow(w, g);
  if (g->error.load(std::memory_order_relaxed)) drop_group_error(g);
}

void complete_remote(Group* g) {
  Worker* owner = g->owner_shared;  // g may be gone once the increment is visible
  g->remote.fetch_add(1, std::memory_order_seq_cst);
  if (owner->parked.load(std::memory_order_seq_cst) != 0) owner->rt->notifier.wake(owner);
}

void notify_after_push(Worker* w) {
  Notifier& nt = w->rt->notifier;
  std::uint32_t h = nt.hint()->load(std::memory_order_relaxed);
  if (h & Notifier::kFenceMode) {
    full_fence();
    h = nt.hint()->load(std::memory_order_relaxed);
  }
  if ((h & Notifier::kCountMask) == 0) return;
  if (nt.searching().load(std::memory_order_relaxed) > 0) return;
  nt.notify_one(w);
}

void post_to_mailbox(Worker* target, Task* t) {
  auto* p = static_cast<ProxyHeader*>(t);
  Task* head = target->mailbox.load(std::memory_order_relaxed);
  do {
    p->mail_next = static_cast<ProxyHeader*>(head);
  } while (!target->mailbox.compare_exchange_weak(head, p, std::memory_order_seq_cst, std::memory_order_relaxed));
  if (target->parked.load(std::memory_order_seq_cst) != 0) target->rt->notifier.wake(target);
}

void record_exception(Group* g) noexcept {
  ErrorBox* box = new (std::nothrow) ErrorBox{std::current_exception()};
  if (!box) box = &oom_box;
  ErrorBox* expected = nullptr;
  if (!g->error.compare_exchange_strong(expected, box, std::memory_order_acq_rel) && box != &oom_box) delete box;
}

void drop_group_error(Group* g) noexcept {
  ErrorBox* box = g->error.exchange(nullptr, std::memory_order_acquire);
  if (box != &oom_box) delete box;
}

void rethrow_group_error(Group* g) {
  ErrorBox* box = g->error.exchange(nullptr, std::memory_order_acquire);
  std::exception_ptr e = box == &oom_box ? std::make_exception_ptr(std::bad_alloc()) : box->error;
  if (box != &oom_box) delete box;
  std::rethrow_exception(e);
}

}  // namespace canopy::detail
