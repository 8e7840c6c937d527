// Shared pieces of the hierarchical policies: type multisets, the validity
// check of a grouping, and the greedy Filler (see grouping.hpp).
#include "mapping/grouping.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "canopy/error.hpp"

namespace canopy::grouping {

TypeCount type_count(const std::vector<int>& members, const std::vector<int>& type) {
  std::vector<int> ts;
  ts.reserve(members.size());
  for (int m : members) ts.push_back(type[m]);
  std::sort(ts.begin(), ts.end());
  TypeCount out;
  for (int t : ts) {
    if (out.empty() || out.back().first != t) out.push_back({t, 0});
    ++out.back().second;
  }
  return out;
}

bool contains(const TypeCount& big, const TypeCount& small) {
  size_t i = 0;
  for (const auto& [t, c] : small) {
    while (i < big.size() && big[i].first < t) ++i;
    if (i == big.size() || big[i].first != t || big[i].second < c) return false;
  }
  return true;
}

TypeCount merged(const TypeCount& a, const TypeCount& b) {
  TypeCount out;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].first < b[j].first)) {
      out.push_back(a[i++]);
    } else if (i == a.size() || b[j].first < a[i].first) {
      out.push_back(b[j++]);
    } else {
      out.push_back({a[i].first, a[i].second + b[j].second});
      ++i;
      ++j;
    }
  }
  return out;
}

int total(const TypeCount& t) {
  int s = 0;
  for (const auto& tc : t) s += tc.second;
  return s;
}

void check_grouping(const Problem& p, const Grouping& g) {
  const int n = p.graph.size();
  std::vector<char> seen(n, 0);
  std::vector<int> made(p.comps.size(), 0);
  if (g.groups.size() != g.comp.size()) throw Error("grouping: groups and compositions differ in number", ErrorKind::System);
  for (size_t i = 0; i < g.groups.size(); ++i) {
    const int c = g.comp[i];
    if (c < 0 || c >= static_cast<int>(p.comps.size()))
      throw Error(fmt::format("grouping: group {} has no composition", i), ErrorKind::System);
    for (int m : g.groups[i]) {
      if (m < 0 || m >= n || seen[m])
        throw Error(fmt::format("grouping: entity {} is grouped twice or does not exist", m), ErrorKind::System);
      seen[m] = 1;
    }
    if (type_count(g.groups[i], p.type) != p.comps[c].need)
      throw Error(fmt::format("grouping: group {} does not match its composition", i), ErrorKind::System);
    ++made[c];
  }
  for (size_t c = 0; c < p.comps.size(); ++c)
    if (made[c] != p.comps[c].count)
      throw Error(fmt::format("grouping: {} groups of composition {}, expected {}", made[c], c, p.comps[c].count),
                  ErrorKind::System);
  if (std::find(seen.begin(), seen.end(), 0) != seen.end())
    throw Error("grouping: some entity is in no group", ErrorKind::System);
}

Filler::Filler(const Problem& p) : p_(p) {
  const int n = p.graph.size();
  for (const Composition& c : p.comps) left_.push_back(c.count);
  used_.assign(n, 0);
  gain_.assign(n, 0.0);
  stamp_.assign(n, -1);
  int max_type = 0;
  for (int t : p.type) max_type = std::max(max_type, t);
  type_index_.assign(max_type + 1, -1);
  for (int e = 0; e < n; ++e) {
    int& ti = type_index_[p.type[e]];
    if (ti < 0) {
      ti = static_cast<int>(by_type_.size());
      by_type_.emplace_back();
    }
    by_type_[ti].push_back(e);
  }
  cursor_.assign(by_type_.size(), 0);
}

int Filler::find_comp(const TypeCount& t) const {
  for (size_t c = 0; c < p_.comps.size(); ++c)
    if (left_[c] > 0 && contains(p_.comps[c].need, t)) return static_cast<int>(c);
  return -1;
}

int Filler::exact_comp(const TypeCount& t) const {
  for (size_t c = 0; c < p_.comps.size(); ++c)
    if (left_[c] > 0 && p_.comps[c].need == t) return static_cast<int>(c);
  return -1;
}

void Filler::take(int c, std::vector<int> members) {
  for (int m : members) used_[m] = 1;
  --left_[c];
  result_.groups.push_back(std::move(members));
  result_.comp.push_back(c);
}

int Filler::fallback(const std::vector<int>& need) {
  int best = -1;
  for (size_t ti = 0; ti < by_type_.size(); ++ti) {
    const int t = p_.type[by_type_[ti].front()];
    if (need[t] <= 0) continue;
    int& cur = cursor_[ti];
    while (cur < static_cast<int>(by_type_[ti].size()) && used_[by_type_[ti][cur]]) ++cur;
    if (cur < static_cast<int>(by_type_[ti].size()) && (best < 0 || by_type_[ti][cur] < best))
      best = by_type_[ti][cur];
  }
  return best;
}

void Filler::grow(int c, std::vector<int> group) {
  const Graph& g = p_.graph;
  const Composition& comp = p_.comps[c];
  std::vector<int> need(type_index_.size(), 0);
  for (const auto& [t, k] : comp.need) need[t] = k;
  ++round_;
  std::vector<int> touched;
  auto add = [&](int v) {
    used_[v] = 1;
    --need[p_.type[v]];
    for (std::int64_t e = g.begin(v); e < g.end(v); ++e) {
      const int u = g.col(e);
      if (used_[u]) continue;
      if (stamp_[u] != round_) {
        stamp_[u] = round_;
        gain_[u] = 0.0;
        touched.push_back(u);
      }
      gain_[u] += g.weight(e);
    }
  };
  for (int v : group) add(v);
  while (static_cast<int>(group.size()) < comp.size) {
    // The touched list holds every entity with a non-zero gain; scanning it
    // costs the group's neighbourhood, never the whole level.
    int best = -1;
    double best_gain = 0.0;
    size_t keep = 0;
    for (size_t i = 0; i < touched.size(); ++i) {
      const int u = touched[i];
      if (used_[u]) continue;
      touched[keep++] = u;
      if (need[p_.type[u]] <= 0) continue;
      if (gain_[u] > best_gain || (gain_[u] == best_gain && best >= 0 && u < best)) {
        best = u;
        best_gain = gain_[u];
      }
    }
    touched.resize(keep);
    if (best < 0) best = fallback(need);
    if (best < 0) throw Error("grouping: no entity left for an open composition", ErrorKind::System);
    group.push_back(best);
    add(best);
  }
  --left_[c];
  result_.groups.push_back(std::move(group));
  result_.comp.push_back(c);
}

Grouping Filler::finish(const std::vector<std::vector<int>>& seeds, const std::vector<int>& order) {
  for (const std::vector<int>& s : seeds) {
    std::vector<int> seed;
    for (int v : s)
      if (!used_[v]) seed.push_back(v);
    if (seed.empty()) continue;
    int c = find_comp(type_count(seed, p_.type));
    if (c < 0) {
      seed.resize(1);
      c = find_comp(type_count(seed, p_.type));
    }
    if (c < 0) throw Error("grouping: no open composition for a free entity", ErrorKind::System);
    grow(c, std::move(seed));
  }
  for (int v : order) {
    if (used_[v]) continue;
    int c = find_comp({{p_.type[v], 1}});
    if (c < 0) throw Error("grouping: no open composition for a free entity", ErrorKind::System);
    grow(c, {v});
  }
  return std::move(result_);
}

}  // namespace canopy::grouping
