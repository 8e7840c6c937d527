// choose_slots: how many tasks each PU receives, before any policy runs.
//
// - T >= P: every PU gets floor(T/P); the T mod P extra tasks are spread over
//   the tree top-down, in proportion to the PUs below each node.
// - T < P, spread (default): T is spread top-down in proportion to the cores
//   below each node, one task per core (its first PU) before any hyperthread
//   sibling; siblings are then used, spread the same way.
// - T < P, pack: the fewest NUMA nodes that hold T tasks (the earliest such
//   set in tree order), filled one task per core first, in order.
// - helpers smt: one task per core on cores with at least two PUs, so that a
//   sibling stays free for the task's helper threads.
//
// Every split uses the largest-remainder method in integer arithmetic, with
// ties spread at an even stride over the tied children, so the result is
// deterministic and no child receives more than its share rounded up.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "canopy/topology.hpp"

namespace canopy {

namespace {

// Split d (<= sum of w) into parts proportional to w, largest remainder first;
// among equal remainders, pick at an even stride in child order.
std::vector<int> largest_remainder(int d, const std::vector<std::int64_t>& w) {
  const int n = static_cast<int>(w.size());
  std::vector<int> out(n, 0);
  const std::int64_t W = std::accumulate(w.begin(), w.end(), std::int64_t{0});
  if (d <= 0 || W == 0) return out;
  std::vector<std::int64_t> rem(n);
  int left = d;
  for (int i = 0; i < n; ++i) {
    out[i] = static_cast<int>(d * w[i] / W);
    rem[i] = d * w[i] % W;
    left -= out[i];
  }
  // Children by remainder, largest first; stable keeps child order within ties.
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return rem[a] > rem[b]; });
  for (int s = 0; s < n && left > 0;) {
    int e = s;
    while (e < n && rem[order[e]] == rem[order[s]]) ++e;
    const int m = e - s;
    if (m <= left) {
      for (int i = s; i < e; ++i) ++out[order[i]];
      left -= m;
    } else {
      // Tied group sorted back into child order, then an even stride over it.
      std::vector<int> tied(order.begin() + s, order.begin() + e);
      std::sort(tied.begin(), tied.end());
      for (int j = 0; j < left; ++j) ++out[tied[static_cast<std::int64_t>(j) * m / left]];
      left = 0;
    }
    s = e;
  }
  return out;
}

// Number of eligible leaves below every tree node.
std::vector<std::int64_t> count_eligible(const Topology& topo, const std::vector<char>& eligible) {
  std::vector<std::int64_t> cnt(topo.nodes().size(), 0);
  for (int l = topo.leaf_level(); l >= 0; --l)
    for (int id : topo.level_nodes(l)) {
      const TopoNode& n = topo.node(id);
      if (l == topo.leaf_level()) {
        cnt[id] = eligible[n.first_pu];
      } else {
        for (int c : n.children) cnt[id] += cnt[c];
      }
    }
  return cnt;
}

// Adds d tasks, at most one per eligible PU, spread top-down over the tree.
void spread(const Topology& topo, int d, const std::vector<char>& eligible, std::vector<int>& cap) {
  if (d <= 0) return;
  std::vector<std::int64_t> cnt = count_eligible(topo, eligible);
  std::vector<int> demand(topo.nodes().size(), 0);
  demand[topo.root().id] = d;
  for (int l = 0; l <= topo.leaf_level(); ++l)
    for (int id : topo.level_nodes(l)) {
      if (demand[id] == 0) continue;
      const TopoNode& n = topo.node(id);
      if (l == topo.leaf_level()) {
        cap[n.first_pu] += demand[id];  // demand <= eligible count = 1 here
        continue;
      }
      std::vector<std::int64_t> w;
      for (int c : n.children) w.push_back(cnt[c]);
      std::vector<int> part = largest_remainder(demand[id], w);
      for (size_t i = 0; i < n.children.size(); ++i) demand[n.children[i]] = part[i];
    }
}

// The shallowest level whose every node lies inside one NUMA node.
int numa_unit_level(const Topology& topo) {
  for (int l = 0; l <= topo.leaf_level(); ++l) {
    bool ok = true;
    for (int id : topo.level_nodes(l)) {
      const TopoNode& n = topo.node(id);
      for (int p = n.first_pu; p < n.first_pu + n.num_pus && ok; ++p)
        ok = topo.pu(p).numa == topo.pu(n.first_pu).numa;
      if (!ok) break;
    }
    if (ok) return l;
  }
  return topo.leaf_level();
}

// Pack: the earliest (in tree order) smallest set of NUMA units whose
// eligible PUs hold d tasks, filled primaries first, then the others, in order.
void pack(const Topology& topo, int d, const std::vector<char>& primary, const std::vector<char>& secondary,
          std::vector<int>& cap) {
  std::vector<char> eligible(topo.num_pus(), 0);
  for (int p = 0; p < topo.num_pus(); ++p) eligible[p] = primary[p] || secondary[p];
  std::vector<std::int64_t> cnt = count_eligible(topo, eligible);
  const std::vector<int>& units = topo.level_nodes(numa_unit_level(topo));
  const int m = static_cast<int>(units.size());
  std::vector<std::int64_t> ucap(m);
  for (int i = 0; i < m; ++i) ucap[i] = cnt[units[i]];

  std::vector<std::int64_t> sorted = ucap;
  std::sort(sorted.rbegin(), sorted.rend());
  int k = 0;
  for (std::int64_t sum = 0; sum < d; ++k) sum += sorted[k];

  // Take unit i when the rest can still be completed with the largest units after it.
  std::vector<char> chosen(m, 0);
  std::int64_t need = d;
  int picks = k;
  for (int i = 0; i < m && picks > 0 && need > 0; ++i) {
    std::int64_t after = need - ucap[i];
    bool ok = after <= 0;
    if (!ok && picks > 1) {
      std::vector<std::int64_t> rest(ucap.begin() + i + 1, ucap.end());
      const int r = std::min<int>(picks - 1, static_cast<int>(rest.size()));
      std::partial_sort(rest.begin(), rest.begin() + r, rest.end(), std::greater<>());
      ok = std::accumulate(rest.begin(), rest.begin() + r, std::int64_t{0}) >= after;
    }
    if (ok && ucap[i] > 0) {
      chosen[i] = 1;
      need = after;
      --picks;
    }
  }
  int left = d;
  for (const std::vector<char>* phase : {&primary, &secondary})
    for (int i = 0; i < m && left > 0; ++i) {
      if (!chosen[i]) continue;
      const TopoNode& u = topo.node(units[i]);
      for (int p = u.first_pu; p < u.first_pu + u.num_pus && left > 0; ++p)
        if ((*phase)[p]) {
          ++cap[p];
          --left;
        }
    }
}

}  // namespace

Slots choose_slots(const Topology& topo, int num_tasks, const MapOptions& opt) {
  const int T = num_tasks;
  const int P = topo.num_pus();
  if (T < 1) throw Error(fmt::format("cannot map {} tasks: expected at least one", T));
  if (T > kMaxTasks) throw Error(fmt::format("cannot map {} tasks: the limit is {}", T, kMaxTasks));

  std::vector<char> primary(P, 0), secondary(P, 0);
  if (opt.helpers == Helpers::SMT) {
    int smt_cores = 0;
    for (const CoreInfo& c : topo.cores())
      if (c.pus.size() >= 2) {
        primary[c.pus.front()] = 1;
        ++smt_cores;
      }
    if (T > smt_cores)
      throw Error(fmt::format("--helpers smt keeps a hyperthread sibling free for each task: {} tasks need {} cores "
                              "with at least 2 PUs, but topology '{}' has {} such cores ({} cores, {} PUs)",
                              T, T, topo.source(), smt_cores, topo.num_cores(), P));
  } else {
    for (const CoreInfo& c : topo.cores())
      for (size_t i = 0; i < c.pus.size(); ++i) (i == 0 ? primary : secondary)[c.pus[i]] = 1;
  }

  Slots s;
  s.capacity.assign(P, 0);
  if (T >= P) {  // (helpers smt cannot get here: T <= cores with siblings < P)
    std::fill(s.capacity.begin(), s.capacity.end(), T / P);
    spread(topo, T % P, std::vector<char>(P, 1), s.capacity);
  } else if (opt.pack) {
    pack(topo, T, primary, secondary, s.capacity);
  } else {
    int on_primaries = std::min<int>(T, static_cast<int>(std::count(primary.begin(), primary.end(), 1)));
    spread(topo, on_primaries, primary, s.capacity);
    spread(topo, T - on_primaries, secondary, s.capacity);
  }
  return s;
}

}  // namespace canopy
