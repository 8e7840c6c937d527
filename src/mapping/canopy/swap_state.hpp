// What the two swap refiners share (refine.cpp: greedy swaps; kl_refine.cpp:
// Kernighan-Lin passes): the tasks of every PU as contiguous slots in PU
// order, so that the tasks below any tree node are one range; the cost of a
// task's edges were it on another PU; and the enumeration of a task's swap
// partners with the exact gain of each swap. The partners of task t are the
// tasks near t's heaviest neighbours (on the neighbour's core when the core
// holds few tasks, else on its PU), which is where a swap can pay.
#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "mapping/canopy/graph.hpp"
#include "mapping/canopy/tree.hpp"

namespace canopy::cmap {

struct SwapState {
  const Graph& g;
  const Tree& tree;
  const std::vector<double>& w;
  std::vector<int>& pos;
  const int L;
  const double wsame;

  std::vector<std::int64_t> slot_start;  // per PU, where its tasks start in occ
  std::vector<int> occ;                  // tasks in PU order
  std::vector<std::int64_t> slot_of;     // per task, its index in occ
  std::int64_t work = 0;                 // edge visits so far (the refiners' budget)

  SwapState(const Graph& g_, const Tree& t_, const std::vector<double>& w_, std::vector<int>& pos_)
      : g(g_), tree(t_), w(w_), pos(pos_), L(t_.leaf_level()), wsame(w_[t_.leaf_level()]) {
    const int P = tree.num_pus;
    slot_start.assign(P + 1, 0);
    for (int p = 0; p < P; ++p) slot_start[p + 1] = slot_start[p] + tree.capacity[p];
    occ.resize(g.n);
    slot_of.resize(g.n);
    std::vector<std::int64_t> fill(slot_start.begin(), slot_start.end() - 1);
    for (int t = 0; t < g.n; ++t) {
      slot_of[t] = fill[pos[t]]++;
      occ[slot_of[t]] = t;
    }
    pu_stamp_.assign(P, 0);
    pu_cost_.assign(P, 0);
    node_stamp_.assign(tree.level.size(), 0);
  }

  // Cost of task t's edges if t were on PU p (the others where they are).
  double cost_at(int t, int p) const {
    double c = 0;
    for (std::int64_t e = g.xadj[t]; e < g.xadj[t + 1]; ++e) c += g.ew[e] * w[tree.common_level(p, pos[g.adj[e]])];
    return c;
  }

  void swap_tasks(int t, int u) {
    std::swap(occ[slot_of[t]], occ[slot_of[u]]);
    std::swap(slot_of[t], slot_of[u]);
    std::swap(pos[t], pos[u]);
  }

  // Calls visit(u, gain, scale) for every partner u of t (at most max_nbrs
  // heaviest neighbours, at most max_group tasks per neighbour's group) on
  // another PU that skip(u, pu of u) does not exclude and that the tree
  // allows (Tree::swappable). gain is the cost decrease of swapping t and u;
  // scale is the cost of their edges, for relative tolerances.
  template <class Skip, class Visit>
  void for_each_partner(int t, int max_nbrs, int max_group, Skip&& skip, Visit&& visit) {
    const int p = pos[t];
    if (g.xadj[t] == g.xadj[t + 1]) return;
    ++stamp_;
    const double cur_t = cost_at(t, p);
    work += g.degree(t);
    nbrs_.clear();
    for (std::int64_t e = g.xadj[t]; e < g.xadj[t + 1]; ++e) nbrs_.emplace_back(g.ew[e], g.adj[e]);
    if (static_cast<int>(nbrs_.size()) > max_nbrs) {
      std::nth_element(nbrs_.begin(), nbrs_.begin() + max_nbrs, nbrs_.end(), [](const auto& a, const auto& b) {
        return a.first > b.first || (a.first == b.first && a.second < b.second);
      });
      nbrs_.resize(max_nbrs);
    }
    for (const auto& nb : nbrs_) {
      const int q = pos[nb.second];
      // The group: the parent node of q when it holds few tasks, else q alone.
      int node = L > 0 ? tree.ancestor(q, L - 1) : tree.ancestor(q, L);
      std::int64_t lo = slot_start[tree.first_pu[node]];
      std::int64_t hi = slot_start[tree.first_pu[node] + tree.num_pus_below[node]];
      if (hi - lo > max_group) {
        node = tree.ancestor(q, L);
        lo = slot_start[q];
        hi = slot_start[q + 1];
      }
      if (node_stamp_[node] == stamp_) continue;
      node_stamp_[node] = stamp_;
      std::int64_t count = hi - lo, first = 0;
      if (count > max_group) {  // a heavily oversubscribed PU: a window that moves with t
        first = (static_cast<std::int64_t>(t) * 2654435761LL) % count;
        count = max_group;
      }
      for (std::int64_t k = 0; k < count; ++k) {
        const int u = occ[lo + (first + k) % (hi - lo)];
        const int r = pos[u];
        if (r == p || skip(u, r) || !tree.swappable(p, r)) continue;
        if (pu_stamp_[r] != stamp_) {
          pu_stamp_[r] = stamp_;
          pu_cost_[r] = cost_at(t, r);
          work += g.degree(t);
        }
        double cur_u = 0, mv_u = 0, w_tu = 0;
        for (std::int64_t e = g.xadj[u]; e < g.xadj[u + 1]; ++e) {
          const int k2 = g.adj[e];
          const int pk = pos[k2];
          cur_u += g.ew[e] * w[tree.common_level(r, pk)];
          mv_u += g.ew[e] * w[tree.common_level(p, pk)];
          if (k2 == t) w_tu += g.ew[e];
        }
        work += g.degree(u);
        // The edge t-u is counted at both ends as if the other stayed; after
        // the swap it still joins PUs p and r, so take those two terms back.
        const double gain =
            (cur_t - pu_cost_[r]) + (cur_u - mv_u) - 2 * w_tu * (w[tree.common_level(p, r)] - wsame);
        visit(u, gain, cur_t + cur_u);
      }
    }
  }

 private:
  std::vector<int> pu_stamp_, node_stamp_;
  std::vector<double> pu_cost_;
  int stamp_ = 0;
  std::vector<std::pair<double, int>> nbrs_;
};

}  // namespace canopy::cmap
