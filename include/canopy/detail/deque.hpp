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
//  - the owner checks for room against a cached top; top only grows, so the
//    cache is conservative, and the value was obtained by an acquire load
//    (or a seq_cst load in take), which orders a thief's read of an old slot
//    (before its CAS) before the owner overwrites that slot.
// Growth copies [top, bottom) into an array four times as large and
// publishes it with a release store; old arrays stay alive until the deque
// dies, so a thief holding an old array reads a valid (unchanged) slot.
// Slots are plain pointers accessed through std::atomic_ref (an array of
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

struct Stolen {
  StealResult result;
  Task* task;
};

class Deque {
 public:
  explicit Deque(std::int64_t capacity = 4096);
  ~Deque();
  Deque(const Deque&) = delete;
  Deque& operator=(const Deque&) = delete;

  // ---- owner only ----
  void push(Task* t) { push_at(bottom_.load(std::memory_order_relaxed), t); }
  // push() when the caller already read bottom() (b == bottom()).
  void push_at(std::int64_t b, Task* t) {
    if (b >= limit_) [[unlikely]] make_room(b);
    slot(slots_, b & mask_).store(t, std::memory_order_relaxed);
    bottom_.store(b + 1, std::memory_order_release);
  }

  // The newest task, or nullptr when empty or a thief took the last one.
  Task* pop() { return pop_at(bottom_.load(std::memory_order_relaxed)); }
  // pop() when the caller already read bottom() (b == bottom()).
  Task* pop_at(std::int64_t b) {
    --b;
    bottom_.exchange(b, std::memory_order_seq_cst);  // store + full fence (see top)
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    if (t < b) [[likely]] return slot(slots_, b & mask_).load(std::memory_order_relaxed);
    Task* x = nullptr;
    if (t == b) {  // the last task: race the thieves for it on top
      x = slot(slots_, b & mask_).load(std::memory_order_relaxed);
      if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
        x = nullptr;
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
  Stolen steal() {
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    const std::int64_t b = bottom_.load(std::memory_order_seq_cst);
    if (t >= b) return {StealResult::Empty, nullptr};
    const Array* a = array_.load(std::memory_order_acquire);
    Task* x = slot(a->slots, t & a->mask).load(std::memory_order_relaxed);
    if (!top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
      return {StealResult::LostRace, nullptr};
    return {StealResult::Ok, x};
  }

  // A racy "has tasks": exact only when nobody pushes or takes meanwhile.
  bool looks_nonempty() const {
    return top_.load(std::memory_order_seq_cst) < bottom_.load(std::memory_order_seq_cst);
  }
  std::int64_t capacity() const { return mask_ + 1; }  // owner only

 private:
  struct Array {
    std::int64_t mask;
    Task** slots;
  };
  static std::atomic_ref<Task*> slot(Task** slots, std::int64_t i) { return std::atomic_ref<Task*>(slots[i]); }
  void make_room(std::int64_t b);

  // Written by thieves (CAS) and by the owner for the last task.
  alignas(64) std::atomic<std::int64_t> top_{0};
  // Written by the owner only, read by thieves.
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::atomic<Array*> array_{nullptr};
  // Owner-private: copies of the current array, so push/pop need no
  // dependent load; push's limit (a cached top + capacity: top only grows,
  // so the limit is conservative); the arrays to free at the end.
  alignas(64) Task** slots_ = nullptr;
  std::int64_t mask_ = 0;
  std::int64_t limit_ = 0;
  std::vector<Array*> arrays_;
};

}  // namespace canopy::detail
