// The `treematch` policy (Jeannot, Mercier, Tessier: "Process placement in
// multicore clusters: algorithmic issues and practical techniques", IEEE TPDS
// 25(4), 2014). Bottom-up over the tree: at each level, list candidate groups
// of the level's arity, value each by its communication with the outside
// (sum of its members' row sums minus twice the weight inside), pick
// non-overlapping candidates greedily, lowest value first, aggregate the
// matrix and go up; finally assign top-down.
//
// Candidates: every possible group when there are at most kExhaustive of
// them (TreeMatch's exhaustive list, exact for small problems); otherwise a
// bounded deterministic search: pairs from each entity's heaviest
// neighbours, and larger groups grown greedily from each entity and a few of
// its heaviest neighbours. No wall-clock bound: same input, same result.
// Irregular levels: candidates are built per composition (typed entities),
// see docs/policies/treematch.md.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>

#include "mapping/grouping.hpp"
#include "mapping/hierarchy.hpp"
#include "mapping/policies.hpp"

namespace canopy::policy {

namespace {

using grouping::Graph;
using grouping::Problem;

// Candidate groups listed in full when there are at most this many.
constexpr double kExhaustive = 2000;

struct Candidates {
  std::vector<double> value;
  std::vector<int> comp;
  std::vector<int> offset{0};
  std::vector<int> members;  // flat, each group sorted

  void add(double v, int c, std::vector<int> g) {
    std::sort(g.begin(), g.end());
    value.push_back(v);
    comp.push_back(c);
    members.insert(members.end(), g.begin(), g.end());
    offset.push_back(static_cast<int>(members.size()));
  }
  size_t size() const { return value.size(); }
  std::vector<int> group(size_t i) const { return {members.begin() + offset[i], members.begin() + offset[i + 1]}; }
};

// Communication of a group with the outside.
double external(const Graph& g, const std::vector<int>& members) {
  double v = 0.0;
  for (size_t a = 0; a < members.size(); ++a) {
    v += g.rowsum(members[a]);
    for (size_t b = a + 1; b < members.size(); ++b) v -= 2.0 * g.between(members[a], members[b]);
  }
  return v;
}

std::vector<std::vector<int>> entities_by_type(const Problem& p, int max_type) {
  std::vector<std::vector<int>> by(max_type + 1);
  for (int e = 0; e < p.graph.size(); ++e) by[p.type[e]].push_back(e);
  return by;
}

double binom(double n, double k) {
  double r = 1;
  for (int i = 0; i < k; ++i) r = r * (n - i) / (i + 1);
  return r;
}

// Every group of every composition.
void enumerate_all(const Problem& p, const std::vector<std::vector<int>>& by_type, Candidates& out) {
  for (size_t c = 0; c < p.comps.size(); ++c) {
    const auto& need = p.comps[c].need;
    std::vector<int> cur;
    // Choose need[ti].second entities of type need[ti].first, then the next type.
    auto rec = [&](auto&& self, size_t ti, size_t from, int left) -> void {
      if (ti == need.size()) {
        out.add(external(p.graph, cur), static_cast<int>(c), cur);
        return;
      }
      const std::vector<int>& pool = by_type[need[ti].first];
      if (left == 0) {
        self(self, ti + 1, 0, ti + 1 < need.size() ? need[ti + 1].second : 0);
        return;
      }
      for (size_t i = from; i + left <= pool.size(); ++i) {
        cur.push_back(pool[i]);
        self(self, ti, i + 1, left - 1);
        cur.pop_back();
      }
    };
    rec(rec, 0, 0, need.front().second);
  }
}

// Each entity's heaviest neighbours, best first (ties: lowest id).
std::vector<std::vector<std::pair<double, int>>> heaviest(const Graph& g, int M) {
  std::vector<std::vector<std::pair<double, int>>> top(g.size());
  std::vector<std::pair<double, int>> row;
  auto better = [](const std::pair<double, int>& a, const std::pair<double, int>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  for (int i = 0; i < g.size(); ++i) {
    row.clear();
    for (std::int64_t e = g.begin(i); e < g.end(i); ++e)
      if (g.weight(e) > 0) row.push_back({g.weight(e), g.col(e)});
    const size_t k = std::min<size_t>(M, row.size());
    std::partial_sort(row.begin(), row.begin() + k, row.end(), better);
    top[i].assign(row.begin(), row.begin() + k);
  }
  return top;
}

// The bounded search for large problems.
void search(const Problem& p, Candidates& out) {
  const Graph& g = p.graph;
  const int n = g.size();
  int kmax = 0, max_type = 0;
  for (const auto& c : p.comps) kmax = std::max(kmax, c.size);
  for (int t : p.type) max_type = std::max(max_type, t);
  const int M = kmax == 2 ? 16 : std::clamp(2 * kmax, 8, 32);
  const int B = kmax <= 4 ? 3 : kmax <= 16 ? 2 : 1;  // starts per seed
  const auto top = heaviest(g, M);

  std::vector<double> gain(n, 0.0);
  std::vector<int> stamp(n, -1), in_group(n, -1);
  std::vector<int> need(max_type + 1, 0);
  int round = 0;
  using Entry = std::pair<double, int>;  // (gain, -id): the heap's top is the best
  std::priority_queue<Entry> heap;

  for (size_t c = 0; c < p.comps.size(); ++c) {
    const grouping::Composition& comp = p.comps[c];
    auto reset_need = [&] {
      std::fill(need.begin(), need.end(), 0);
      for (const auto& [t, k] : comp.need) need[t] = k;
    };
    for (int i = 0; i < n; ++i) {
      reset_need();
      if (need[p.type[i]] == 0) continue;
      if (comp.size == 1) {
        out.add(g.rowsum(i), static_cast<int>(c), {i});
        continue;
      }
      int starts = 0;
      for (const auto& [w, j] : top[i]) {
        reset_need();
        --need[p.type[i]];
        if (need[p.type[j]] == 0) continue;
        if (comp.size == 2) {
          out.add(g.rowsum(i) + g.rowsum(j) - 2.0 * w, static_cast<int>(c), {i, j});
          continue;
        }
        if (starts++ == B) break;
        // Grow {i, j} greedily over the members' heaviest neighbours.
        ++round;
        reset_need();
        heap = {};
        std::vector<int> group;
        double inside = 0.0;
        bool exact = true;
        auto add = [&](int v, double gained) {
          group.push_back(v);
          in_group[v] = round;
          --need[p.type[v]];
          inside += gained;
          exact = exact && g.degree(v) <= M;
          for (const auto& [wu, u] : top[v]) {
            if (in_group[u] == round) continue;
            if (stamp[u] != round) {
              stamp[u] = round;
              gain[u] = 0.0;
            }
            gain[u] += wu;
            heap.push({gain[u], -u});
          }
        };
        add(i, 0.0);
        add(j, gain[j]);
        while (static_cast<int>(group.size()) < comp.size) {
          int pick = -1;
          while (!heap.empty()) {
            auto [gu, mu] = heap.top();
            heap.pop();
            const int u = -mu;
            if (in_group[u] == round || gu != gain[u] || need[p.type[u]] == 0) continue;
            pick = u;
            break;
          }
          if (pick < 0) break;  // the neighbourhood ran out: no candidate from this start
          add(pick, gain[pick]);
        }
        if (static_cast<int>(group.size()) < comp.size) continue;
        double value = 0.0;
        if (exact) {
          for (int v : group) value += g.rowsum(v);
          value -= 2.0 * inside;
        } else {
          value = external(g, group);
        }
        out.add(value, static_cast<int>(c), std::move(group));
      }
    }
  }
}

grouping::Grouping treematch_groups(const Problem& p) {
  int max_type = 0;
  for (int t : p.type) max_type = std::max(max_type, t);
  const auto by_type = entities_by_type(p, max_type);
  double count = 0;
  for (const auto& c : p.comps) {
    double k = 1;
    for (const auto& [t, n] : c.need) k *= binom(static_cast<double>(by_type[t].size()), n);
    count += k;
  }
  Candidates cand;
  if (count <= kExhaustive)
    enumerate_all(p, by_type, cand);
  else
    search(p, cand);

  // Lowest communication with the outside first; ties by composition, then members.
  std::vector<int> order(cand.size());
  std::iota(order.begin(), order.end(), 0);
  auto members_less = [&](int a, int b) {
    return std::lexicographical_compare(cand.members.begin() + cand.offset[a], cand.members.begin() + cand.offset[a + 1],
                                        cand.members.begin() + cand.offset[b], cand.members.begin() + cand.offset[b + 1]);
  };
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (cand.value[a] != cand.value[b]) return cand.value[a] < cand.value[b];
    if (cand.comp[a] != cand.comp[b]) return cand.comp[a] < cand.comp[b];
    return members_less(a, b);
  });

  grouping::Filler f(p);
  for (int i : order) {
    if (f.open(cand.comp[i]) == 0) continue;
    bool free = true;
    for (int k = cand.offset[i]; k < cand.offset[i + 1] && free; ++k) free = f.is_free(cand.members[k]);
    if (free) f.take(cand.comp[i], cand.group(i));
  }
  // What the candidates did not cover is grouped greedily, in id order.
  std::vector<int> ids(p.graph.size());
  std::iota(ids.begin(), ids.end(), 0);
  return f.finish({}, ids);
}

}  // namespace

std::vector<int> treematch(const Topology& topo, const CommMatrix& m, const MapOptions&, const Slots& slots) {
  return grouping::hierarchical_map(topo, m, slots, treematch_groups);
}

}  // namespace canopy::policy
