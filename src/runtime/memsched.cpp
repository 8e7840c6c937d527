// The memory scheduler (memsched.hpp, docs/groups-memory.md): the decision
// (plan_memory, a pure function), and the phase hook Bubble::split calls,
// which reads where the attached handles' pages are (first-touch learning
// looks again where pages were not placed yet), plans, migrates with the
// verified page-by-page migration (data_try_move_to_node: pages the kernel
// did not move are counted, never ignored) and counts. Groups without
// attached data never get here: split tests one vector's emptiness per
// child, and spawning is not touched.
#include "runtime/memsched.hpp"

#include <algorithm>
#include <atomic>
#include <numeric>

#include "canopy/data.hpp"
#include "canopy/topology.hpp"
#include "data/migration_cost.hpp"
#include "runtime/runtime_core.hpp"

namespace canopy {
namespace detail {

double MemModel::remote_factor(int a, int b) const {
  if (a == b) return 1;
  if (a >= 0 && b >= 0 && static_cast<std::size_t>(a) < factor.size() &&
      static_cast<std::size_t>(b) < factor[static_cast<std::size_t>(a)].size())
    return factor[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)];
  return 2;
}

namespace {

std::size_t bytes_on(const std::vector<std::size_t>& per_node, const std::vector<int>& nodes) {
  std::size_t s = 0;
  for (int n : nodes)
    if (n >= 0 && static_cast<std::size_t>(n) < per_node.size()) s += per_node[static_cast<std::size_t>(n)];
  return s;
}

std::size_t local_bytes(const MemGroup& g, const std::vector<int>& nodes) {
  std::size_t s = 0;
  for (const auto& h : g.handle_bytes) s += bytes_on(h, nodes);
  return s;
}

std::size_t total_bytes(const MemGroup& g) {
  std::size_t s = 0;
  for (const auto& h : g.handle_bytes) s += std::accumulate(h.begin(), h.end(), std::size_t{0});
  return s;
}

}  // namespace

MemPlan plan_memory(const std::vector<std::vector<int>>& domain_nodes, const std::vector<MemGroup>& groups,
                    const MemModel& model) {
  const std::size_t n = groups.size();
  MemPlan p;
  p.domain.resize(n);
  for (std::size_t i = 0; i < n; ++i) p.domain[i] = groups[i].domain;
  auto nodes_of = [&](int d) -> const std::vector<int>& { return domain_nodes.at(static_cast<std::size_t>(d)); };

  // Moving the work: within each class of equal work, the domains the class
  // got are dealt out again, most local bytes first.
  std::vector<bool> done(n, false);
  for (std::size_t first = 0; first < n; ++first) {
    if (done[first]) continue;
    std::vector<std::size_t> cls;
    for (std::size_t i = first; i < n; ++i)
      if (!done[i] && groups[i].work == groups[first].work) {
        cls.push_back(i);
        done[i] = true;
      }
    std::vector<int> doms;
    for (std::size_t i : cls) doms.push_back(groups[i].domain);
    std::vector<bool> g_used(cls.size(), false), d_used(doms.size(), false);
    for (std::size_t round = 0; round < cls.size(); ++round) {
      std::size_t bg = 0, bd = 0, best = 0;
      bool own = false, found = false;
      for (std::size_t a = 0; a < cls.size(); ++a) {
        if (g_used[a]) continue;
        for (std::size_t b = 0; b < doms.size(); ++b) {
          if (d_used[b]) continue;
          const std::size_t l = local_bytes(groups[cls[a]], nodes_of(doms[b]));
          const bool is_own = doms[b] == groups[cls[a]].domain;
          if (!found || l > best || (l == best && is_own && !own)) {
            found = true;
            best = l;
            own = is_own;
            bg = a;
            bd = b;
          }
        }
      }
      g_used[bg] = true;
      d_used[bd] = true;
      p.domain[cls[bg]] = doms[bd];
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    p.groups_moved += p.domain[i] != groups[i].domain;
    p.attached += total_bytes(groups[i]);
    p.local_before += local_bytes(groups[i], nodes_of(groups[i].domain));
    p.local_placed += local_bytes(groups[i], nodes_of(p.domain[i]));
  }
  if (!model.can_migrate) return p;

  // Migrating: the groups with the most attached bytes choose first.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return total_bytes(groups[a]) > total_bytes(groups[b]); });
  // plan_memory sees bytes, not handles: a handle attached to two groups
  // is moved once, by the first move memsched_phase finds for it.
  for (std::size_t i : order) {
    const std::vector<int>& nodes = nodes_of(p.domain[i]);
    if (nodes.size() != 1) continue;  // no single node to bring the data to
    const int to = nodes.front();
    const MemGroup& g = groups[i];
    for (std::size_t h = 0; h < g.handle_bytes.size(); ++h) {
      const std::vector<std::size_t>& per = g.handle_bytes[h];
      std::size_t away = 0;
      double saved = 0;
      for (std::size_t s = 0; s < per.size(); ++s) {
        if (static_cast<int>(s) == to || per[s] == 0) continue;
        away += per[s];
        saved += static_cast<double>(per[s]) * (model.remote_factor(to, static_cast<int>(s)) - 1);
      }
      if (away == 0) continue;
      saved *= g.passes * model.read_ns_per_byte;
      const double cost = model.fixed_ns + static_cast<double>(away) * model.migrate_ns_per_byte;
      if (cost < saved)
        p.moves.push_back({static_cast<int>(i), static_cast<int>(h), to, away});
    }
  }
  return p;
}

namespace {

std::atomic<std::uint64_t> st_phases{0}, st_groups{0}, st_moved{0}, st_handles{0}, st_attached{0},
    st_local_before{0}, st_local_after{0}, st_bytes{0}, st_pages{0}, st_not_moved{0};
std::atomic<const data_impl::MigrationCost*> st_model{nullptr};  // set once measured (the stats show it)

MemModel measured_model(const RuntimeCore* rt) {
  MemModel m;
  const data_impl::MigrationCost& c = data_impl::migration_cost();
  st_model.store(&c, std::memory_order_release);
  m.can_migrate = c.measured;
  m.fixed_ns = c.fixed_ns;
  m.migrate_ns_per_byte = c.ns_per_byte;
  m.read_ns_per_byte = c.read_ns_per_byte;
  const auto& nd = rt->topology->numa_distances();
  m.factor.assign(nd.size(), std::vector<double>(nd.size(), 2.0));
  for (std::size_t a = 0; a < nd.size(); ++a)
    for (std::size_t b = 0; b < nd.size() && b < nd[a].size(); ++b)
      if (nd[a][a] > 0) m.factor[a][b] = static_cast<double>(nd[a][b]) / static_cast<double>(nd[a][a]);
  return m;
}

}  // namespace

void memsched_phase(RuntimeCore* rt, const std::vector<BubbleOptions>& children, const std::vector<double>& work,
                    std::vector<int>* where) {
  if (rt->nodes.size() < 2) return;
  std::vector<std::vector<int>> domain_nodes;
  for (const auto& q : rt->domains) {
    std::vector<int> ns;
    for (int x : q->shape.workers) ns.push_back(rt->slots[static_cast<std::size_t>(x)]->machine_node);
    std::sort(ns.begin(), ns.end());
    ns.erase(std::unique(ns.begin(), ns.end()), ns.end());
    domain_nodes.push_back(std::move(ns));
  }
  std::vector<MemGroup> groups(children.size());
  for (std::size_t i = 0; i < children.size(); ++i) {
    groups[i].work = work[i];
    groups[i].domain = (*where)[i];
    groups[i].passes = children[i].passes > 0 ? children[i].passes : 1;
    for (Data d : children[i].data) groups[i].handle_bytes.push_back(data_bytes_per_node(d));
  }
  // Only the real machine's nodes can be migrated to (a synthetic runtime
  // topology may name more).
  // The costs are measured (once per process) only when some attached
  // bytes stay off their group's node once the work has moved.
  MemPlan plan = plan_memory(domain_nodes, groups, MemModel{});
  if (plan.local_placed < plan.attached) plan = plan_memory(domain_nodes, groups, measured_model(rt));
  const int machine_nodes = data_num_nodes();
  *where = plan.domain;
  std::uint64_t local_after = plan.local_placed;
  std::vector<std::pair<Data, int>> done;  // a handle attached to several groups moves once
  for (const MemMove& mv : plan.moves) {
    const Data d = children[static_cast<std::size_t>(mv.group)].data[static_cast<std::size_t>(mv.handle)];
    if (mv.node >= machine_nodes) continue;
    if (std::any_of(done.begin(), done.end(), [&](const auto& x) { return x.first == d; })) continue;
    done.emplace_back(d, mv.node);
    const DataMoveResult r = data_try_move_to_node(d, mv.node);
    const std::size_t page = data_page_size();
    st_handles.fetch_add(1, std::memory_order_relaxed);
    st_pages.fetch_add(r.moved, std::memory_order_relaxed);
    st_bytes.fetch_add(r.moved * page, std::memory_order_relaxed);
    st_not_moved.fetch_add(r.left, std::memory_order_relaxed);
  }
  if (!done.empty()) {  // measured again: what the kernel did, not what was asked
    local_after = 0;
    for (std::size_t i = 0; i < children.size(); ++i) {
      MemGroup g;
      for (Data d : children[i].data) g.handle_bytes.push_back(data_bytes_per_node(d));
      local_after += local_bytes(g, domain_nodes[static_cast<std::size_t>(plan.domain[i])]);
    }
  }
  st_phases.fetch_add(1, std::memory_order_relaxed);
  st_groups.fetch_add(children.size(), std::memory_order_relaxed);
  st_moved.fetch_add(static_cast<std::uint64_t>(plan.groups_moved), std::memory_order_relaxed);
  st_attached.fetch_add(plan.attached, std::memory_order_relaxed);
  st_local_before.fetch_add(plan.local_before, std::memory_order_relaxed);
  st_local_after.fetch_add(local_after, std::memory_order_relaxed);
}

}  // namespace detail

MemorySchedulerStats memory_scheduler_stats() {
  MemorySchedulerStats s;
  s.phases = detail::st_phases.load(std::memory_order_relaxed);
  s.groups = detail::st_groups.load(std::memory_order_relaxed);
  s.groups_moved = detail::st_moved.load(std::memory_order_relaxed);
  s.handles_migrated = detail::st_handles.load(std::memory_order_relaxed);
  s.bytes_attached = detail::st_attached.load(std::memory_order_relaxed);
  s.bytes_local_before = detail::st_local_before.load(std::memory_order_relaxed);
  s.bytes_local_after = detail::st_local_after.load(std::memory_order_relaxed);
  s.bytes_migrated = detail::st_bytes.load(std::memory_order_relaxed);
  s.pages_migrated = detail::st_pages.load(std::memory_order_relaxed);
  s.pages_not_moved = detail::st_not_moved.load(std::memory_order_relaxed);
  if (const data_impl::MigrationCost* c = detail::st_model.load(std::memory_order_acquire); c && c->measured) {
    s.model_measured = true;
    s.migrate_fixed_ns = c->fixed_ns;
    s.migrate_ns_per_byte = c->ns_per_byte;
    s.read_ns_per_byte = c->read_ns_per_byte;
  }
  return s;
}

}  // namespace canopy
