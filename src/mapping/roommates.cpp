// Irving's stable roommates algorithm on incomplete lists (see roommates.hpp).
//
// Lists are never edited: an entry (i -> j at position k) is valid while
// lo[i] <= k <= last[i] and i's position in j's list, rev[i][k], lies in
// [lo[j], last[j]]. last[x] only decreases (x truncates after the proposal it
// holds, or before the one it rejects in phase 2) and lo[x] only increases
// (cycle breaking fixes a pair), so validity only goes from true to false and
// the pointers first[x] and second[x] only move forward: O(total list length)
// for phase 1, plus the walks of phase 2.
#include "mapping/roommates.hpp"

#include <algorithm>
#include <deque>

namespace canopy::grouping {

namespace {

class Solver {
 public:
  explicit Solver(const std::vector<std::vector<int>>& prefs) : prefs_(prefs), n_(static_cast<int>(prefs.size())) {
    // rev[i][k] = position of i in the list of prefs[i][k], -1 if absent.
    std::vector<std::vector<std::pair<int, int>>> sorted(n_);
    for (int j = 0; j < n_; ++j) {
      for (int k = 0; k < static_cast<int>(prefs[j].size()); ++k) sorted[j].push_back({prefs[j][k], k});
      std::sort(sorted[j].begin(), sorted[j].end());
    }
    rev_.resize(n_);
    for (int i = 0; i < n_; ++i) {
      rev_[i].resize(prefs[i].size());
      for (size_t k = 0; k < prefs[i].size(); ++k) {
        const auto& s = sorted[prefs[i][k]];
        auto it = std::lower_bound(s.begin(), s.end(), std::make_pair(i, -1));
        rev_[i][k] = it != s.end() && it->first == i ? it->second : -1;
      }
    }
    last_.resize(n_);
    for (int i = 0; i < n_; ++i) last_[i] = static_cast<int>(prefs[i].size()) - 1;
    lo_.assign(n_, 0);
    first_.assign(n_, 0);
    second_.assign(n_, 0);
    held_.assign(n_, -1);
  }

  RoommatesResult run() {
    RoommatesResult r;
    for (int i = 0; i < n_; ++i) queue_.push_back(i);
    propose();
    std::vector<int> walk, where(n_, -1);
    int cursor = 0;
    while (true) {
      // A person with two or more entries left (lists only shrink: the cursor only moves on).
      while (cursor < n_ && second(cursor) < 0) ++cursor;
      if (cursor == n_) break;
      walk.clear();
      int p = cursor;
      bool broken = false;
      while (where[p] < 0) {
        where[p] = static_cast<int>(walk.size());
        walk.push_back(p);
        const int q = second(p);
        if (q < 0 || held_[prefs_[p][q]] < 0) {
          broken = true;
          break;
        }
        p = held_[prefs_[p][q]];
      }
      if (broken) {
        // The walk reached a person with a single entry: there is no stable
        // matching. Break the walk at its end (that person may stay unmatched).
        reject(walk.back());
        ++r.broken;
        propose();
      } else {
        // The rotation is walk[where[p]..]: each of its persons is rejected by
        // the one holding it, then proposes to its second choice. If that
        // empties a list, there is no stable matching (Irving): undo, and
        // break the cycle by fixing its first pair instead.
        std::vector<int> rot(walk.begin() + where[p], walk.end());
        std::vector<int> touched = rot;
        for (int x : rot) touched.push_back(prefs_[x][first(x)]);
        logging_ = true;
        for (int x : rot) reject(x);
        propose();
        bool emptied = false;
        for (int x : touched) emptied = emptied || first(x) < 0;
        logging_ = false;
        if (!emptied) {
          ++r.rotations;
        } else {
          for (auto it = log_.rbegin(); it != log_.rend(); ++it) *it->first = it->second;
          const int x = rot.front();
          fix_pair(x, prefs_[x][first(x)]);
          ++r.broken;
          propose();
        }
        log_.clear();
      }
      for (int x : walk) where[x] = -1;
    }
    r.partner.assign(n_, -1);
    for (int x = 0; x < n_; ++x) {
      const int f = first(x);
      if (f < 0) continue;
      const int y = prefs_[x][f];
      const int g = first(y);
      if (g >= 0 && prefs_[y][g] == x) r.partner[x] = y;
    }
    return r;
  }

 private:
  bool valid(int i, int k) const {
    if (k < lo_[i] || k > last_[i]) return false;
    const int j = prefs_[i][k];
    const int back = rev_[i][k];
    return back >= lo_[j] && back <= last_[j];
  }
  // a and b keep only each other; whoever they held proposes again.
  void fix_pair(int a, int b) {
    const int ka = first(a);
    const int kb = rev_[a][ka];
    for (int z : {held_[a], held_[b]})
      if (z >= 0 && z != a && z != b) queue_.push_back(z);
    set(lo_[a], ka);
    set(last_[a], ka);
    set(first_[a], ka);
    set(lo_[b], kb);
    set(last_[b], kb);
    set(first_[b], kb);
    set(held_[a], b);
    set(held_[b], a);
  }
  // Position of x's best valid entry, -1 when its list is empty.
  int first(int x) {
    int k = first_[x];
    while (k <= last_[x] && !valid(x, k)) ++k;
    if (k != first_[x]) set(first_[x], k);
    return k <= last_[x] ? k : -1;
  }
  // Position of x's second valid entry, -1 when it has fewer than two.
  int second(int x) {
    const int f = first(x);
    if (f < 0) return -1;
    int k = std::max(second_[x], f + 1);
    while (k <= last_[x] && !valid(x, k)) ++k;
    if (k != second_[x]) set(second_[x], k);
    return k <= last_[x] ? k : -1;
  }
  // Phase 1 for the persons in the queue: propose down the list until held.
  void propose() {
    while (!queue_.empty()) {
      const int x = queue_.front();
      queue_.pop_front();
      const int f = first(x);
      if (f < 0) continue;  // empty list: x stays unmatched
      const int y = prefs_[x][f];
      const int z = held_[y];
      if (z == x) continue;
      // x is valid in y's list, so y prefers x to what it holds: accept, truncate.
      set(held_[y], x);
      set(last_[y], rev_[x][f]);
      if (z >= 0) queue_.push_back(z);
    }
  }
  // x's current first choice y rejects x: y's list ends just before x.
  void reject(int x) {
    const int f = first(x);
    if (f < 0) return;
    const int y = prefs_[x][f];
    set(last_[y], rev_[x][f] - 1);
    if (held_[y] == x) set(held_[y], -1);
    queue_.push_back(x);
  }

  const std::vector<std::vector<int>>& prefs_;
  int n_;
  std::vector<std::vector<int>> rev_;
  // Every write to the state goes through set(), which can log the old
  // value so that a rotation's elimination can be undone.
  void set(int& ref, int v) {
    if (logging_) log_.push_back({&ref, ref});
    ref = v;
  }

  std::vector<int> lo_, last_, first_, second_, held_;
  bool logging_ = false;
  std::vector<std::pair<int*, int>> log_;
  std::deque<int> queue_;
};

}  // namespace

RoommatesResult stable_roommates(const std::vector<std::vector<int>>& prefs) { return Solver(prefs).run(); }

}  // namespace canopy::grouping
