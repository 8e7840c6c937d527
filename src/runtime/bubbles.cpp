// Bubbles (canopy/bubble.hpp) in the runtime: each domain of the workers
// (domains.hpp: the machine, a package, a NUMA node, an L3, a core...) has
// a queue of the bubbles attached to it that have tasks queued; a bubble
// has its own queue of tasks. Where the scheduler looks (scheduler.cpp,
// after its own and its node's affinity queues): the bubbles of its own
// domains, smallest first (take_bubble_task); and, once idle for a while,
// whole bubbles of other domains, closest first (steal_bubble).
//
// Holding a bubble. Whoever pops a bubble from a domain queue holds it: it
// alone takes tasks from the bubble's queue (one per hold), and may move the
// bubble to another domain (a whole-group steal); then it releases it:
// pushes it back on its domain's queue when tasks remain, else clears
// `in_queue`. A spawner that finds `in_queue` clear (CAS 0 -> 1) queues the
// bubble itself. So a bubble is in at most one domain queue, and while it
// is there (or held) it has a task not taken yet: its group cannot complete
// before its holder is done with it, except for the last few stores of a
// release, which `holders` covers (the owner's wait and the destructor
// wait for it to be 0).
//
// No task lost: a spawner's task push (seq_cst CAS) happens before its load
// of `in_queue` (seq_cst); a releasing holder's store of `in_queue` = 0
// (seq_cst) happens before its load of the task queue (seq_cst, the
// looks_nonempty of the queue): one of them sees the other and queues the
// bubble. A holder is awake and a worker of the bubble's domain, so it
// comes back to it. Sleepers: pushing a bubble on a domain (and a task on
// a bubble already queued) wakes a parked worker of the domain; the
// sleep re-check (affine_work_visible) looks at the worker's domains and at
// the count of bubbles queued anywhere (an idle worker may steal them).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <thread>

#include "canopy/bubble.hpp"
#include "canopy/error.hpp"
#include "canopy/topology.hpp"
#include "runtime/bubbles.hpp"
#include "runtime/memsched.hpp"
#include "runtime/runtime_core.hpp"

namespace canopy {
namespace detail {

struct BubbleCore : AffineTask {  // the AffineTask links it in a domain's queue
  RuntimeCore* rt = nullptr;
  BubbleOptions options;
  std::atomic<int> domain{0};
  int need = 1;                    // workers its share asks for (where it moves when taken whole)
  AffineQueue tasks;
  std::atomic<std::uint32_t> in_queue{0};  // 1 while in a domain queue or held
  std::atomic<int> holders{0};
  std::atomic<std::uint64_t> taken{0};     // whole-group steals
  Group group;                     // counts the tasks as a TaskGroup does
  double placed_work = 0;          // expected work counted in the runtime's load (removed at the end)
  int placed_domain = 0;           // ... on the workers of this domain
};

namespace {

void mark_hints_used(RuntimeCore* rt) {
  if (!rt->hints_used.load(std::memory_order_relaxed)) [[unlikely]]
    rt->hints_used.store(true, std::memory_order_seq_cst);
}

// A parked worker of domain d, woken (the first found): a bubble or a task
// was queued there. When the domain has none asleep (its workers are
// busy), some other sleeper is woken if nobody is searching, as a spawn
// would: it may take the group whole once it has been idle long enough.
void wake_in_domain(RuntimeCore* rt, int d) {
  Notifier& nt = rt->notifier;
  if ((nt.hint()->load(std::memory_order_seq_cst) & Notifier::kCountMask) == 0) return;
  const std::vector<int>& ws = rt->domains[d]->shape.workers;
  for (int x : ws) {
    Worker* w = rt->slots[x];
    if (w->parked.load(std::memory_order_seq_cst) != 0) {
      nt.wake(w);
      return;
    }
  }
  if (nt.searching().load(std::memory_order_seq_cst) > 0) return;
  nt.notify_one(rt->slots[ws.front()]);
}

void push_bubble(RuntimeCore* rt, BubbleCore* b) {
  const int d = b->domain.load(std::memory_order_relaxed);
  BubbleDomain& q = *rt->domains[d];
  q.queued.fetch_add(1, std::memory_order_relaxed);
  rt->bubbles_queued.fetch_add(1, std::memory_order_seq_cst);
  q.bubbles.push(b);
  wake_in_domain(rt, d);
}

// The holder is done with b: back on its domain's queue if tasks remain.
void release(RuntimeCore* rt, BubbleCore* b) {
  if (b->tasks.looks_nonempty()) {
    push_bubble(rt, b);
  } else {
    b->in_queue.store(0, std::memory_order_seq_cst);
    std::uint32_t zero = 0;
    if (b->tasks.looks_nonempty() && b->in_queue.compare_exchange_strong(zero, 1, std::memory_order_seq_cst))
      push_bubble(rt, b);
  }
  b->holders.fetch_sub(1, std::memory_order_release);
}

BubbleCore* pop_bubble(RuntimeCore* rt, BubbleDomain& q, bool* busy) {
  auto* b = static_cast<BubbleCore*>(q.bubbles.pop(busy));
  if (!b) return nullptr;
  b->holders.fetch_add(1, std::memory_order_relaxed);
  q.queued.fetch_sub(1, std::memory_order_relaxed);
  rt->bubbles_queued.fetch_sub(1, std::memory_order_relaxed);
  return b;
}

// Whether worker w is on a NUMA node of domain d's workers.
bool on_nodes_of(const RuntimeCore* rt, const Worker* w, int d) {
  for (int x : rt->domains[d]->shape.workers)
    if (rt->slots[x]->numa_node == w->numa_node) return true;
  return false;
}

// One task of a held bubble (nullptr when another consumer... cannot
// happen: the holder is the only consumer), then the release.
AffineTask* take_one(RuntimeCore* rt, BubbleCore* b, bool* busy) {
  AffineTask* t = b->tasks.pop(busy);
  release(rt, b);
  return t;
}

}  // namespace

void build_bubble_domains(RuntimeCore* rt, const Topology& topo, const std::vector<int>& worker_pu) {
  std::vector<Domain> ds = build_domains(topo, worker_pu);
  rt->worker_domains = domains_of_workers(ds, rt->num_workers);
  for (int i = rt->num_workers; i < rt->num_slots; ++i) rt->worker_domains.push_back({0});
  rt->bubble_load.assign(rt->num_workers, 0.0);
  for (Domain& d : ds) {
    auto q = std::make_unique<BubbleDomain>();
    q->shape = std::move(d);
    rt->domains.push_back(std::move(q));
  }
  // Subtree ends: domain ids are in tree order, so a subtree is [d, end).
  const int n = static_cast<int>(rt->domains.size());
  for (int d = n - 1; d >= 0; --d) {
    int end = d + 1;
    for (int c : rt->domains[d]->shape.children) end = std::max(end, rt->domains[c]->subtree_end);
    rt->domains[d]->subtree_end = end;
  }
}

void bubble_queue_task(BubbleCore* b, AffineTask* t) {
  RuntimeCore* rt = b->rt;
  mark_hints_used(rt);
  b->tasks.push(t);
  std::uint32_t zero = 0;
  if (b->in_queue.load(std::memory_order_seq_cst) == 0 &&
      b->in_queue.compare_exchange_strong(zero, 1, std::memory_order_seq_cst)) {
    push_bubble(rt, b);
    return;
  }
  // Already queued or held: its domain may have more idle workers to give.
  wake_in_domain(rt, b->domain.load(std::memory_order_relaxed));
}

namespace {

// TaskGroup's drain: the group's tasks nobody stole from the owner's deque
// (newest first), then the others (helping meanwhile); leaves the group
// ready for more spawns.
void drain(BubbleCore& b, Worker* w) {
  Group& g = b.group;
  for (std::int64_t bottom; (bottom = w->deque.bottom()) > g.base;) {
    const TaskSlot* s = w->deque.pop_at(bottom);
    if (!s) break;
    Group* x = slot_run(s)(s, w);
    if (x == &g)
      --g.pending;
    else if (x)
      count_done(x, w);
  }
  if (!g.complete()) wait_slow(w, &g);
  if (g.pending != 0) {
    g.pending = 0;
    g.remote.store(0, std::memory_order_relaxed);
  }
  // A releasing holder may still be on its last stores to the bubble.
  while (b.holders.load(std::memory_order_acquire) != 0) std::this_thread::yield();
}

}  // namespace

AffineTask* take_bubble_task(Worker* w, bool* busy) {
  RuntimeCore* rt = w->rt;
  if (rt->bubbles_queued.load(std::memory_order_relaxed) == 0) return nullptr;
  for (int d : rt->worker_domains[w->index]) {
    BubbleDomain& q = *rt->domains[d];
    if (!q.bubbles.maybe_nonempty()) continue;
    if (BubbleCore* b = pop_bubble(rt, q, busy))
      if (AffineTask* t = take_one(rt, b, busy)) return t;
  }
  return nullptr;
}

AffineTask* steal_bubble(Worker* w, bool* busy, std::int64_t idle_ns, std::int64_t one_ns, std::int64_t many_ns) {
  RuntimeCore* rt = w->rt;
  if (rt->bubbles_queued.load(std::memory_order_relaxed) == 0 || w->index >= rt->num_workers) return nullptr;
  const std::vector<int>& mine = rt->worker_domains[w->index];
  // Closest first: the other subtrees of each of w's domains, smallest
  // domain first (its siblings), then its parent's other children, ...
  for (std::size_t k = 1; k < mine.size(); ++k) {
    const BubbleDomain& up = *rt->domains[mine[k]];
    for (int c : up.shape.children) {
      if (c == mine[k - 1]) continue;
      for (int v = c; v < rt->domains[c]->subtree_end; ++v) {
        BubbleDomain& q = *rt->domains[v];
        const int queued = q.queued.load(std::memory_order_relaxed);
        if (queued <= 0) continue;
        if (idle_ns < (queued >= 2 ? many_ns : one_ns)) continue;
        BubbleCore* b = pop_bubble(rt, q, busy);
        if (!b) continue;
        // A group with attached data stays on its data's NUMA node (the
        // memory scheduler put it there): a thief of another node puts it back.
        if (!b->options.data.empty() && !on_nodes_of(rt, w, b->domain.load(std::memory_order_relaxed))) {
          release(rt, b);
          continue;
        }
        // Moves to w's smallest domain holding the group's share.
        int to = mine.back();
        for (int d : mine)
          if (static_cast<int>(rt->domains[d]->shape.workers.size()) >= b->need) {
            to = d;
            break;
          }
        b->domain.store(to, std::memory_order_relaxed);
        b->taken.fetch_add(1, std::memory_order_relaxed);
        rt->bubbles_taken.fetch_add(1, std::memory_order_relaxed);
        if (AffineTask* t = take_one(rt, b, busy)) return t;
      }
    }
  }
  return nullptr;
}

bool bubble_work_visible(RuntimeCore* rt, const Worker* w) {
  if (rt->bubbles_queued.load(std::memory_order_seq_cst) > 0) return true;
  for (int d : rt->worker_domains[w->index])
    if (rt->domains[d]->bubbles.looks_nonempty()) return true;
  return false;
}

}  // namespace detail

// ---- the public class ----

namespace {

detail::RuntimeCore* runtime_of_caller(const char* what) {
  detail::Worker* w = detail::tls_worker;
  if (!w) throw Error(fmt::format("{}: call it inside Runtime::run or a task of the runtime", what));
  return w->rt;
}

}  // namespace

Bubble::Bubble(Runtime& rt, BubbleOptions options) {
  detail::Worker* w = detail::tls_worker;
  if (!w || w->rt != rt.core())
    throw Error("Bubble: create it inside Runtime::run (or a task) of the runtime it belongs to");
  core_ = std::make_unique<detail::BubbleCore>();
  core_->rt = rt.core();
  core_->options = std::move(options);
  core_->need = rt.core()->num_workers;
  core_->group.init(w, w->deque.bottom());
  group_ = &core_->group;
  queued_ = false;  // the whole runtime: a TaskGroup
}

Bubble::Bubble(Bubble&&) noexcept = default;
Bubble& Bubble::operator=(Bubble&&) noexcept = default;

Bubble::~Bubble() {
  if (!core_) return;
  detail::BubbleCore& b = *core_;
  if (!b.group.complete() && detail::tls_worker == b.group.owner) detail::drain(b, b.group.owner);
  while (b.holders.load(std::memory_order_acquire) != 0) std::this_thread::yield();
  if (b.group.error.load(std::memory_order_relaxed) != nullptr) detail::drop_group_error(&b.group);
  if (b.placed_work > 0) {
    std::lock_guard lock(b.rt->bubble_mutex);
    const std::vector<int>& ws = b.rt->domains[b.placed_domain]->shape.workers;
    for (int x : ws) b.rt->bubble_load[x] -= b.placed_work / static_cast<double>(ws.size());
  }
}

std::vector<Bubble> Bubble::split(const std::vector<BubbleOptions>& children) {
  detail::RuntimeCore* rt = core_->rt;
  if (runtime_of_caller("Bubble::split") != rt || detail::tls_worker != core_->group.owner)
    throw Error("Bubble::split: call it on the thread that made the bubble");
  std::vector<double> work;
  for (const BubbleOptions& o : children) work.push_back(o.work);
  const int parent = core_->domain.load(std::memory_order_relaxed);
  std::vector<int> where;
  std::vector<detail::Domain> shapes;
  for (const auto& q : rt->domains) shapes.push_back(q->shape);
  {
    std::lock_guard lock(rt->bubble_mutex);
    where = detail::place_groups(shapes, parent, work, &rt->bubble_load);
  }
  // The same fill place_groups used, for the share and the load to remove.
  double known = 0;
  int nknown = 0;
  for (double x : work)
    if (x > 0) {
      known += x;
      ++nknown;
    }
  const double fill = nknown > 0 ? known / nknown : 1.0;
  double total = 0;
  for (double x : work) total += x > 0 ? x : fill;
  // A phase of the memory scheduler (memsched.hpp): only when a child has
  // data attached. The domains it picks carry the same work per worker.
  if (std::any_of(children.begin(), children.end(), [](const BubbleOptions& o) { return !o.data.empty(); })) {
    std::vector<double> filled;
    for (double x : work) filled.push_back(x > 0 ? x : fill);
    detail::memsched_phase(rt, children, filled, &where);
  }
  std::vector<Bubble> out;
  out.reserve(children.size());
  for (std::size_t i = 0; i < children.size(); ++i) {
    Bubble b;
    b.core_ = std::make_unique<detail::BubbleCore>();
    b.core_->rt = rt;
    b.core_->group.init(detail::tls_worker, detail::tls_worker->deque.bottom());
    b.core_->options = children[i];
    b.core_->domain.store(where[i], std::memory_order_relaxed);
    const double wi = work[i] > 0 ? work[i] : fill;
    b.core_->need = detail::group_share(wi, total, static_cast<int>(shapes[parent].workers.size()));
    b.core_->placed_work = wi;
    b.core_->placed_domain = where[i];
    b.group_ = &b.core_->group;
    b.queued_ = where[i] != 0;
    out.push_back(std::move(b));
  }
  return out;
}

void Bubble::wait() {
  detail::Group& g = core_->group;
  detail::Worker* w = g.owner;
  if (detail::tls_worker != w) detail::throw_wrong_thread("Bubble::wait");
  detail::drain(*core_, w);
  if (g.error.load(std::memory_order_relaxed) != nullptr) detail::rethrow_group_error(&g);
}

std::vector<int> Bubble::workers() const { return core_->rt->domains[core_->domain.load()]->shape.workers; }
std::uint64_t Bubble::times_taken() const { return core_->taken.load(std::memory_order_relaxed); }
const BubbleOptions& Bubble::options() const { return core_->options; }

void detail::bubble_attach_for_testing(Bubble& b, const std::vector<int>& workers) {
  RuntimeCore* rt = b.core_->rt;
  for (std::size_t d = 0; d < rt->domains.size(); ++d)
    if (rt->domains[d]->shape.workers == workers) {
      b.core_->domain.store(static_cast<int>(d), std::memory_order_relaxed);
      b.queued_ = d != 0;
      return;
    }
  throw Error(fmt::format("bubble_attach_for_testing: no domain has workers {}", fmt::join(workers, ",")));
}

}  // namespace canopy
