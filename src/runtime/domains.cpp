// Domains of a runtime's workers and the placement of groups on them
// (domains.hpp): the tree walk, the share of workers, and the
// longest-processing-time placement.
#include "runtime/domains.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "canopy/topology.hpp"

namespace canopy::detail {

std::vector<Domain> build_domains(const Topology& topo, const std::vector<int>& worker_pu) {
  // Workers below each tree node: a node's PUs are [first_pu, first_pu + num_pus).
  const int n = static_cast<int>(worker_pu.size());
  auto workers_below = [&](const TopoNode& t) {
    std::vector<int> out;
    for (int i = 0; i < n; ++i)
      if (worker_pu[i] >= t.first_pu && worker_pu[i] < t.first_pu + t.num_pus) out.push_back(i);
    return out;
  };
  std::vector<Domain> out;
  Domain root;
  root.topo_node = topo.root().id;
  root.workers.resize(n);
  std::iota(root.workers.begin(), root.workers.end(), 0);
  out.push_back(root);
  // Depth-first in tree order: (tree node, domain it falls in).
  struct Item {
    int node, domain;
  };
  std::vector<Item> stack;
  const auto& kids = topo.root().children;
  for (auto it = kids.rbegin(); it != kids.rend(); ++it) stack.push_back({*it, 0});
  while (!stack.empty()) {
    const Item item = stack.back();
    stack.pop_back();
    const TopoNode& t = topo.node(item.node);
    std::vector<int> ws = workers_below(t);
    if (ws.empty()) continue;
    int dom = item.domain;
    if (ws.size() == out[dom].workers.size()) {
      out[dom].topo_node = t.id;  // the same workers: the deeper node names the domain
    } else {
      Domain d;
      d.parent = dom;
      d.depth = out[dom].depth + 1;
      d.topo_node = t.id;
      d.workers = std::move(ws);
      out.push_back(std::move(d));
      const int id = static_cast<int>(out.size()) - 1;
      out[dom].children.push_back(id);
      dom = id;
    }
    for (auto it = t.children.rbegin(); it != t.children.rend(); ++it) stack.push_back({*it, dom});
  }
  return out;
}

std::vector<std::vector<int>> domains_of_workers(const std::vector<Domain>& domains, int num_workers) {
  std::vector<std::vector<int>> out(num_workers);
  // Deeper domains first: walk the domains from the last (children follow parents).
  for (int d = static_cast<int>(domains.size()) - 1; d >= 0; --d)
    for (int w : domains[d].workers)
      if (w < num_workers) out[w].push_back(d);
  for (auto& v : out)
    std::stable_sort(v.begin(), v.end(), [&](int a, int b) { return domains[a].depth > domains[b].depth; });
  return out;
}

int group_share(double work, double total, int workers) {
  if (workers <= 1 || !(total > 0) || !(work > 0)) return 1;
  const double share = static_cast<double>(workers) * work / total;
  // A share a hair above an integer (rounding) is that integer.
  const int need = static_cast<int>(std::ceil(share - 1e-9));
  return std::clamp(need, 1, workers);
}

namespace {

double mean_load(const Domain& d, const std::vector<double>& load) {
  double l = 0;
  for (int x : d.workers) l += load[x];
  return l / static_cast<double>(d.workers.size());
}

// Lexicographic, with a tolerance (loads are sums of divisions).
bool less_key(const std::vector<double>& a, const std::vector<double>& b) {
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] < b[i] - 1e-9) return true;
    if (a[i] > b[i] + 1e-9) return false;
  }
  return false;
}

}  // namespace

bool domain_within(const std::vector<Domain>& domains, int inner, int outer) {
  for (int d = inner; d >= 0; d = domains[d].parent)
    if (d == outer) return true;
  return false;
}

std::vector<int> place_groups(const std::vector<Domain>& domains, int parent, const std::vector<double>& work,
                              std::vector<double>* worker_load) {
  const std::size_t g = work.size();
  std::vector<int> out(g, parent);
  if (g == 0) return out;
  // Unknown work: the mean of the known, or 1.
  double known = 0;
  int nknown = 0;
  for (double w : work)
    if (w > 0) {
      known += w;
      ++nknown;
    }
  const double fill = nknown > 0 ? known / nknown : 1.0;
  std::vector<double> w(g);
  for (std::size_t i = 0; i < g; ++i) w[i] = work[i] > 0 ? work[i] : fill;
  const double total = std::accumulate(w.begin(), w.end(), 0.0);

  // The domains at or below `parent`, in tree order (ids grow in tree order).
  std::vector<int> below;
  for (int d = 0; d < static_cast<int>(domains.size()); ++d)
    if (domain_within(domains, d, parent)) below.push_back(d);

  int max_worker = 0;
  for (const Domain& d : domains)
    for (int x : d.workers) max_worker = std::max(max_worker, x + 1);
  std::vector<double> local_load;
  std::vector<double>& load = worker_load ? *worker_load : local_load;
  if (load.size() < static_cast<std::size_t>(max_worker)) load.resize(max_worker, 0.0);

  std::vector<std::size_t> order(g);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return w[a] > w[b]; });
  const int parent_workers = static_cast<int>(domains[parent].workers.size());
  for (std::size_t i : order) {
    const int need = group_share(w[i], total, parent_workers);
    // The smallest size of a domain below parent that holds `need` workers.
    std::size_t best_size = domains[parent].workers.size();
    for (int d : below)
      if (static_cast<int>(domains[d].workers.size()) >= need) best_size = std::min(best_size, domains[d].workers.size());
    // Hierarchically least loaded: compare the candidates' ancestors below
    // `parent` first (the subtree of the parent with the least work per
    // worker), then the next level down, ..., then the candidate itself, so
    // that the parent's subtrees end with similar work, not just its
    // smallest domains.
    int best = -1;
    std::vector<double> best_key;
    for (int d : below) {
      if (domains[d].workers.size() != best_size) continue;
      std::vector<double> key;
      for (int a = d; a != parent && a >= 0; a = domains[a].parent) key.push_back(mean_load(domains[a], load));
      std::reverse(key.begin(), key.end());
      if (best < 0 || less_key(key, best_key)) {
        best = d;
        best_key = std::move(key);
      }
    }
    if (best < 0) best = parent;  // (parent itself is a candidate of size best_size)
    out[i] = best;
    const double per = w[i] / static_cast<double>(domains[best].workers.size());
    for (int x : domains[best].workers) load[x] += per;
  }
  return out;
}

}  // namespace canopy::detail
