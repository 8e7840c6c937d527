// The grouping problem every hierarchical policy (treematch, eagermap,
// choicemap) solves once per tree level, bottom-up, and the helpers they share.
//
// At a level, the entities are the groups built at the level below (tasks at
// the PU level), each with a type (the shape of the tree node it was built
// for). The nodes of the level ask for compositions: a multiset of child
// types, `count` times. A policy partitions the entities into groups, each
// matching one composition, with exactly `count` groups per composition. On a
// regular tree there is one composition, "arity entities of one type"; on an
// unbalanced tree, or with uneven slot capacities, there are a few.
//
// Filler is the greedy step they share: grow a group from a seed by adding,
// among the free entities of a type the composition still needs, the one that
// communicates most with the group (ties: lowest id), or the lowest-id
// needed entity when none communicates. It always succeeds: the free
// entities' types always add up to the open compositions.
#pragma once
#include <functional>
#include <utility>
#include <vector>

#include "mapping/graph.hpp"

namespace canopy::grouping {

// A multiset of types: (type, count) pairs sorted by type.
using TypeCount = std::vector<std::pair<int, int>>;

TypeCount type_count(const std::vector<int>& members, const std::vector<int>& type);
// small ⊆ big (as multisets)
bool contains(const TypeCount& big, const TypeCount& small);
TypeCount merged(const TypeCount& a, const TypeCount& b);
int total(const TypeCount& t);

struct Composition {
  TypeCount need;  // child types and how many of each
  int size = 0;    // total of need
  int count = 0;   // how many groups of this composition
  int shape = 0;   // the type of the resulting groups
};

struct Problem {
  const Graph& graph;
  const std::vector<int>& type;     // per entity
  std::vector<Composition> comps;   // by size (largest first), then shape
};

struct Grouping {
  std::vector<std::vector<int>> groups;  // members of each group
  std::vector<int> comp;                 // composition index of each group
};

using GroupFn = std::function<Grouping(const Problem&)>;

// Throws a System error unless `g` is a valid answer to `p` (catches policy bugs).
void check_grouping(const Problem& p, const Grouping& g);

class Filler {
 public:
  explicit Filler(const Problem& p);

  bool is_free(int e) const { return !used_[e]; }
  int open(int comp) const { return left_[comp]; }
  // First composition still open that contains `t`, -1 when none.
  int find_comp(const TypeCount& t) const;
  // Composition still open equal to `t`, -1 when none.
  int exact_comp(const TypeCount& t) const;

  // Records `members` (all free, matching composition c exactly) as a group.
  void take(int c, std::vector<int> members);
  // Grows the free `seed` (a sub-multiset of composition c) into a group of c
  // and records it.
  void grow(int c, std::vector<int> seed);
  // Groups every free entity: first from the seeds' still-free members (in
  // order), then from single entities in `order`. Returns the whole grouping.
  Grouping finish(const std::vector<std::vector<int>>& seeds, const std::vector<int>& order);

  Grouping& result() { return result_; }

 private:
  int fallback(const std::vector<int>& need);  // lowest-id free entity of a needed type
  const Problem& p_;
  std::vector<int> left_;
  std::vector<char> used_;
  std::vector<double> gain_;
  std::vector<int> stamp_;
  int round_ = 0;
  std::vector<std::vector<int>> by_type_;  // entities of each type index, ascending
  std::vector<int> cursor_;
  std::vector<int> type_index_;            // type -> index into by_type_ (-1 if absent)
  Grouping result_;
};

}  // namespace canopy::grouping
