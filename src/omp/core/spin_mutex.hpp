// A mutex for short critical sections that two threads take at a high rate
// (a parent's dependence map: the creating thread registers each new task,
// the finishing thread removes it). glibc's mutex puts a thread that finds
// it taken to sleep at once, so each collision costs a futex wait and a
// futex wake (a third of the time of epcc's task-depend at 2 threads);
// this one polls first, for lock_spin_budget() rounds (futex.hpp: a short
// poll when the process is oversubscribed), then sleeps
// on the word: 0 free, 1 taken, 2 taken and someone may sleep (the
// three-state futex mutex of Drepper's "Futexes Are Tricky").
#pragma once
#include <atomic>
#include <cstdint>

#include "futex.hpp"

namespace canopy::omp {

// The algorithm on a bare word (0 free, 1 taken, 2 taken and someone may
// sleep), for words the runtime does not own (clang's critical names):
// poll spins() rounds, then sleep. spins() is asked only when the word is
// taken: the budget reads the runtime's shared state, which a lock that is
// free (the common case, at every task with dependences) does not need.
template <class Spins>
void spin_lock_word(std::atomic<std::uint32_t>& word, Spins&& spins) {
  std::uint32_t c = 0;
  if (word.compare_exchange_strong(c, 1, std::memory_order_acquire, std::memory_order_relaxed)) return;
  for (int left = spins(); left > 0; --left) {
    cpu_relax();
    c = 0;
    if (word.load(std::memory_order_relaxed) == 0 &&
        word.compare_exchange_strong(c, 1, std::memory_order_acquire, std::memory_order_relaxed))
      return;
  }
  // Sleep: mark the word "someone may sleep" (2) and take it when it was free.
  while (word.exchange(2, std::memory_order_acquire) != 0) futex_wait(word, 2);
}

inline void spin_unlock_word(std::atomic<std::uint32_t>& word) {
  if (word.exchange(0, std::memory_order_release) == 2) futex_wake(word, 1);
}

class SpinMutex {
 public:
  void lock() { spin_lock_word(word_, lock_spin_budget); }
  void unlock() { spin_unlock_word(word_); }

 private:
  std::atomic<std::uint32_t> word_{0};
};

}  // namespace canopy::omp
