// Private to src/dataflow/: the one-worker fast path of submit.
//
// On a runtime of one worker, a task that worker (slot 0) submits at the
// top level while no other top-level task is unfinished depends on nothing:
// everything it could conflict with has finished. It runs at once, inside
// submit (as OpenMP runtimes run the tasks of a one-thread team), and as
// nothing can register behind it while it runs (below), it is never
// registered: its accesses do not enter the States' queues, no State lock is
// taken, no node is allocated (FnOps::run_here makes the callable on its own
// frame, calls and destroys it: one indirect call). What is left per access:
// the handle check (register_fast's) and the locality totals, added at
// once and taken back if a later access fails its check.
//
// Other submitters (extra-slot threads; worker 0 itself when this path does
// not apply): Dekker on Flow::inline_running and the top-level count. Worker
// 0 stores 1 in the flag, then reads the count (both seq_cst) and goes on
// only if it is 1; every other top-level submission of a one-worker runtime
// adds itself to the count first, then reads the flag (both seq_cst) and
// waits while it is 1, before it looks at any State (wait_inline). So either
// the inline task sees the other submission (and takes the normal path) or
// the other submission waits until the body has ended and the totals are
// written (the flag's release store, its acquire load): no registration
// overlaps an inline task, and no State write either, which is what lets it
// skip the locks. (A submission from another thread thus waits for a body
// that worker 0 runs inline; see docs/dataflow.md.)
//
// The normal path takes over, before anything has run, for: another thread
// than worker 0, an affinity hint, more than kFastMax accesses or accesses
// not in strictly increasing handle order, a handle not seen before or freed
// or new in its registry slot, a bad mode, and a domain with a State
// poisoned in the current error epoch (Domain::poison_epoch: the normal path
// decides what is cancelled). Rare endings go out of line (inline.cpp): a
// body that threw (its writes poison; the error goes to the flow) and a body
// that left children (unless they have all finished, the task is registered
// then, as if submitted normally: nothing can have registered since, and its
// dependents must wait for its children).
#pragma once
#include <cstddef>
#include <cstdint>

#include "dataflow/flow.hpp"

namespace canopy::detail::flow {

// The most accesses of the one-pass paths (register_fast and this one).
inline constexpr std::size_t kFastMax = 8;
// How far ahead of a task's last handle the next States and registry
// entries are fetched.
inline constexpr std::size_t kPrefetchAhead = 4;

// inline.cpp
void wait_inline(Flow* f);
// A check failed at access `failed_at` (or making the callable threw:
// `failed_at` == n): the totals added for the accesses before it are taken
// back (local[i], remote[i]: what access i added; remote only with several
// nodes) and the flag cleared; nothing happened.
void inline_undo(Flow* f, const Access* acc, std::size_t failed_at, const std::uint64_t* local,
                 const std::uint64_t* remote, int nodes);
// The body threw or left children (see above).
void inline_end_slow(Worker* w, Flow* f, const Access* acc, std::size_t n, int nodes, bool failed) noexcept;
// claim_touch_marks for the accesses of a body run inline (checked live).
[[gnu::cold, gnu::noinline]] void claim_touch_marks_inline(const Access* acc, std::size_t n) noexcept;

// An access's State if it passes the check (register_fast's: a known,
// live handle whose State holds its totals, a valid mode, after the
// previous access in handle order: `least` is raised), else nullptr.
[[gnu::always_inline]] inline State* inline_check(Flow* f, const Access& a, std::uint32_t& least, DataEntry** ep) {
  const std::uint32_t index = a.data.index;
  const std::uint32_t gen = a.data.generation;
  if (index < least || index >= Flow::kMaxChunks * Flow::kChunk || static_cast<std::uint8_t>(a.mode) > 2)
      [[unlikely]]
    return nullptr;
  State* chunk = f->chunks[index >> Flow::kChunkBits].load(std::memory_order_acquire);
  if (!chunk) [[unlikely]]
    return nullptr;
  State* s = chunk + (index & (Flow::kChunk - 1));
  DataEntry* e = s->entry.load(std::memory_order_relaxed);
  if (!e || e->live.load(std::memory_order_acquire) != gen || s->generation.load(std::memory_order_relaxed) != gen)
      [[unlikely]]
    return nullptr;
  least = index + 1;
  *ep = e;
  return s;
}

// True when the task ran here; false: nothing happened, the normal path
// takes it (also when w traces: the normal path puts the task in a span).
// The caller checked: a top-level submission (t.node == nullptr) without an
// affinity hint, by worker 0 of a one-worker runtime.
[[gnu::always_inline]] inline bool try_inline(ThreadFlow& t, Worker* w, Flow* f, const Access* acc, std::size_t n,
                                              const FnOps& ops, void* src) {
  Domain* d = &f->root;
  if (n - 1 >= kFastMax || traces(w)) [[unlikely]]  // (also n == 0)
    return false;
  f->inline_running.store(1, std::memory_order_seq_cst);
  // Nothing unfinished, and no State poisoned in the current epoch (the
  // normal path cancels what must be).
  if ((d->count.load(std::memory_order_seq_cst) & ~kWaiting) != 1 ||
      d->poison_epoch.load(std::memory_order_relaxed) == d->error_epoch.load(std::memory_order_relaxed))
      [[unlikely]] {
    f->inline_running.store(0, std::memory_order_release);
    return false;
  }
  // Per access: the check, then its totals at once (taken back if a later
  // access fails its check: inline_undo). Two loops: one NUMA node (the
  // bytes are local) or several.
  const int nodes = machine_nodes(w->rt);
  std::uint64_t bytes[kFastMax], rbytes[kFastMax];
  std::uint64_t local = 0;
  std::uint32_t least = 0;  // the smallest index the next access may have
  State* last_s = nullptr;
  DataEntry* last_e = nullptr;
  if (nodes == 1) [[likely]] {
    for (std::size_t i = 0; i < n; ++i) {
      DataEntry* e;
      State* s = inline_check(f, acc[i], least, &e);
      if (!s) [[unlikely]] {
        inline_undo(f, acc, i, bytes, rbytes, nodes);
        return false;
      }
      const std::uint64_t b = e->node_bytes[0].load(std::memory_order_relaxed);
      bytes[i] = b;
      local += b;
      s->add_totals(b, 0);
      last_s = s;
      last_e = e;
    }
  } else {
    std::uint64_t remote = 0;
    for (std::size_t i = 0; i < n; ++i) {
      DataEntry* e;
      State* s = inline_check(f, acc[i], least, &e);
      if (!s) [[unlikely]] {
        inline_undo(f, acc, i, bytes, rbytes, nodes);
        return false;
      }
      access_locality_slow(nodes, e, w->machine_node, &bytes[i], &rbytes[i]);
      local += bytes[i];
      remote += rbytes[i];
      s->add_totals(bytes[i], rbytes[i]);
      last_s = s;
      last_e = e;
    }
    w->bytes_remote.store(w->bytes_remote.load(std::memory_order_relaxed) + remote, std::memory_order_relaxed);
  }
  // The task runs: it counts for the worker (a body that throws has run too).
  w->bytes_local.store(w->bytes_local.load(std::memory_order_relaxed) + local, std::memory_order_relaxed);
  ++w->tasks_run;
  // Handles registered in order and used in that order (tiles, blocks)
  // reach a handle's State and registry entry cold, both laid out by index:
  // fetch those a few indexes ahead of the last one (a prefetch never
  // faults, past the end of a chunk or not).
  __builtin_prefetch(last_s + kPrefetchAhead, 1);  // (n >= 1: set)
  __builtin_prefetch(last_e + kPrefetchAhead, 1);
  // The body; its node is t.inline_node (t.body_base need not be put
  // back: outside a body nobody reads it).
  Node* self = &t.inline_node;
  self->domain = d;
  t.node = self;
  t.inline_acc = acc;  // (for data_free inside the body)
  t.inline_count = n;
  t.body_base = w->deque.bottom();
  bool made = false, failed = false;
  if (touch_marks_pending()) [[unlikely]]
    claim_touch_marks_inline(acc, n);
  try {
    ops.run_here(src, &made);
  } catch (...) {
    t.node = nullptr;
    if (!made) {  // making the callable threw: nothing ran, give it back
      --w->tasks_run;
      w->bytes_local.store(w->bytes_local.load(std::memory_order_relaxed) - local, std::memory_order_relaxed);
      if (nodes != 1)
        for (std::size_t i = 0; i < n; ++i)
          w->bytes_remote.store(w->bytes_remote.load(std::memory_order_relaxed) - rbytes[i],
                                std::memory_order_relaxed);
      inline_undo(f, acc, n, bytes, rbytes, nodes);
      throw;
    }
    failed = true;
    record_error(d, std::current_exception());
  }
  t.node = nullptr;
  if (failed || self->children) [[unlikely]] {
    inline_end_slow(w, f, acc, n, nodes, failed);
    return true;
  }
  f->inline_running.store(0, std::memory_order_release);
  return true;
}

}  // namespace canopy::detail::flow
