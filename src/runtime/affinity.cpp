// Affinity hints in the runtime: the NUMA nodes of a runtime's workers,
// resolving a hint to a target, queueing a hinted task (and waking who
// should run it), and the scheduler's side of the per-worker and per-node
// queues (canopy/detail/affine.hpp says where tasks go and in which order
// workers look), with each node's NodeLoad (loose tasks queued, since when
// the queue has not moved) for the rule of when another node's idle worker
// may take them (node_may_lend).
//
// Wake-ups. A task queued for a worker wakes that worker if it is
// registered to sleep; one queued for a node wakes a sleeping worker of the
// node (the node's count of sleepers says whether to look). A loose task
// whose target does not sleep may still wake some other sleeper (when
// nobody is searching), as a spawn would: it runs somewhere if its target
// stays busy. No wake-up is lost: the pusher's queue CAS and then its load
// of the sleep words are seq_cst, and so are a sleeper's registration (the
// sleep words) and then its re-check of the queues (affine_work_visible),
// a store-load pair on each side: one of the two sees the other. The flag
// `hints_used` takes part in the same way: set seq_cst before the first push,
// loaded seq_cst by the re-check.
#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "canopy/data.hpp"
#include "canopy/detail/affine.hpp"
#include "canopy/error.hpp"
#include "canopy/topology.hpp"
#include "runtime/bubbles.hpp"
#include "runtime/runtime_core.hpp"

namespace canopy {

std::string to_string(const Affinity& a) {
  const char* s = a.strict ? " strict" : "";
  switch (a.kind) {
    case Affinity::Kind::None: return "none";
    case Affinity::Kind::Worker: return fmt::format("worker {}{}", a.index, s);
    case Affinity::Kind::Node: return fmt::format("node {}{}", a.index, s);
    case Affinity::Kind::Data: return fmt::format("near data #{}{}", a.data.index, s);
  }
  return fmt::format("affinity kind {}", static_cast<int>(a.kind));
}

namespace detail {

namespace {

int wrap(int i, int n) {
  if (static_cast<unsigned>(i) < static_cast<unsigned>(n)) [[likely]] return i;
  const int r = i % n;
  return r < 0 ? r + n : r;
}

}  // namespace

void build_nodes(RuntimeCore* rt, const Topology& topo) {
  // The machine nodes that have workers, in the machine's order.
  std::vector<int> used;
  for (const WorkerPlacement& p : rt->placement) used.push_back(std::max(0, p.numa));
  std::sort(used.begin(), used.end());
  used.erase(std::unique(used.begin(), used.end()), used.end());
  const int k = static_cast<int>(used.size());
  for (int m : used) {
    auto n = std::make_unique<NodeQueues>();
    n->machine_node = m;
    rt->nodes.push_back(std::move(n));
  }
  auto local_of = [&](int m) {
    return static_cast<int>(std::lower_bound(used.begin(), used.end(), m) - used.begin());
  };
  for (int i = 0; i < rt->num_workers; ++i) {
    const int local = local_of(std::max(0, rt->placement[i].numa));
    Worker* w = rt->slots[i];
    w->numa_node = local;
    w->machine_node = used[local];
    w->node_sleepers = &rt->nodes[local]->sleepers;
    rt->nodes[local]->workers.push_back(i);
  }
  for (int i = rt->num_workers; i < rt->num_slots; ++i) rt->slots[i]->machine_node = rt->slots[0]->machine_node;

  // Distance between two runtime nodes: hwloc's NUMA distances when the
  // machine has them, else the tree distance between their first workers.
  const auto& nd = topo.numa_distances();
  const int machine_nodes = std::max(topo.num_numa_nodes(), 1);
  const bool have_nd = static_cast<int>(nd.size()) == machine_nodes;
  auto node_pu = [&](int m) -> int {  // a PU of machine node m, -1 when it has none
    if (m < topo.num_numa_nodes() && !topo.numa_node(m).pus.empty()) return topo.numa_node(m).pus.front();
    return -1;
  };
  auto machine_distance = [&](int a, int b) -> std::uint64_t {
    if (have_nd && a < machine_nodes && b < machine_nodes) return nd[a][b];
    const int pa = node_pu(a), pb = node_pu(b);
    if (pa >= 0 && pb >= 0) return static_cast<std::uint64_t>(topo.distance(pa, pb));
    return static_cast<std::uint64_t>(a > b ? a - b : b - a);
  };
  for (int a = 0; a < k; ++a) {
    std::vector<int>& order = rt->nodes[a]->steal_order;
    for (int d = 1; d < k; ++d) order.push_back((a + d) % k);  // ties: the next nodes first
    std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
      return machine_distance(used[a], used[x]) < machine_distance(used[a], used[y]);
    });
  }
  // Every machine node maps to a runtime node: itself, or the closest one.
  rt->node_of_machine_node.assign(static_cast<std::size_t>(machine_nodes), 0);
  for (int m = 0; m < machine_nodes; ++m) {
    int best = 0;
    for (int x = 1; x < k; ++x)
      if (machine_distance(m, used[x]) < machine_distance(m, used[best])) best = x;
    if (std::binary_search(used.begin(), used.end(), m)) best = local_of(m);
    rt->node_of_machine_node[m] = best;
  }
}

int num_numa_nodes(const RuntimeCore* rt) { return static_cast<int>(rt->nodes.size()); }
int worker_numa_node(const Worker* w) { return w->numa_node >= 0 ? w->numa_node : 0; }
int worker_machine_node(const Worker* w) { return w->machine_node; }

int runtime_node_of(const RuntimeCore* rt, int machine_node) {
  if (machine_node < 0) return 0;
  const int m = static_cast<int>(rt->node_of_machine_node.size());
  // A node beyond this machine's (a handle's location set for tests):
  // wraps, as node ids do.
  if (machine_node >= m) return wrap(machine_node, num_numa_nodes(rt));
  return rt->node_of_machine_node[machine_node];
}

Target resolve(RuntimeCore* rt, const Affinity& a) {
  const int k = static_cast<int>(rt->nodes.size());
  Target t;
  t.strict = a.strict;
  switch (a.kind) {
    case Affinity::Kind::None: return {};
    case Affinity::Kind::Worker: t.worker = wrap(a.index, rt->num_workers); return t;
    case Affinity::Kind::Node:
      if (k == 1 && !a.strict) return {};
      t.node = wrap(a.index, k);
      return t;
    case Affinity::Kind::Data: {
      // Looked up even when the answer does not matter: a stale handle is
      // an error wherever it is used.
      DataEntry& e = data_entry(a.data);
      if (k == 1 && !a.strict) return {};
      data_learn_if_unplaced(e);  // a first-touch handle written since the last look
      t.node = runtime_node_of(rt, e.home_node.load(std::memory_order_relaxed));
      return t;
    }
  }
  throw Error(fmt::format("affinity kind {}: expected none, worker, node or data", static_cast<int>(a.kind)),
              ErrorKind::BadInput);
}

namespace {

void mark_hints_used(RuntimeCore* rt) {
  if (!rt->hints_used.load(std::memory_order_relaxed)) [[unlikely]]
    rt->hints_used.store(true, std::memory_order_seq_cst);
}

// A loose task whose target is not asleep: wake some sleeper if nobody is
// searching (a searcher would find it), as a push does.
void wake_someone(RuntimeCore* rt, const Worker* near) {
  Notifier& nt = rt->notifier;
  if ((nt.hint()->load(std::memory_order_seq_cst) & Notifier::kCountMask) == 0) return;
  if (nt.searching().load(std::memory_order_seq_cst) > 0) return;
  nt.notify_one(near);
}

void bump(std::atomic<std::uint64_t>& c) { c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

// A task was taken from a node's loose queue (by one of its workers or a
// thief): one less queued, and the next one's wait starts now.
void took_loose(NodeLoad& load) {
  load.queued.fetch_sub(1, std::memory_order_relaxed);
  load.since.store(monotonic_ns(), std::memory_order_relaxed);
}

// The same for a worker's loose queue (Worker::loose_queued, loose_since;
// while the worker sleeps, loose_since holds minus the time it went to
// sleep: scheduler.cpp's park).
void took_loose(Worker* owner) {
  owner->loose_queued.fetch_sub(1, std::memory_order_relaxed);
  owner->loose_since.store(monotonic_ns(), std::memory_order_relaxed);
}

// May a worker of another node, idle for idle_ns, take from victim's loose
// queue? A task hinted to a worker (automatic affinity's placement, a
// user's worker hint) has its data on that worker's node: taken elsewhere,
// all its bytes are remote. So as for a node's queue (node_may_lend), and
// with the victim's node's mean task time: when the worker stalls (took
// none of them for kLendStallTasks task times, at least 4 ms: stuck in a
// long task, or a woken vCPU that has not run yet), or holds more than its
// whole node would start within a few task times (kLendPerWorker per
// worker of the node). A worker that works through its queue at the pace
// its tasks run keeps them: in the NUMA VMs idle workers of other nodes
// otherwise took a tenth and more of a placed graph's tasks, each time one
// of them was briefly idle.
constexpr std::int64_t kParkedLendNs = 50'000'000;

bool worker_lends(const RuntimeCore* rt, const Worker* victim, std::int64_t idle_ns) {
  if (!victim->loose_queue.maybe_nonempty()) return false;
  const std::uint32_t q = victim->loose_queued.load(std::memory_order_relaxed);
  const int node = victim->numa_node >= 0 ? victim->numa_node : 0;
  const NodeQueues& n = *rt->nodes[node];
  const int workers = static_cast<int>(n.workers.size());
  const std::int64_t task_ns = n.load.task_ns.load(std::memory_order_relaxed);
  if (node_may_lend(q, workers, 0, task_ns, idle_ns)) return true;
  const std::int64_t since = victim->loose_since.load(std::memory_order_relaxed);
  std::int64_t waited = monotonic_ns() - (since < 0 ? -since : since);
  // A target asleep (woken by the push, not running yet) has not stalled:
  // its (v)CPU is slow to come back (tens of ms in the NUMA VMs under
  // load), and once awake it restarts the clock. Nor has one awake whose
  // (v)CPU the machine gave to another thread meanwhile, for as long: a
  // worker's queue lends on a stall after kParkedLendNs only (progress all
  // the same; its node's other workers take its tasks after 25 µs idle).
  // With the node's stall (16 task times, at least 4 ms) the idle workers
  // of other nodes still took up to 11% of lk23's placed tasks in the
  // 4-node VM on a loaded host.
  if (waited < kParkedLendNs) waited = 0;
  return node_may_lend(q, workers, waited, task_ns, idle_ns);
}

// Another node's worker, idle for idle_ns, may take from node m's loose
// queue now (node_may_lend, affine.hpp).
bool lends(const RuntimeCore* rt, int m, std::int64_t idle_ns) {
  const NodeQueues& n = *rt->nodes[m];
  if (!n.loose_queue.maybe_nonempty()) return false;
  const std::uint32_t q = n.load.queued.load(std::memory_order_relaxed);
  const int workers = static_cast<int>(n.workers.size());
  const std::int64_t task_ns = n.load.task_ns.load(std::memory_order_relaxed);
  if (node_may_lend(q, workers, 0, task_ns, idle_ns)) return true;  // a surplus: no clock needed
  return node_may_lend(q, workers, monotonic_ns() - n.load.since.load(std::memory_order_relaxed), task_ns, idle_ns);
}

}  // namespace

void schedule_targeted(Worker* w, AffineTask* t, Target target) {
  RuntimeCore* rt = w->rt;
  if (target.worker >= 0) {
    Worker* to = rt->slots[target.worker];
    mark_hints_used(rt);
    if (target.strict) {
      to->strict_queue.push(t);
    } else {
      // Counted before the push, as a node's (NodeLoad).
      // (Not while it sleeps: see Worker::loose_since.)
      if (to->loose_queued.fetch_add(1, std::memory_order_relaxed) == 0 &&
          to->loose_since.load(std::memory_order_relaxed) >= 0)
        to->loose_since.store(monotonic_ns(), std::memory_order_relaxed);
      to->loose_queue.push(t);
    }
    if (to->parked.load(std::memory_order_seq_cst) != 0) {
      rt->notifier.wake(to);
    } else if (!target.strict) {
      wake_someone(rt, to);
    }
    return;
  }
  NodeQueues& n = *rt->nodes[target.node];
  mark_hints_used(rt);
  if (target.strict) {
    n.strict_queue.push(t);
  } else {
    // Counted before the push (see NodeLoad); a push onto an empty queue
    // starts its waiting time.
    if (n.load.queued.fetch_add(1, std::memory_order_relaxed) == 0)
      n.load.since.store(monotonic_ns(), std::memory_order_relaxed);
    n.loose_queue.push(t);
  }
  if (n.sleepers.load(std::memory_order_seq_cst) > 0 && rt->notifier.wake_one_on_node(target.node)) return;
  if (!target.strict) wake_someone(rt, rt->slots[n.workers.front()]);
}

AffineTask* take_affine(Worker* w, bool* busy) {
  AffineTask* t = w->strict_queue.pop(busy);
  if (!t && (t = w->loose_queue.pop(busy))) took_loose(w);
  if (!t && w->numa_node >= 0) {
    NodeQueues& n = *w->rt->nodes[w->numa_node];
    t = n.strict_queue.pop(busy);
    if (!t && (t = n.loose_queue.pop(busy))) took_loose(n.load);
  }
  if (t) bump(w->hinted_here);
  return t;
}

AffineTask* steal_loose(Worker* w, bool* busy, bool remote, std::int64_t idle_ns) {
  RuntimeCore* rt = w->rt;
  AffineTask* t = nullptr;
  for (int v : rt->victims[w->index].workers) {
    Worker* victim = rt->slots[v];
    const bool same_node = w->numa_node >= 0 && victim->numa_node == w->numa_node;
    if (!same_node && (!remote || !worker_lends(rt, victim, idle_ns))) continue;
    if ((t = victim->loose_queue.pop(busy))) {
      took_loose(victim);
      break;
    }
  }
  if (!t && remote) {
    auto take = [&](int m) {
      if (!lends(rt, m, idle_ns)) return false;
      NodeQueues& n = *rt->nodes[m];
      if (!(t = n.loose_queue.pop(busy))) return false;
      took_loose(n.load);
      return true;
    };
    if (w->numa_node >= 0) {
      for (int m : rt->nodes[w->numa_node]->steal_order)
        if (take(m)) break;
    } else {
      for (int m = 0; m < num_numa_nodes(rt); ++m)
        if (take(m)) break;
    }
  }
  if (t) bump(w->hinted_away);
  return t;
}

bool affine_work_visible(RuntimeCore* rt, Worker* w) {
  if (!rt->hints_used.load(std::memory_order_seq_cst)) return false;
  if (bubble_work_visible(rt, w)) return true;
  if (w->strict_queue.looks_nonempty() || w->loose_queue.looks_nonempty()) return true;
  for (int m = 0; m < num_numa_nodes(rt); ++m) {
    const NodeQueues& n = *rt->nodes[m];
    if ((m == w->numa_node && n.strict_queue.looks_nonempty()) || n.loose_queue.looks_nonempty()) return true;
  }
  for (int i = 0; i < rt->num_workers; ++i)
    if (i != w->index && rt->slots[i]->loose_queue.looks_nonempty()) return true;
  return false;
}

}  // namespace detail
}  // namespace canopy
