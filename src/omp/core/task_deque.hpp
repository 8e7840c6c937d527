// A Chase-Lev work-stealing deque of Task pointers, one per thread of a
// team (tasks.cpp). The owner pushes and pops at the bottom (LIFO) without a
// lock; other threads of the team steal at the top (FIFO) with a CAS.
//
// canopy's own deque (include/canopy/detail/deque.hpp) holds 64-byte task
// slots (the task itself when small); an OpenMP task is a heap object the
// compiler's data is copied into, so a slot here is one pointer: 8 bytes per
// outstanding task instead of 64 (bench/omp/taskmem.c holds 10^6 of them).
// The protocol and memory orders are the same as canopy's (see the long
// comment there): take() exchanges bottom (store + full fence on x86) and
// loads top seq_cst, steal() loads top then bottom seq_cst, both race on a
// CAS of top for the last task; the slots are atomics (relaxed), published
// by the release store of bottom. Growth doubles the array; retired arrays
// stay alive until free_retired() at a quiescent point (no thief can hold
// one: a team's deques are only touched while the team runs).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace canopy::omp {

struct Task;

class TaskDeque {
 public:
  TaskDeque() { grow_to(kInitial); }
  TaskDeque(const TaskDeque&) = delete;
  TaskDeque& operator=(const TaskDeque&) = delete;

  // ---- owner only ----
  void push(Task* t) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    if (b - top_cache_ >= cap_) [[unlikely]] {
      top_cache_ = top_.load(std::memory_order_acquire);
      if (b - top_cache_ >= cap_) grow_to(cap_ * 2);
    }
    slots_[b & (cap_ - 1)].store(t, std::memory_order_relaxed);
    // seq_cst (not only release): a waiter that announced itself as a
    // sleeper and then scans the deques must see this push, or the pusher
    // must see the sleeper (tasks.cpp, wake protocol).
    bottom_.store(b + 1, std::memory_order_seq_cst);
  }
  // The newest task, or nullptr (empty, or a thief took the last one).
  Task* pop() {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed) - 1;
    bottom_.exchange(b, std::memory_order_seq_cst);
    std::int64_t t = top_.load(std::memory_order_seq_cst);
    if (t < b) return slots_[b & (cap_ - 1)].load(std::memory_order_relaxed);
    Task* x = nullptr;
    if (t == b && top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed))
      x = slots_[b & (cap_ - 1)].load(std::memory_order_relaxed);
    bottom_.store(b + 1, std::memory_order_relaxed);
    return x;
  }
  std::int64_t bottom() const { return bottom_.load(std::memory_order_relaxed); }
  // Whether it holds at least n tasks (thieves may have taken some since).
  // Reads `top_` only when the owner's last copy of it says so: top_'s line
  // is the thieves' (every steal writes it), and a producer whose consumer
  // steals each task as it comes would otherwise miss on it at every task.
  bool holds_at_least(std::int64_t n) {
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    if (b - top_cache_ < n) return false;
    top_cache_ = top_.load(std::memory_order_acquire);  // as push's: the slots below it are free
    return b - top_cache_ >= n;
  }
  // Frees the arrays replaced by growth; only when no thief can be reading.
  void free_retired() { retired_.clear(); }

  // ---- any thread ----
  Task* steal() {
    for (;;) {
      std::int64_t t = top_.load(std::memory_order_seq_cst);
      const std::int64_t b = bottom_.load(std::memory_order_seq_cst);
      if (t >= b) return nullptr;
      const Array* a = array_.load(std::memory_order_acquire);
      Task* x = a->slots[t & (a->cap - 1)].load(std::memory_order_relaxed);
      if (top_.compare_exchange_strong(t, t + 1, std::memory_order_seq_cst, std::memory_order_relaxed)) return x;
    }
  }
  bool looks_nonempty() const {
    return top_.load(std::memory_order_seq_cst) < bottom_.load(std::memory_order_seq_cst);
  }

 private:
  static constexpr std::int64_t kInitial = 256;
  struct Array {
    std::int64_t cap;
    std::unique_ptr<std::atomic<Task*>[]> slots;
  };
  void grow_to(std::int64_t cap) {
    auto a = std::make_unique<Array>();
    a->cap = cap;
    a->slots = std::make_unique<std::atomic<Task*>[]>(cap);
    const std::int64_t b = bottom_.load(std::memory_order_relaxed);
    for (std::int64_t i = top_.load(std::memory_order_acquire); i < b; ++i)
      a->slots[i & (cap - 1)].store(slots_[i & (cap_ - 1)].load(std::memory_order_relaxed), std::memory_order_relaxed);
    slots_ = a->slots.get();
    cap_ = cap;
    array_.store(a.get(), std::memory_order_release);
    if (current_) retired_.push_back(std::move(current_));
    current_ = std::move(a);
  }

  alignas(64) std::atomic<std::int64_t> top_{0};
  alignas(64) std::atomic<std::int64_t> bottom_{0};
  std::atomic<Array*> array_{nullptr};
  // Owner-private copies (no dependent load on push/pop) and ownership.
  alignas(64) std::atomic<Task*>* slots_ = nullptr;
  std::int64_t cap_ = 0;
  std::int64_t top_cache_ = 0;
  std::unique_ptr<Array> current_;
  std::vector<std::unique_ptr<Array>> retired_;
};

}  // namespace canopy::omp
