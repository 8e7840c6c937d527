// Coarsening for the multilevel bisection: heavy-edge matching and
// contraction (the METIS/KaHIP scheme). A coarse vertex stands for the tasks
// of the fine vertices matched into it; parallel edges add up.
#pragma once
#include <cstdint>
#include <vector>

#include "mapping/canopy/graph.hpp"

namespace canopy::cmap {

// One round of matching + contraction of `g` into `coarse`; cmap[v] is the
// coarse vertex of fine vertex v. No coarse vertex weighs more than max_vw.
// Vertices are visited in a seeded random order, each matched to the free
// neighbour with the highest rating w(u,v)^2 / (vw(u) vw(v)), which prefers
// heavy edges and keeps coarse vertices of similar weight. Returns false
// (and leaves `coarse` unspecified) when the graph shrank by less than 10%.
// With `keep`, only vertices with the same keep[] value are matched, so that
// a partition of g is also one of the coarse graph (V-cycles). With
// `in_order`, vertices are visited in index order instead (the order start of
// mapper.cpp: on a row-major grid, ties between equal edges then fall the
// same way everywhere and the clusters are regular blocks).
bool coarsen_once(const Graph& g, int max_vw, Rng& rng, Graph& coarse, std::vector<int>& cmap,
                  const std::vector<std::uint8_t>* keep = nullptr, bool in_order = false);

}  // namespace canopy::cmap
