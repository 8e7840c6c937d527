// The Chase-Lev deque's slow paths (see canopy/detail/deque.hpp): the
// arrays, and growing when the owner pushes onto a full one.
#include <algorithm>

#include "canopy/detail/deque.hpp"

namespace canopy::detail {

Deque::Deque(std::int64_t capacity) {
  std::int64_t cap = 1;
  while (cap < std::max<std::int64_t>(capacity, 2)) cap <<= 1;
  auto* a = new Array{cap - 1, new TaskSlot[static_cast<std::size_t>(cap)]};
  arrays_.push_back(a);
  array_.store(a, std::memory_order_relaxed);
  slots_ = a->slots;
  mask_ = a->mask;
  limit_ = cap;
}

Deque::~Deque() {
  for (Array* a : arrays_) {
    delete[] a->slots;
    delete a;
  }
}

namespace {

// Slot by slot, each a fixed 64-byte copy the compiler inlines as vector
// moves, rather than one memcpy: glibc's memcpy uses `rep movsb` for large
// copies, which valgrind counts as one instruction per byte and would
// distort the instructions-per-task figures. The owner wrote every slot it
// reads here (thieves only read them); the new array is private until
// published.
[[gnu::optimize("no-tree-loop-distribute-patterns")]] void copy_slots(TaskSlot* to, const TaskSlot* from,
                                                                       std::int64_t n) {
  for (std::int64_t k = 0; k < n; ++k) __builtin_memcpy(&to[k], &from[k], sizeof(TaskSlot));
}

}  // namespace

void Deque::make_room(std::int64_t b) {
  const std::int64_t t = top_.load(std::memory_order_acquire);
  limit_ = t + mask_ + 1;
  if (b < limit_) return;
  // Full: copy the live tasks into an array four times as large (growth
  // copies each task less than once on average). Thieves may still read
  // the old array: it is not modified and stays allocated. The new array
  // is private until the release store publishes it: plain stores; the
  // owner reads its own writes in the old one.
  const std::int64_t cap = 4 * (mask_ + 1);
  auto* a = new Array{cap - 1, new TaskSlot[static_cast<std::size_t>(cap)]};
  for (std::int64_t i = t; i < b;) {
    // Runs that wrap in neither array, copied whole.
    const std::int64_t from = i & mask_, to = i & a->mask;
    const std::int64_t run = std::min({b - i, mask_ + 1 - from, cap - to});
    copy_slots(a->slots + to, slots_ + from, run);
    i += run;
  }
  arrays_.push_back(a);
  array_.store(a, std::memory_order_release);
  slots_ = a->slots;
  mask_ = a->mask;
  limit_ = t + cap;
}

}  // namespace canopy::detail
