// Scotch as a mapping competitor: builds a tree-leaf ("tleaf") architecture
// from the canopy topology (arities per level, link costs from canopy's
// per-level weights), restricts it with a sub-architecture when the tree is
// unbalanced or the regime is packed, and runs SCOTCH_graphMap with a
// zero-imbalance strategy in a one-thread, fixed-seed context.
//
// Scotch's int64 flavour is used (scotch-int64/scotch.h): communication
// volumes are bytes and their sums overflow 32 bits.
#include "scotch_peer.hpp"

#include <fmt/format.h>
#include <scotch-int64/scotch.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>

#include "canopy/comm_matrix.hpp"
#include "canopy/cost.hpp"
#include "canopy/error.hpp"
#include "canopy/topology.hpp"

namespace canopy::bench {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw Error("scotch: " + what, ErrorKind::System);
}

// RAII for Scotch's C objects: each Init has its Exit even when we throw.
struct Graph {
  SCOTCH_Graph g;
  Graph() {
    if (SCOTCH_graphInit(&g) != 0) fail("SCOTCH_graphInit failed");
  }
  ~Graph() { SCOTCH_graphExit(&g); }
};
struct Arch {
  SCOTCH_Arch a;
  Arch() {
    if (SCOTCH_archInit(&a) != 0) fail("SCOTCH_archInit failed");
  }
  ~Arch() { SCOTCH_archExit(&a); }
};
struct Strat {
  SCOTCH_Strat s;
  Strat() {
    if (SCOTCH_stratInit(&s) != 0) fail("SCOTCH_stratInit failed");
  }
  ~Strat() { SCOTCH_stratExit(&s); }
};
struct Context {
  SCOTCH_Context c;
  Context() {
    if (SCOTCH_contextInit(&c) != 0) fail("SCOTCH_contextInit failed");
  }
  ~Context() { SCOTCH_contextExit(&c); }
};

SCOTCH_Num strategy_flags(ScotchStrategy s) {
  switch (s) {
    case ScotchStrategy::Default: return SCOTCH_STRATDEFAULT;
    case ScotchStrategy::Quality: return SCOTCH_STRATQUALITY;
    case ScotchStrategy::Speed: return SCOTCH_STRATSPEED;
    case ScotchStrategy::Balance: return SCOTCH_STRATBALANCE;
  }
  return SCOTCH_STRATDEFAULT;
}

// Scotch wants integer edge weights. Integral volumes whose weighted sum fits
// comfortably in 63 bits go through unchanged; anything else is scaled so
// that the total is 2^40 (every term of Scotch's cost then stays below 2^51
// with link costs up to 1000), and a positive volume never rounds to zero.
std::vector<SCOTCH_Num> integer_weights(const CsrGraph& g) {
  const std::int64_t arcs = g.row_ptr[g.n];
  double total = 0;
  bool integral = true;
  for (std::int64_t a = 0; a < arcs; ++a) {
    total += g.weights[a];
    integral = integral && g.weights[a] == std::floor(g.weights[a]);
  }
  const double limit = std::ldexp(1.0, 40);
  const double scale = (integral && total <= limit) || total == 0 ? 1.0 : limit / total;
  std::vector<SCOTCH_Num> w(arcs);
  for (std::int64_t a = 0; a < arcs; ++a) {
    double v = g.weights[a] * scale;
    w[a] = g.weights[a] > 0 ? std::max<SCOTCH_Num>(1, std::llround(v)) : 0;
  }
  return w;
}

}  // namespace

ScotchStrategy parse_scotch_strategy(const std::string& s) {
  if (s == "default") return ScotchStrategy::Default;
  if (s == "quality") return ScotchStrategy::Quality;
  if (s == "speed") return ScotchStrategy::Speed;
  if (s == "balance") return ScotchStrategy::Balance;
  throw Error(fmt::format("scotch strategy '{}': expected default, quality, speed or balance", s));
}

// The shallowest level whose every node lies inside one NUMA node.
int numa_unit_level(const Topology& topo) {
  for (int l = 0; l <= topo.leaf_level(); ++l) {
    bool inside = true;
    for (int id : topo.level_nodes(l)) {
      const TopoNode& n = topo.node(id);
      for (int p = n.first_pu; p < n.first_pu + n.num_pus && inside; ++p)
        inside = topo.pu(p).numa == topo.pu(n.first_pu).numa;
      if (!inside) break;
    }
    if (inside) return l;
  }
  return topo.leaf_level();
}

std::vector<int> packed_region(const Topology& topo, int tasks) {
  if (tasks > topo.num_pus())
    throw Error(fmt::format("packed region: {} tasks do not fit {} PUs", tasks, topo.num_pus()));
  const int unit = numa_unit_level(topo);
  std::vector<int> chosen;  // tree nodes whose PUs all belong to the region
  const TopoNode* node = &topo.root();
  int need = tasks;
  while (need > 0) {
    const TopoNode* fit = nullptr;
    for (int c : node->children) {
      const TopoNode& child = topo.node(c);
      if (child.num_pus >= need && (!fit || child.num_pus < fit->num_pus)) fit = &child;
    }
    if (fit) {
      node = fit;  // one child holds the rest: go down
    } else if (node->children.empty() || node->level >= unit) {
      chosen.push_back(node->id);  // inside one NUMA node: the whole subtree
      need = 0;
    } else {
      // Above the NUMA nodes: whole leading children, then the rest packed
      // into the next one (as --pack fills the fewest NUMA nodes).
      for (int c : node->children) {
        const TopoNode& child = topo.node(c);
        if (child.num_pus < need) {
          chosen.push_back(c);
          need -= child.num_pus;
        } else {
          node = &child;
          break;
        }
      }
    }
  }
  std::vector<int> pus;
  for (int id : chosen) {
    const TopoNode& n = topo.node(id);
    for (int p = n.first_pu; p < n.first_pu + n.num_pus; ++p) pus.push_back(p);
  }
  std::sort(pus.begin(), pus.end());
  return pus;
}

ScotchResult scotch_map(const Topology& topo, const CsrGraph& g, const ScotchOptions& opt) {
  const int T = g.n;
  const int P = topo.num_pus();
  ScotchResult result;
  if (T == 0) return result;
  if (P == 1) {  // a tree-leaf needs a level; one PU takes everything
    result.task_pu.assign(T, 0);
    result.arch = "single PU";
    return result;
  }
  const int L = topo.leaf_level();
  const int slots = (T + P - 1) / P;  // tasks per PU at most

  // The tree-leaf: one level per canopy level above the PUs, padded to the
  // largest arity where the tree is unbalanced, plus a slot level when
  // oversubscribed.
  std::vector<SCOTCH_Num> sizes, links;
  std::vector<double> w = opt.weights.empty() ? default_weights(topo) : opt.weights;
  if (static_cast<int>(w.size()) != topo.num_levels())
    fail(fmt::format("{} weights for {} levels", w.size(), topo.num_levels()));
  double wmax = *std::max_element(w.begin(), w.end());
  if (!(wmax > 0)) wmax = 1;
  auto link = [&](double v) { return std::max<SCOTCH_Num>(1, std::llround(v / wmax * 1000.0)); };
  bool balanced = true;
  for (int l = 0; l < L; ++l) {
    sizes.push_back(topo.level(l).max_arity);
    links.push_back(link(w[l]));
    balanced = balanced && topo.level(l).min_arity == topo.level(l).max_arity;
  }
  if (slots > 1) {
    sizes.push_back(slots);
    links.push_back(link(w[L]));
  }

  // Terminal number of each PU in the padded tree (mixed radix of the child
  // positions along its path), times the slots.
  std::vector<int> child_pos(topo.nodes().size(), 0);
  for (const TopoNode& n : topo.nodes())
    for (size_t k = 0; k < n.children.size(); ++k) child_pos[n.children[k]] = static_cast<int>(k);
  std::vector<SCOTCH_Num> pu_terminal(P);
  for (int p = 0; p < P; ++p) {
    std::vector<int> path;
    for (int id = topo.pu(p).node; topo.node(id).parent >= 0; id = topo.node(id).parent) path.push_back(id);
    SCOTCH_Num t = 0;
    for (int l = 0; l < L; ++l) t = t * sizes[l] + child_pos[path[L - 1 - l]];
    pu_terminal[p] = t * slots;
  }

  std::vector<int> region(P);
  std::iota(region.begin(), region.end(), 0);
  if (opt.packed && T < P) region = packed_region(topo, T);
  const bool sub = !balanced || static_cast<int>(region.size()) < P;

  // Terminal k of the architecture Scotch maps onto -> logical PU.
  std::vector<SCOTCH_Num> term_list;
  std::vector<int> term_pu;
  for (int p : region)
    for (int s = 0; s < slots; ++s) {
      term_list.push_back(pu_terminal[p] + s);
      term_pu.push_back(p);
    }
  {  // Scotch wants the kept terminals in increasing order
    std::vector<size_t> order(term_list.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return term_list[a] < term_list[b]; });
    std::vector<SCOTCH_Num> tl;
    std::vector<int> tp;
    for (size_t k : order) {
      tl.push_back(term_list[k]);
      tp.push_back(term_pu[k]);
    }
    term_list.swap(tl);
    term_pu.swap(tp);
  }

  result.arch = fmt::format("tleaf {}", sizes.size());
  for (size_t l = 0; l < sizes.size(); ++l) result.arch += fmt::format(" {} {}", sizes[l], links[l]);
  if (sub) result.arch += fmt::format(" (sub-architecture: {} of its terminals)", term_list.size());

  Arch tleaf;
  if (SCOTCH_archTleaf(&tleaf.a, static_cast<SCOTCH_Num>(sizes.size()), sizes.data(), links.data()) != 0)
    fail("SCOTCH_archTleaf failed for " + result.arch);
  Arch restricted;
  SCOTCH_Arch* arch = &tleaf.a;
  if (sub) {
    if (SCOTCH_archSub(&restricted.a, &tleaf.a, static_cast<SCOTCH_Num>(term_list.size()), term_list.data()) != 0)
      fail("SCOTCH_archSub failed for " + result.arch);
    arch = &restricted.a;
  }
  const SCOTCH_Num parts = static_cast<SCOTCH_Num>(term_list.size());

  // The graph: compact CSR, unit vertex loads, integer edge loads.
  std::vector<SCOTCH_Num> vert(g.row_ptr, g.row_ptr + T + 1);
  std::vector<SCOTCH_Num> edge(g.cols, g.cols + g.row_ptr[T]);
  std::vector<SCOTCH_Num> edlo = integer_weights(g);
  Graph graph;
  if (SCOTCH_graphBuild(&graph.g, 0, T, vert.data(), nullptr, nullptr, nullptr, static_cast<SCOTCH_Num>(edge.size()),
                        edge.data(), edlo.data()) != 0)
    fail("SCOTCH_graphBuild failed");

  // One thread and a fixed seed: the same placement every run, and a time
  // comparable with the single-threaded policies.
  Context ctx;
  if (SCOTCH_contextThreadSpawn(&ctx.c, 1, nullptr) != 0) fail("SCOTCH_contextThreadSpawn failed");
  SCOTCH_contextOptionSetNum(&ctx.c, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
  SCOTCH_contextOptionSetNum(&ctx.c, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1);
  SCOTCH_contextRandomSeed(&ctx.c, static_cast<SCOTCH_Num>(opt.seed));
  Graph bound;
  if (SCOTCH_contextBindGraph(&ctx.c, &graph.g, &bound.g) != 0) fail("SCOTCH_contextBindGraph failed");

  Strat strat;
  if (SCOTCH_stratGraphMapBuild(&strat.s, strategy_flags(opt.strategy), parts, 0.0) != 0)
    fail("SCOTCH_stratGraphMapBuild failed");
  std::vector<SCOTCH_Num> part(T, -1);
  if (SCOTCH_graphMap(&bound.g, arch, &strat.s, part.data()) != 0) fail("SCOTCH_graphMap failed on " + result.arch);

  // Scotch numbers the terminals of a sub-architecture 0..parts-1 in the
  // order of the list it was given; of a full tree-leaf, by mixed radix.
  result.task_pu.resize(T);
  for (int t = 0; t < T; ++t) {
    SCOTCH_Num k = part[t];
    if (sub) {
      if (k < 0 || k >= parts) fail(fmt::format("task {} mapped to terminal {}, outside 0..{}", t, k, parts - 1));
      result.task_pu[t] = term_pu[k];
    } else {
      auto it = std::lower_bound(term_list.begin(), term_list.end(), k);
      if (it == term_list.end() || *it != k) fail(fmt::format("task {} mapped to unknown terminal {}", t, k));
      result.task_pu[t] = term_pu[it - term_list.begin()];
    }
  }
  return result;
}

ScotchResult scotch_map(const Topology& topo, const CommMatrix& m, const ScotchOptions& opt) {
  CsrGraph g{m.size(), m.row_ptr().data(), m.cols().data(), m.weights().data()};
  return scotch_map(topo, g, opt);
}

}  // namespace canopy::bench
