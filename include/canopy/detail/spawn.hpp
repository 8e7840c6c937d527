// Task kinds and how each runs from a deque slot:
//  - a slot task: a callable that can be copied as bytes and fits in 48
//    bytes lives in the slot itself (no allocation, nothing to free);
//  - a pooled task: any other callable, in a block of the spawning
//    worker's pool, given back when the task ends (by whichever worker ran
//    it); the slot holds a pointer;
//  - an invoke task: the slot points to invoke's callable in invoke's frame;
//  - an affinity proxy: a pooled task both in a deque and in another
//    worker's mailbox; the first copy to claim it runs it, the last to drop
//    it frees it.
// "Foreign" tasks were spawned into a group by a thread other than its
// owner: they count themselves (the spawn decremented the group's `remote`).
#pragma once
#include <array>
#include <atomic>
#include <bit>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

#include "canopy/detail/trace.hpp"
#include "canopy/detail/worker.hpp"

namespace canopy::detail {

// ---- exceptions ----

// Calls fn; an exception is kept in the group for its waiter.
template <class F>
inline void call_in_group(F& fn, Group* g) {
  try {
    fn();
  } catch (...) {
    record_exception(g);
  }
}

template <bool Foreign>
inline Group* finish(Group* g) {
  if constexpr (Foreign) {
    complete_remote(g);
    return nullptr;
  } else {
    return g;
  }
}

// ---- slot tasks ----

template <class F>
inline constexpr bool kFitsSlot = std::is_trivially_copyable_v<F> && alignof(F) <= 8 &&
                                  sizeof(F) <= TaskSlot::kPayloadWords * sizeof(std::uint64_t);

// F padded to whole words, so that it converts to and from words.
template <class F>
struct alignas(8) Boxed {
  F f;
};
template <class F>
inline constexpr int kWordsOf = std::is_empty_v<F> ? 0 : static_cast<int>(sizeof(Boxed<F>) / 8);

template <class F>
inline void store_callable(TaskSlot* s, const F& f) {
  if constexpr (kWordsOf<F> > 0) {
    const auto words = std::bit_cast<std::array<std::uint64_t, kWordsOf<F>>>(Boxed<F>{f});
    for (int i = 0; i < kWordsOf<F>; ++i) store_word(s, 2 + i, words[i]);
  }
}

template <class F>
inline F load_callable(const TaskSlot* s) {
  if constexpr (kWordsOf<F> > 0) {
    std::array<std::uint64_t, kWordsOf<F>> words;
    std::memcpy(words.data(), &s->word[2], sizeof words);
    return std::bit_cast<Boxed<F>>(words).f;
  } else {
    return std::bit_cast<F>(std::array<unsigned char, sizeof(F)>{});
  }
}

template <class F, bool Foreign>
inline Group* run_slot_task_body(const TaskSlot* s, Worker* w) {
  F f = load_callable<F>(s);  // first: the slot is reused by the next push
  Group* g = slot_group(s);
  call_in_group(f, g);
  ++w->tasks_run;
  return finish<Foreign>(g);
}

// Each run function tests whether its worker traces (traces(w): a compare
// and a branch) and takes the out-of-line traced path if so (trace.hpp).
template <class F, bool Foreign>
Group* run_slot_task(const TaskSlot* s, Worker* w) {
  if (traces(w)) [[unlikely]] return trace_task<&run_slot_task_body<F, Foreign>, F>(s, w);
  return run_slot_task_body<F, Foreign>(s, w);
}

// ---- pooled tasks ----

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

template <class F, bool Foreign>
inline Group* run_pooled_task_body(const TaskSlot* s, Worker* w) {
  auto* self = slot_pointer<FnTask<F>>(s);
  Group* g = self->group;
  call_in_group(self->fn, g);
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

template <class F, bool Foreign>
Group* run_pooled_task(const TaskSlot* s, Worker* w) {
  if (traces(w)) [[unlikely]] return trace_task<&run_pooled_task_body<F, Foreign>, F>(s, w);
  return run_pooled_task_body<F, Foreign>(s, w);
}

// Spawns f into group g on worker w (the caller counted it).
template <bool Foreign, class F>
inline void spawn_task(Worker* w, Group* g, F&& f) {
  using Fn = std::decay_t<F>;
  const std::int64_t b = w->deque.bottom();
  if constexpr (kFitsSlot<Fn>) {
    push_task(w, b, &run_slot_task<Fn, Foreign>, g, [&](TaskSlot* s) { store_callable<Fn>(s, f); });
  } else {
    using T = FnTask<Fn>;
    T* t = static_cast<T*>(alloc_block<T>(w));
    t->run = nullptr;  // runs only from its slot
    t->group = g;
    try {
      ::new (static_cast<void*>(&t->fn)) Fn(std::forward<F>(f));
    } catch (...) {
      free_block(w, t);
      throw;
    }
    push_task(w, b, &run_pooled_task<Fn, Foreign>, g,
              [t](TaskSlot* s) { store_word(s, 2, reinterpret_cast<std::uint64_t>(t)); });
  }
}

// ---- invoke ----

template <class F>
inline Group* run_invoke_task_body(const TaskSlot* s, Worker* w) {
  F* f = slot_pointer<F>(s);
  Group* g = slot_group(s);
  call_in_group(*f, g);
  ++w->tasks_run;
  return g;
}

template <class F>
Group* run_invoke_task(const TaskSlot* s, Worker* w) {
  if (traces(w)) [[unlikely]] return trace_task<&run_invoke_task_body<F>, F>(s, w);
  return run_invoke_task_body<F>(s, w);
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

// Both copies run through here: the mailbox one (as a Task) and the deque
// one (from its slot).
template <class F>
inline Group* run_proxy_body(ProxyTask<F>* self, Worker* w) {
  Group* g = self->group;
  call_in_group(self->fn(), g);
  self->fn().~F();
  drop_proxy(self, w);
  ++w->tasks_run;
  return g;
}

template <class F>
Group* run_proxy_task(Task* t, Worker* w) {
  auto* self = static_cast<ProxyTask<F>*>(t);
  if (self->claimed.exchange(1, std::memory_order_acq_rel) != 0) {
    drop_proxy(self, w);  // the other copy runs (or ran) it, and counts it
    return nullptr;
  }
  if (traces(w)) [[unlikely]] return trace_task<&run_proxy_body<F>, F>(self, w);
  return run_proxy_body<F>(self, w);
}

template <class F>
Group* run_proxy_slot(const TaskSlot* s, Worker* w) {
  return run_proxy_task<F>(slot_pointer<Task>(s), w);
}

// Spawns f as a proxy on w's deque and returns it, to be mailed to its
// target (post_to_mailbox).
template <class F>
inline ProxyHeader* spawn_proxy(Worker* w, Group* g, F&& f) {
  using Fn = std::decay_t<F>;
  using T = ProxyTask<Fn>;
  static_assert(std::is_trivially_destructible_v<T>);
  T* t = ::new (alloc_block<T>(w)) T;
  t->run = &run_proxy_task<Fn>;
  t->group = g;
  try {
    ::new (static_cast<void*>(t->storage)) Fn(std::forward<F>(f));
  } catch (...) {
    free_block(w, t);
    throw;
  }
  push_task(w, w->deque.bottom(), &run_proxy_slot<Fn>, g,
            [t](TaskSlot* s) { store_word(s, 2, reinterpret_cast<std::uint64_t>(static_cast<Task*>(t))); });
  return t;
}

}  // namespace canopy::detail
