// Domains: the subtrees of the machine that hold a runtime's workers (the
// whole machine, a package, a NUMA node, an L3, a core, ...), as sets of
// worker indexes, and the rule that places the groups (bubbles) of one
// level on them by expected work. Pure functions of a topology, tested on
// synthetic machines (tests/runtime/bubble_domains_test.cpp); the runtime
// keeps one BubbleDomain (bubbles.cpp) per Domain.
#pragma once
#include <vector>

namespace canopy {
class Topology;
}

namespace canopy::detail {

struct Domain {
  int parent = -1;            // -1 for the root (every worker)
  int depth = 0;              // 0 for the root
  int topo_node = 0;          // the topology tree node (the deepest one with exactly these workers)
  std::vector<int> workers;   // worker indexes, ascending
  std::vector<int> children;  // domain ids, in tree order
};

// Every tree node holding at least one worker is a domain, except that a
// node whose workers are exactly those of its parent's domain is merged
// into it (a package with one NUMA node, a core with one worker): domains
// strictly shrink going down. Domain 0 is the root; parents come before
// children (tree order). worker_pu[i] = logical PU of worker i.
std::vector<Domain> build_domains(const Topology& topo, const std::vector<int>& worker_pu);

// The domains of each worker, smallest first (the root last).
std::vector<std::vector<int>> domains_of_workers(const std::vector<Domain>& domains, int num_workers);

// The number of workers a group of expected work `work` should have, out of
// `workers`, when the groups of its level add up to `total` work: at least
// one, at most all.
int group_share(double work, double total, int workers);

// Places the groups of one level inside domain `parent`: group i (expected
// work work[i]; 0 or less = unknown, counted as the mean of the known ones,
// or 1 when none is known) goes to one of the smallest domains below (or
// equal to) `parent` with at least group_share(work[i], sum, |parent|)
// workers. Largest work first (ties: lower index first), each on the
// least loaded candidate (work / domain size is added to each of its
// workers), compared hierarchically: first the candidates' subtrees right
// below `parent` by their work per worker, then the next level, down to the
// candidate (ties: the first in tree order): the longest-processing-time
// rule, so that the parent's subtrees end with similar work.
// `worker_load` (one entry per worker, may be null) carries the load of
// earlier placements and is updated. Returns the domain of each group.
std::vector<int> place_groups(const std::vector<Domain>& domains, int parent, const std::vector<double>& work,
                              std::vector<double>* worker_load = nullptr);

// Whether domain `inner` is `outer` or below it.
bool domain_within(const std::vector<Domain>& domains, int inner, int outer);

}  // namespace canopy::detail
