// A test of an atomic word against 0 for the runtime's per-task paths, where
// the instructions are counted (a feature that is off must cost at most 2).
#pragma once
#include <atomic>

#if defined(__SANITIZE_THREAD__)
#define CANOPY_DETAIL_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CANOPY_DETAIL_TSAN 1
#endif
#endif

namespace canopy::detail {

// x != 0, read with relaxed order. On x86-64 a compare of the word in
// memory with 0 and the branch on it: two instructions, where the compilers
// load an atomic into a register first (three, and a register the task's
// code then lacks). A plain read, as an acquire or relaxed load is on x86.
// ThreadSanitizer builds take the atomic load, which it sees.
template <class T>
[[gnu::always_inline]] inline bool nonzero_relaxed(const std::atomic<T>& x) noexcept {
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__) && !defined(CANOPY_DETAIL_TSAN)
  static_assert(sizeof(x) == 8 || sizeof(x) == 4, "a 4- or 8-byte word");
  bool on;
  if constexpr (sizeof(x) == 8)
    asm("cmpq $0, %1" : "=@ccne"(on) : "m"(x));
  else
    asm("cmpl $0, %1" : "=@ccne"(on) : "m"(x));
  return on;
#else
  return x.load(std::memory_order_relaxed) != T{};
#endif
}

}  // namespace canopy::detail
