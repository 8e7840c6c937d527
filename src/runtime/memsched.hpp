// Private to src/runtime/: the memory scheduler (docs/groups-memory.md).
// When Bubble::split places a level whose groups carry attached data, it
// decides, per group, between moving the work (the group goes to the
// domain holding most of its bytes, among the domains its level already
// got by expected work) and migrating data (a handle not on the group's
// node moves there when the measured migration costs less than the remote
// reads it saves). plan_memory is the pure decision, tested on synthetic
// domains (tests/runtime/memsched_test.cpp); memsched_phase gathers its
// inputs, migrates, and counts (memory_scheduler_stats()).
#pragma once
#include <cstddef>
#include <vector>

#include "canopy/bubble.hpp"
#include "runtime/domains.hpp"

namespace canopy::detail {

struct RuntimeCore;

// One group of the level, as the scheduler sees it.
struct MemGroup {
  double work = 0;    // expected work (filled: never 0); only equal-work groups trade domains
  int domain = 0;     // where placement by expected work put it
  double passes = 1;  // how many times its tasks go over its attached bytes in the phase
  std::vector<std::vector<std::size_t>> handle_bytes;  // per attached handle: bytes on each NUMA node
};

// The cost model: a handle with R bytes off the group's node migrates when
//   fixed_ns + R x migrate_ns_per_byte  <  passes x read_ns_per_byte x
//                                          sum over source nodes s of bytes_s x (factor[node][s] - 1)
struct MemModel {
  bool can_migrate = false;
  double fixed_ns = 0;
  double migrate_ns_per_byte = 0;
  double read_ns_per_byte = 0;
  // factor[a][b]: reading node b's memory from node a costs factor x a local
  // read (hwloc's NUMA distances, distance(a, b) / distance(a, a); 2 for
  // every remote pair when the machine gives none). Missing entries: 2.
  std::vector<std::vector<double>> factor;
  double remote_factor(int a, int b) const;
};

struct MemMove {
  int group = 0;
  int handle = 0;     // index in the group's handles
  int node = 0;       // where it goes
  std::size_t bytes = 0;  // its bytes elsewhere now
};

struct MemPlan {
  std::vector<int> domain;    // each group's domain
  std::vector<MemMove> moves;
  int groups_moved = 0;       // groups whose domain changed
  std::size_t attached = 0;   // bytes attached (touched pages only), counted once per group
  std::size_t local_before = 0;  // of those, on the nodes of the group's first domain
  std::size_t local_placed = 0;  // ... of its chosen domain, before migrations
};

// domain_nodes[d]: the NUMA nodes of domain d's workers (ascending).
// Moving the work: groups of equal work (and so equal domain size) trade
// the domains placement gave them: greedily, the (group, domain) pair with
// the most local bytes first (ties: the group's own domain, then the lower
// group and domain), so the load per worker does not change. Migrating:
// each group whose domain has one node, largest attached bytes first, moves
// each handle the model says to; a handle another group already moves to
// another node stays (the first group wins).
MemPlan plan_memory(const std::vector<std::vector<int>>& domain_nodes, const std::vector<MemGroup>& groups,
                    const MemModel& model);

// Bubble::split's hook: when a child has attached data and the runtime has
// several NUMA nodes, plans, updates `where`, migrates and counts. `work`:
// the children's filled expected work.
void memsched_phase(RuntimeCore* rt, const std::vector<BubbleOptions>& children, const std::vector<double>& work,
                    std::vector<int>* where);

}  // namespace canopy::detail
