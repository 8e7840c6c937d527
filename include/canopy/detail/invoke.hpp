// canopy::invoke (declared in canopy/runtime.hpp): a two-way fork-join whose
// stealable half is a task in invoke's own frame. After f2, the newest task
// in the deque is f1's unless a thief took it (tasks pushed while f2 ran
// were popped or stolen, except foreign spawns f2 may have left: those are
// popped and run first). So a successful pop of f1's task means "not
// stolen" and f1 is called directly, with its type known: no indirect call,
// no counter. A stolen f1 is waited for like a task group of one.
#pragma once
#include <type_traits>
#include <utility>

namespace canopy {

namespace detail {

// After a first pop that did not return f1's task: runs foreign tasks found
// above it and takes f1's back if nobody stole it (true).
bool take_back_slow(Worker* w, Task* popped, Task* mine, std::int64_t base);

template <class F1, class F2>
[[gnu::always_inline]] inline void invoke_on(Worker* w, F1& f1, F2& f2) {
  InvokeTask<F1> t;
  Group& g = t.own;
  g.set_owner(w);
  g.pending = 1;
  t.run = &run_invoke_task<F1>;
  t.group = &g;
  t.fn = &f1;
  const std::int64_t base = w->deque.bottom();
  g.base = base;  // if f1 is stolen, the wait helps only with what is above
  push_task_at(w, base, &t);
  try {
    f2();
  } catch (...) {
    invoke_unwind(w, &t, base);
    throw;
  }
  Task* p = w->deque.pop();
  if (p == &t || take_back_slow(w, p, &t, base)) [[likely]] {
    f1();
    return;
  }
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
