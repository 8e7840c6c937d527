// Finding the iterations of a stream of recurring tasks, for automatic
// affinity (docs/auto-affinity.md): canopy's own `submit` streams
// (stream_affinity.cpp) and OpenMP tasks with depend clauses
// (src/omp/core/depend_affinity.cpp). The caller identifies each task by
// what it accesses (a dense id per distinct task) and feeds the ids in
// submission order; the finder says when an iteration is confirmed and
// should be mapped.
//
// Iterations. An iteration runs from one occurrence of an anchor task to
// its next. The anchor is the recurring task with the longest distance
// between two of its occurrences (a task seen once, an initialisation,
// never is one; a task seen several times an iteration gives way to one
// seen once, whose distance is the whole iteration; a program that
// alternates two buffer sets has an iteration of two of its own loop's
// iterations). An iteration is a list of ids; its set is the sorted ids
// without repeats. Two iterations in a row with the same set confirm the
// pattern: observe() returns true and the caller maps `confirmed` at once,
// then calls map_confirmed(). After that the mapped pattern holds as long as
// each iteration has its set:
//  - an iteration with another set (new tasks, other accesses) starts
//    observing again, and the next two equal iterations are mapped anew;
//  - an iteration that has the mapped set again (after a one-off task, say)
//    returns to the mapping without mapping again: noise does not re-map.
// A longer distance replaces the anchor only when it is longer by an
// eighth (order jitter between several submitting threads does not); an
// anchor overdue by half its distance is dropped (the pattern changed: the
// next task to recur is the anchor).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace canopy::detail::flow {

class IterationFinder {
 public:
  enum class Phase : int { Observing, Confirmed, Applied };

  // A new distinct task: its id is the number of ids added before it.
  void add_id();
  // One more occurrence of task `id`. True when an iteration is confirmed
  // (`confirmed` holds it): map it now, then call map_confirmed(); a caller
  // that could not map leaves it confirmed and hears again at the next
  // equal iteration.
  bool observe(std::uint32_t id);
  // The confirmed iteration becomes the mapped one (phase Applied): also
  // for a placement applied by hand.
  void map_confirmed();
  // Forgets everything but the ids (a placement that no longer holds).
  void restart();

  Phase phase = Phase::Observing;
  std::vector<std::uint32_t> confirmed, confirmed_set;  // the iteration waiting to be mapped
  std::vector<std::uint32_t> mapped, mapped_set;        // the iteration mapped (or applied by hand)

 private:
  bool end_iteration();

  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  std::uint32_t anchor_ = kNone;
  std::uint64_t anchor_distance_ = 0;  // occurrences between its last two
  std::uint64_t occurrences_ = 0;
  std::vector<std::uint64_t> last_pos_;  // by id: the occurrence number of its last one
  std::vector<std::uint32_t> cur_;       // the current iteration's ids, in order
  std::vector<std::uint32_t> prev_set_;  // the previous iteration's set
};

}  // namespace canopy::detail::flow
