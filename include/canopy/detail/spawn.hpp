// Task types built from callables, and where their blocks come from:
//  - a pooled task: a block of the spawning worker's pool, given back when
//    the task ends (by whichever worker ran it);
//  - an inline task: the first task of a TaskGroup lives inside the group
//    (on the waiter's stack, which outlives the task): no pool round trip;
//  - an invoke task: canopy::invoke's stealable half, in invoke's frame;
//  - an affinity proxy: in a deque and in another worker's mailbox at once;
//    the first copy to claim it runs it, the last to drop it frees it.
#pragma once
#include <atomic>
#include <new>
#include <type_traits>
#include <utility>

#include "canopy/detail/worker.hpp"

namespace canopy::detail {

template <class F>
struct FnTask : Task {
  F fn;
};

template <class T>
inline void* alloc_block(Worker* w) {
  constexpr int cls = kSizeClass<T>;
  if constexpr (cls < 0)
    return ::operator new(sizeof(T), std::align_val_t(alignof(T) < 16 ? 16 : alignof(T)));
  else
    return w->pool.alloc(cls);
}

template <class T>
inline void free_block(Worker* w, T* p) {
  constexpr int cls = kSizeClass<T>;
  if constexpr (cls < 0)
    ::operator delete(static_cast<void*>(p), std::align_val_t(alignof(T) < 16 ? 16 : alignof(T)));
  else
    w->pool.free(p, cls);
}

// free_block(w, p), then returns r (a tail call on the slow path).
template <class T, class R>
inline R free_block_and_return(Worker* w, T* p, R r) {
  constexpr int cls = kSizeClass<T>;
  if constexpr (cls < 0) {
    ::operator delete(static_cast<void*>(p), std::align_val_t(alignof(T) < 16 ? 16 : alignof(T)));
    return r;
  } else {
    return w->pool.free_and_return(p, cls, r);
  }
}

// Calls fn; an exception is kept in the group for its waiter.
template <class F>
inline void call_in_group(F& fn, Group* const* group) {
  try {
    fn();
  } catch (...) {
    record_exception(*group);
  }
}

// Foreign: spawned into the group by a thread other than its owner; it
// counts itself (the spawn decremented `remote`).
template <class F, bool Foreign>
Group* run_pooled_task(Task* t, Worker* w) {
  auto* self = static_cast<FnTask<F>*>(t);
  call_in_group(self->fn, &self->group);
  Group* g = self->group;
  self->~FnTask<F>();
  ++w->tasks_run;
  if constexpr (Foreign) {
    free_block(w, self);
    complete_remote(g);
    return nullptr;
  } else {
    return free_block_and_return(w, self, g);
  }
}

template <class F>
Group* run_inline_task(Task* t, Worker* w) {
  auto* self = static_cast<FnTask<F>*>(t);
  call_in_group(self->fn, &self->group);
  Group* g = self->group;
  self->~FnTask<F>();
  ++w->tasks_run;
  return g;
}

template <bool Foreign, class F>
inline Task* new_task(Worker* w, Group* g, F&& f) {
  using Fn = std::decay_t<F>;
  using T = FnTask<Fn>;
  T* t = static_cast<T*>(alloc_block<T>(w));
  t->run = &run_pooled_task<Fn, Foreign>;
  t->group = g;
  ::new (static_cast<void*>(&t->fn)) Fn(std::forward<F>(f));
  return t;
}

template <class F>
inline Task* new_inline_task(void* slot, Group* g, F&& f) {
  using Fn = std::decay_t<F>;
  using T = FnTask<Fn>;
  T* t = static_cast<T*>(slot);
  t->run = &run_inline_task<Fn>;
  t->group = g;
  ::new (static_cast<void*>(&t->fn)) Fn(std::forward<F>(f));
  return t;
}

// canopy::invoke's stealable half: a pointer to the caller's callable, and
// the group of one task its thief reports to.
template <class F>
struct InvokeTask : Task {
  F* fn;
  Group own;
};
// f2 of an invoke threw: take f1's task back unless stolen (then wait for
// it), so that nothing refers to the frame being unwound.
void invoke_unwind(Worker* w, Task* t, std::int64_t base) noexcept;

template <class F>
Group* run_invoke_task(Task* t, Worker* w) {
  auto* self = static_cast<InvokeTask<F>*>(t);
  call_in_group(*self->fn, &self->group);
  ++w->tasks_run;
  return self->group;
}

// ---- affinity proxies ----

// A proxy's state: claimed by exchange (exactly one copy runs), freed by
// the last of its two references (deque copy, mailbox copy).
struct ProxyHeader : Task {
  std::atomic<std::uint32_t> claimed{0};
  std::atomic<std::uint32_t> refs{2};
  ProxyHeader* mail_next = nullptr;  // mailbox stack link
};

// The callable sits in raw storage: the copy that claims the proxy runs and
// destroys it; whoever drops the last reference only gives the block back.
// (The deque copy is always consumed, so some copy always claims it.)
template <class F>
struct ProxyTask : ProxyHeader {
  alignas(F) unsigned char storage[sizeof(F)];
  F& fn() { return *std::launder(reinterpret_cast<F*>(storage)); }
};

template <class F>
void drop_proxy(ProxyTask<F>* self, Worker* w) {
  if (self->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) free_block(w, self);
}

template <class F>
Group* run_proxy_task(Task* t, Worker* w) {
  auto* self = static_cast<ProxyTask<F>*>(t);
  if (self->claimed.exchange(1, std::memory_order_acq_rel) != 0) {
    drop_proxy(self, w);  // the other copy runs (or ran) it, and counts it
    return nullptr;
  }
  Group* g = self->group;
  call_in_group(self->fn(), &g);
  self->fn().~F();
  drop_proxy(self, w);
  ++w->tasks_run;
  return g;
}

// A proxy: the caller pushes it to its own deque and mails it to the
// target (post_to_mailbox).
template <class F>
inline ProxyHeader* new_proxy(Worker* w, Group* g, F&& f) {
  using Fn = std::decay_t<F>;
  using T = ProxyTask<Fn>;
  static_assert(std::is_trivially_destructible_v<T>);
  T* t = ::new (alloc_block<T>(w)) T;
  t->run = &run_proxy_task<Fn>;
  t->group = g;
  ::new (static_cast<void*>(t->storage)) Fn(std::forward<F>(f));
  return t;
}

}  // namespace canopy::detail
