// The Chase-Lev deque's slow paths (see canopy/detail/deque.hpp): the
// arrays, and growing when the owner pushes onto a full one.
#include <algorithm>

#include "canopy/detail/deque.hpp"

namespace canopy::detail {

Deque::Deque(std::int64_t capacity) {
  std::int64_t cap = 1;
  while (cap < std::max<std::int64_t>(capacity, 2)) cap <<= 1;
  auto* a = new Array{cap - 1, new std::atomic<Task*>[static_cast<std::size_t>(cap)]};
  arrays_.push_back(a);
  array_.store(a, std::memory_order_relaxed);
  slots_ = a->slots;
  mask_ = a->mask;
}

Deque::~Deque() {
  for (Array* a : arrays_) {
    delete[] a->slots;
    delete a;
  }
}

void Deque::make_room(std::int64_t b) {
  cached_top_ = top_.load(std::memory_order_acquire);
  if (b - cached_top_ <= mask_) return;
  // Full: copy the live tasks into an array twice as large. Thieves may
  // still read the old array: it is not modified and stays allocated.
  const std::int64_t cap = 2 * (mask_ + 1);
  auto* a = new Array{cap - 1, new std::atomic<Task*>[static_cast<std::size_t>(cap)]};
  for (std::int64_t i = cached_top_; i < b; ++i)
    a->slots[i & a->mask].store(slots_[i & mask_].load(std::memory_order_relaxed), std::memory_order_relaxed);
  arrays_.push_back(a);
  array_.store(a, std::memory_order_release);
  slots_ = a->slots;
  mask_ = a->mask;
}

}  // namespace canopy::detail
