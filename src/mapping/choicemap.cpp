// The `choicemap` policy (Soomro, Sasongko, Unat: "BindMe: a thread binding
// library with advanced mapping algorithms", Concurrency and Computation:
// Practice and Experience 30(21), 2018). Tasks pair up by mutual preference:
// each ranks the others by how much it communicates with them (ties: lowest
// id), and the pairs are a stable roommates matching (Irving's algorithm,
// with cycle breaking: roommates.hpp).
//
// Preference lists hold each task's 32 heaviest partners, made mutual (i
// accepts j when either ranks the other); on sparse matrices that is every
// neighbour. Levels of arity k > 2 repeat the pairing on the clusters built so far
// (cluster graph aggregated after every round), accepting only pairs whose
// union still fits a group of the level, until the clusters reach the group
// size or no acceptable pair is left; clusters that match a group exactly
// are kept, the rest are completed greedily. See docs/policies/choicemap.md.
#include <algorithm>
#include <map>
#include <numeric>

#include "mapping/grouping.hpp"
#include "mapping/hierarchy.hpp"
#include "mapping/policies.hpp"
#include "mapping/roommates.hpp"

namespace canopy::policy {

namespace {

using grouping::Graph;
using grouping::Problem;
using grouping::TypeCount;

// Partners each cluster ranks (the heaviest ones); bounds the lists on dense matrices.
constexpr size_t kListLength = 32;

struct Cluster {
  std::vector<int> members;
  TypeCount types;
  double inside = 0.0;
  bool done = false;
};

grouping::Grouping choicemap_groups(const Problem& p) {
  const int n = p.graph.size();
  grouping::Filler f(p);
  std::vector<Cluster> cl(n);
  for (int e = 0; e < n; ++e) cl[e] = {{e}, {{p.type[e], 1}}, 0.0, false};

  // A cluster may still grow if an open composition strictly contains it.
  auto can_grow = [&](const TypeCount& t) {
    const int s = grouping::total(t);
    for (size_t c = 0; c < p.comps.size(); ++c)
      if (f.open(static_cast<int>(c)) > 0 && p.comps[c].size > s && grouping::contains(p.comps[c].need, t))
        return true;
    return false;
  };

  Graph owned;
  const Graph* g = &p.graph;  // vertex i = cluster i
  while (true) {
    const int m = static_cast<int>(cl.size());
    std::vector<char> active(m);
    for (int i = 0; i < m; ++i) active[i] = !cl[i].done && can_grow(cl[i].types);
    // Which clusters may merge depends only on their type multisets: cache it.
    std::map<TypeCount, int> type_ids;
    std::vector<int> tid(m);
    for (int i = 0; i < m; ++i) tid[i] = type_ids.emplace(cl[i].types, static_cast<int>(type_ids.size())).first->second;
    std::vector<const TypeCount*> id_types(type_ids.size());
    for (const auto& [t, id] : type_ids) id_types[id] = &t;
    std::vector<signed char> fits(type_ids.size() * type_ids.size(), -1);
    auto fit = [&](int a, int b) {
      signed char& v = fits[tid[a] * type_ids.size() + tid[b]];
      if (v < 0) v = f.find_comp(grouping::merged(*id_types[tid[a]], *id_types[tid[b]])) >= 0;
      return v == 1;
    };
    // Preference lists: each cluster's kListLength heaviest acceptable
    // partners, made mutual (j is on i's list when either lists the other),
    // most communication first, ties by lowest id.
    auto better = [](const std::pair<double, int>& a, const std::pair<double, int>& b) {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    };
    std::vector<std::vector<std::pair<double, int>>> lists(m);
    std::vector<std::pair<double, int>> row;
    for (int i = 0; i < m; ++i) {
      if (!active[i]) continue;
      row.clear();
      for (std::int64_t e = g->begin(i); e < g->end(i); ++e) {
        const int j = g->col(e);
        if (active[j] && g->weight(e) > 0 && fit(i, j)) row.push_back({g->weight(e), j});
      }
      const size_t keep = std::min<size_t>(kListLength, row.size());
      std::partial_sort(row.begin(), row.begin() + keep, row.end(), better);
      for (size_t k = 0; k < keep; ++k) {
        lists[i].push_back(row[k]);
        lists[row[k].second].push_back({row[k].first, i});
      }
    }
    std::vector<std::vector<int>> prefs(m);
    for (int i = 0; i < m; ++i) {
      auto& l = lists[i];
      std::sort(l.begin(), l.end(), better);
      l.erase(std::unique(l.begin(), l.end()), l.end());
      for (const auto& r : l) prefs[i].push_back(r.second);
      l = {};
    }
    const grouping::RoommatesResult match = grouping::stable_roommates(prefs);

    // Merge the pairs, heaviest first, keeping what still fits.
    std::vector<std::pair<int, int>> pairs;
    for (int i = 0; i < m; ++i)
      if (match.partner[i] > i) pairs.push_back({i, match.partner[i]});
    if (pairs.empty()) break;
    std::vector<double> w(pairs.size());
    for (size_t k = 0; k < pairs.size(); ++k) w[k] = g->between(pairs[k].first, pairs[k].second);
    std::vector<int> order(pairs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      double wa = cl[pairs[a].first].inside + cl[pairs[a].second].inside + w[a];
      double wb = cl[pairs[b].first].inside + cl[pairs[b].second].inside + w[b];
      return wa > wb;
    });
    std::vector<int> partner(m, -1);
    bool merged_any = false;
    for (int k : order) {
      auto [a, b] = pairs[k];
      TypeCount t = grouping::merged(cl[a].types, cl[b].types);
      int exact = f.exact_comp(t);
      bool finished = exact >= 0 && !can_grow(t);
      if (!finished && f.find_comp(t) < 0) continue;  // no longer fits: the pair is undone
      partner[a] = b;
      partner[b] = a;
      merged_any = true;
      if (finished) {
        std::vector<int> members = cl[a].members;
        members.insert(members.end(), cl[b].members.begin(), cl[b].members.end());
        f.take(exact, members);
        cl[a].done = true;  // marks the merged cluster (built below) as done
      }
    }
    if (!merged_any) break;

    // New clusters: merged pairs at the smaller index, others unchanged.
    std::vector<Cluster> next;
    std::vector<std::vector<int>> groups;
    std::vector<int> group_of(m, -1);
    for (int i = 0; i < m; ++i) {
      if (partner[i] >= 0 && partner[i] < i) continue;
      group_of[i] = static_cast<int>(next.size());
      groups.push_back({i});
      Cluster c = std::move(cl[i]);
      if (partner[i] > i) {
        const int j = partner[i];
        group_of[j] = group_of[i];
        groups.back().push_back(j);
        c.members.insert(c.members.end(), cl[j].members.begin(), cl[j].members.end());
        c.types = grouping::merged(c.types, cl[j].types);
        c.inside += cl[j].inside + g->between(i, j);
        c.done = c.done || cl[j].done;
      }
      next.push_back(std::move(c));
    }
    Graph agg = g->aggregate(groups, group_of);
    owned = std::move(agg);
    g = &owned;
    cl = std::move(next);
  }

  // Clusters that match an open composition exactly are kept, heaviest
  // first; the rest seed the greedy completion.
  std::vector<int> rest;
  for (int i = 0; i < static_cast<int>(cl.size()); ++i)
    if (!cl[i].done) rest.push_back(i);
  std::stable_sort(rest.begin(), rest.end(), [&](int a, int b) {
    if (cl[a].members.size() != cl[b].members.size()) return cl[a].members.size() > cl[b].members.size();
    return cl[a].inside > cl[b].inside;
  });
  std::vector<std::vector<int>> seeds;
  for (int i : rest) {
    int c = f.exact_comp(cl[i].types);
    if (c >= 0)
      f.take(c, cl[i].members);
    else
      seeds.push_back(cl[i].members);
  }
  std::vector<int> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  return f.finish(seeds, ids);
}

}  // namespace

std::vector<int> choicemap(const Topology& topo, const CommMatrix& m, const MapOptions&, const Slots& slots) {
  return grouping::hierarchical_map(topo, m, slots, choicemap_groups);
}

}  // namespace canopy::policy
