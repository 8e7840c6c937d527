// IterationFinder (iterations.hpp: the rules).
#include "dataflow/iterations.hpp"

#include <algorithm>

namespace canopy::detail::flow {

namespace {

constexpr std::uint64_t kNever = ~std::uint64_t{0};

std::vector<std::uint32_t> set_of(const std::vector<std::uint32_t>& ids) {
  std::vector<std::uint32_t> s = ids;
  std::sort(s.begin(), s.end());
  s.erase(std::unique(s.begin(), s.end()), s.end());
  return s;
}

}  // namespace

void IterationFinder::add_id() { last_pos_.push_back(kNever); }

bool IterationFinder::observe(std::uint32_t id) {
  const std::uint64_t i = occurrences_++;
  std::uint64_t& slot = last_pos_[id];
  const std::uint64_t last = slot;
  slot = i;
  if (anchor_ != kNone && cur_.size() >= anchor_distance_ + anchor_distance_ / 2 + 16) {
    // The anchor is overdue: the pattern changed under it.
    anchor_ = kNone;
    anchor_distance_ = 0;
    cur_.clear();
    prev_set_.clear();
    if (phase == Phase::Applied) phase = Phase::Observing;
  }
  if (id == anchor_) {
    anchor_distance_ = i - last;
    const bool map = end_iteration();
    cur_.assign(1, id);
    return map;
  }
  if (last != kNever) {
    const std::uint64_t d = i - last;
    if (anchor_ == kNone || d > anchor_distance_ + anchor_distance_ / 8) {
      // A longer period than the anchor's: this task is the anchor now.
      anchor_ = id;
      anchor_distance_ = d;
      cur_.assign(1, id);
      prev_set_.clear();
      return false;
    }
  }
  if (anchor_ != kNone) cur_.push_back(id);
  return false;
}

bool IterationFinder::end_iteration() {
  std::vector<std::uint32_t> set = set_of(cur_);
  bool map = false;
  if (!mapped_set.empty() && set == mapped_set) {
    // The mapped pattern (again): nothing to do, whatever the durations.
    phase = Phase::Applied;
    confirmed.clear();
    confirmed_set.clear();
  } else if (phase == Phase::Applied) {
    phase = Phase::Observing;  // the pattern changed (the old placement holds for the tasks it knows)
  } else if (phase == Phase::Confirmed && set == confirmed_set) {
    map = true;  // the same again, not mapped yet
  } else if (phase == Phase::Observing && !prev_set_.empty() && set == prev_set_) {
    confirmed = cur_;
    confirmed_set = set;
    phase = Phase::Confirmed;
    map = true;
  } else if (phase == Phase::Confirmed) {
    phase = Phase::Observing;
  }
  prev_set_ = std::move(set);
  return map;
}

void IterationFinder::map_confirmed() {
  mapped = std::move(confirmed);
  mapped_set = std::move(confirmed_set);
  confirmed.clear();
  confirmed_set.clear();
  phase = Phase::Applied;
}

void IterationFinder::restart() {
  phase = Phase::Observing;
  confirmed.clear();
  confirmed_set.clear();
  mapped.clear();
  mapped_set.clear();
  anchor_ = kNone;
  anchor_distance_ = 0;
  cur_.clear();
  prev_set_.clear();
  std::fill(last_pos_.begin(), last_pos_.end(), kNever);
}

}  // namespace canopy::detail::flow
