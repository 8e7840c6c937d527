// canopy::invoke (declared in canopy/runtime.hpp): a two-way fork-join whose
// stealable half is a deque slot holding f1 (a copy when it fits the slot,
// else a pointer to f1 in invoke's own frame), with a group of one task in
// the frame. After f2, the newest task in the
// deque is f1's unless a thief took it (tasks pushed while f2 ran were
// popped or stolen, except foreign spawns f2 may have left: those are
// popped and run first). So a pop that returns f1's slot (recognised by its
// group) means "not stolen", and f1 is then called directly, its type
// known: no indirect call, no counter update. A stolen f1 is waited for like a
// task group of one.
#pragma once
#include <type_traits>
#include <utility>

namespace canopy {

namespace detail {

template <class F1, class F2>
[[gnu::always_inline]] inline void invoke_on(Worker* w, F1& f1, F2& f2) {
  Group g;
  g.owner_shared = w;  // what a thief needs; owner and base only if f1 is stolen
  // f1 counts as pending from the push: if this worker itself runs f1's slot
  // from inside f2 (a TaskGroup created before this invoke and waited in f2
  // drains the deque above its own base, f1's slot included), that run
  // counts it done, and the wait below returns at once.
  g.pending = 1;
  const std::int64_t base = w->deque.bottom();
  if constexpr (kFitsSlot<F1>) {
    // A thief runs a copy of f1 made from the slot: it needs no access to
    // this frame but the group (one cache line fewer to fetch per steal).
    push_task(w, base, &run_slot_task<F1, false>, &g, [&f1](TaskSlot* s) { store_callable<F1>(s, f1); });
  } else {
    push_task(w, base, &run_invoke_task<F1>, &g,
              [&f1](TaskSlot* s) { store_word(s, 2, reinterpret_cast<std::uint64_t>(&f1)); });
  }
  try {
    f2();
  } catch (...) {
    g.owner = w;
    g.base = base;
    invoke_unwind(w, &g, base);
    throw;
  }
  const TaskSlot* p = w->deque.pop();
  if ((p && slot_group(p) == &g) || take_back_slow(w, p, &g, base)) [[likely]] {
    ++w->tasks_run;
    f1();
    return;
  }
  // Stolen (or already run here, inside f2): wait for it like a group of
  // one task (helping only with what is above `base`).
  g.owner = w;
  g.base = base;
  wait_slow(w, &g);
  if (g.error.load(std::memory_order_relaxed)) rethrow_group_error(&g);
}

}  // namespace detail

template <class F1, class F2>
void invoke(F1&& f1, F2&& f2) {
  static_assert(std::is_invocable_v<F1&> && std::is_invocable_v<F2&>, "invoke needs two callables with no arguments");
  detail::Worker* w = detail::tls_worker;
  if (w) [[likely]] {
    detail::invoke_on(w, f1, f2);
  } else {
    detail::RuntimeScope scope(detail::default_core());
    detail::invoke_on(scope.worker(), f1, f2);
  }
}

}  // namespace canopy
