// Chase-Lev work-stealing deque (Chase & Lev, SPAA 2005), with the C11
// memory orders of Lê, Pop, Cohen and Zappa Nardelli, "Correct and
// Efficient Work-Stealing for Weak Memory Models", PPoPP 2013.
//
// Protocol (the invariant every function keeps): the live tasks are the
// slots [top, bottom). Only the owner writes `bottom` and the slots; thieves
// and the owner (for the last task) take a task by moving `top` from t to
// t+1 with a CAS, so each task is taken exactly once. `top` never decreases.
//
// Memory orders. Lê et al. use: push = store slot (relaxed), release fence,
// store bottom (relaxed); take = store bottom-1 (relaxed), seq_cst fence,
// load top (relaxed); steal = load top (acquire), seq_cst fence, load bottom
// (acquire), CAS top (seq_cst). The two seq_cst fences are the whole point:
// they make "owner decremented bottom" and "thief read top" a Dekker pair,
// so owner and thief cannot both believe they took the last task. Here:
//  - take() stores bottom with a seq_cst exchange and loads top seq_cst.
//    On x86 the exchange is one `xchg`, which is the store and the full
//    fence in one instruction (Lê's store + fence is mov + `lock or`).
//  - steal() loads top and then bottom, both seq_cst (plain loads on x86).
//  The C++20 rules on S (the single order of seq_cst operations) give the
//  same guarantee as the fences: if the owner's load of top read a value
//  older than the one a thief read, then (coherence, [atomics.order]/4.1)
//  the owner's load precedes the thief's load of top in S, so the owner's
//  exchange of bottom precedes the thief's load of bottom in S, so the thief
//  sees the decremented bottom and backs off (or loses the CAS). Using
//  operations instead of fences also keeps ThreadSanitizer, which does not
//  model fences, able to check this protocol as it is.
//  - push keeps Lê's release (as a release store of bottom): a thief that
//    reads the new bottom (seq_cst, so acquire) sees the slot and the task.
//  - Lê's thief reads the element before its CAS; here the element is a
//    slot of words, copied before the CAS: if the CAS succeeds, top was
//    still t, so the owner cannot have rewritten slot t (it writes only
//    below top + capacity), and the copy is whole.
//  - the owner checks for room against a cached top; top only grows, so the
//    cache is conservative, and the value was obtained by an acquire load
//    (or a seq_cst load in take), which orders a thief's read of an old slot
//    (before its CAS) before the owner overwrites that slot.
// Growth copies [top, bottom) into an array four times as large and
// publishes it with a release store; old arrays stay alive until the deque
// dies, so a thief holding an old array reads a valid (unchanged) slot.
// Elements are 64-byte slots (task.hpp) holding the task itself when it is
// small, so a push writes the task where the thief will read it; the slot
// words are written and copied with std::atomic_ref (an array of
// std::atomic would be zeroed at every growth).
#pragma once
#include <atomic>
#include <cstdint>
#include <vector>

#include "canopy/detail/task.hpp"

namespace canopy::detail {

// Why steal() came back: empty / lost-race / ok (lost-race means there was
// work and another thief or the owner took it first: try again).
enum class StealResult : std::uint8_t { Empty, LostRace, Ok };

class Deque {
 public:
  explicit Deque(std::int64_t capacity = 1024);
  ~Deque();
  Deque(const Deque&) = delete;
  Deque& operator=(const Deque&) = delete;

  // ---- owner only ----
  // Pushing is reserve(b) (b == bottom()), writing the slot's words with
  // store_word, then publish(b): the release store of bottom makes the
  // slot visible to thieves.
  TaskSlot* reserve(std::int64_t b) {
    if (b >= limit_) [[unlikely]] make_room(b);
    return &slots_[b & mask_];
  }
  void publish(std::int64_t b) { bottom_.store(b + 1, std::memory_order_release); }

  // The newest task's slot, or nullptr when empty or a thief took the last
  // one. The slot stays valid until the owner's next push.
  const TaskSlot* pop() { return pop_at(bottom_.load(std::memory_order_relaxed)); }
  // pop() when the caller already read bottom() (b == bottom()).
  const TaskSlot* pop_at(std::int64_t b) {
    --b;
    bottom_.exchange(b, std::memory_order_seq_cst);  // store + full fence (see top)
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    if (t < b) [[likely]] return &slots_[b & mask_];
    const TaskSlot* x = nullptr;
    if (t == b) {  // the last task: race the thieves for it on top
      if (top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
        x = &slots_[b & mask_];
    }
    bottom_.store(b + 1, std::memory_order_relaxed);  // empty: top == bottom again
    return x;
  }

  // The owner's view of bottom (groups remember it to know their tasks).
  std::int64_t bottom() const { return bottom_.load(std::memory_order_relaxed); }
  // Whether the deque seems to hold tasks pushed at or after index `base`
  // (a hint for the owner: a pop may still find none).
  bool has_above(std::int64_t base) const {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    return b > base && b > top_.load(std::memory_order_relaxed);
  }

  // ---- any thread ----
  // Copies the oldest task's slot into `out` and takes it (Ok), or says why
  // not. The copy happens before the CAS (Chase-Lev reads the element
  // first); a copy made while the slot was rewritten is only kept when the
  // CAS succeeds, which proves the slot was not rewritten.
  StealResult steal(TaskSlot* out) {
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    const std::int64_t b = bottom_.load(std::memory_order_seq_cst);
    if (t >= b) return StealResult::Empty;
    const Array* a = array_.load(std::memory_order_acquire);
    TaskSlot* s = &a->slots[t & a->mask];
    for (int i = 0; i < TaskSlot::kWords; ++i)
      out->word[i] = std::atomic_ref<std::uint64_t>(s->word[i]).load(std::memory_order_relaxed);
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
      return StealResult::LostRace;
    return StealResult::Ok;
  }

  // A racy "has tasks": exact only when nobody pushes or takes meanwhile.
  bool looks_nonempty() const {
    return top_.load(std::memory_order_seq_cst) < bottom_.load(std::memory_order_seq_cst);
  }
  std::int64_t capacity() const { return mask_ + 1; }  // owner only

 private:
  struct Array {
    std::int64_t mask;
    TaskSlot* slots;
  };
  void make_room(std::int64_t b);

  // Written by thieves (CAS) and by the owner for the last task.
  alignas(64) std::atomic<std::int64_t> top_{0};
  // Written by the owner only, read by thieves.
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::atomic<Array*> array_{nullptr};
  // Owner-private: copies of the current array, so push/pop need no
  // dependent load; push's limit (a cached top + capacity: top only grows,
  // so the limit is conservative); the arrays to free at the end.
  alignas(64) TaskSlot* slots_ = nullptr;
  std::int64_t mask_ = 0;
  std::int64_t limit_ = 0;
  std::vector<Array*> arrays_;
};

}  // namespace canopy::detail
