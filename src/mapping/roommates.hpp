// Stable roommates with incomplete preference lists (Irving 1985; Gusfield &
// Irving 1989, SRI), as ChoiceMap uses it to pair tasks by mutual preference.
//
// prefs[i] lists the persons i accepts, best first; acceptance must be mutual
// (j in prefs[i] iff i in prefs[j]). Phase 1: proposals, each person holding
// its best offer and truncating its list after it. Phase 2: rotations are
// found and eliminated until every list has at most one entry.
//
// Cycle breaking: when an instance has no stable matching, phase 2 meets an
// odd cycle of persons each holding the next (a rotation whose elimination
// would empty their lists), or a walk that reaches a person with a single
// entry. The cycle is broken by fixing its first pair (the two keep only each
// other), or the walk's last person is rejected by the one holding it, and
// the algorithm goes on; persons left without an entry stay unmatched. The
// result is then a matching that is stable except around the broken cycles.
// With preferences derived from symmetric weights and ties broken by id, a
// stable matching always exists and no cycle is ever broken.
#pragma once
#include <vector>

namespace canopy::grouping {

struct RoommatesResult {
  std::vector<int> partner;  // -1: unmatched
  int rotations = 0;         // rotations eliminated in phase 2
  int broken = 0;            // cycles broken (0 when a stable matching exists)
};

RoommatesResult stable_roommates(const std::vector<std::vector<int>>& prefs);

}  // namespace canopy::grouping
