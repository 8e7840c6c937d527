// Submitting a data-flow task: checking its accesses (null or freed
// handles, too many), merging repeats of a handle and sorting them by index
// (the lock order), building the node in a block of the calling worker's
// pool, registering each access in its State under the States' locks (two-
// phase: all taken, in index order, then all given back), and queueing the
// task at once when nothing it conflicts with is pending. Before all that,
// worker 0 of a one-worker runtime tries the inline path (inline.hpp): the
// task runs at once, unregistered.
#include <fmt/format.h>

#include <algorithm>

#include "canopy/detail/affine.hpp"
#include "canopy/error.hpp"
#include "dataflow/flow.hpp"
#include "dataflow/inline.hpp"
#include "dataflow/stream_affinity.hpp"
#include "runtime/runtime_core.hpp"

namespace canopy::detail::flow {

constinit thread_local ThreadFlow tls_flow;

namespace {

[[noreturn, gnu::noinline]] void bad_access(std::size_t i, std::size_t n, const char* why) {
  throw Error(fmt::format("submit: access {} of {}: {}", i, n, why));
}

[[noreturn, gnu::noinline]] void too_many(std::size_t n) {
  throw Error(fmt::format("submit: {} accesses: at most {} per task (canopy::kMaxAccesses)", n, kMaxAccesses));
}

[[noreturn, gnu::noinline]] void stale_access(const Error& e, std::size_t i, std::size_t n) {
  throw Error(fmt::format("submit: access {} of {}: {}", i, n, e.what()));
}

// The handle's entry through data_entry (which throws for a null, freed or
// never handed out handle), remembered in the top-level State `s` if given.
[[gnu::noinline]] DataEntry* checked_entry(const Access& a, std::size_t i, std::size_t n, State* s) {
  DataEntry* e;
  try {
    e = &data_entry(a.data);
  } catch (const Error& err) {
    stale_access(err, i, n);
  }
  if (s) s->entry.store(e, std::memory_order_relaxed);
  return e;
}

// Past this many records, prepare stops inserting in order.
constexpr std::size_t kInsertionMax = 16;

// Sorts out[0, m) by handle index, merges repeats of a handle (a write
// wins) and numbers the slots; returns how many are left.
[[gnu::noinline]] std::size_t sort_and_merge(AccessRec* out, std::size_t m) {
  std::sort(out, out + m, [](const AccessRec& a, const AccessRec& b) { return a.index < b.index; });
  std::size_t k = 0;
  for (std::size_t i = 0; i < m; ++i) {
    if (k > 0 && out[k - 1].index == out[i].index) {
      out[k - 1].mode |= out[i].mode;
      continue;
    }
    out[k] = out[i];
    out[k].slot = static_cast<std::uint16_t>(k);
    ++k;
  }
  return k;
}

// Checks the accesses and writes their records into `out`, sorted by
// handle index (repeats of a handle merged: a write wins); returns how
// many. With a top-level Flow `f`, also finds each record's State, and
// checks the handle against the registry entry that State remembers (the
// test data_entry makes: the entry's live generation is the handle's).
std::size_t prepare(const Access* acc, std::size_t n, AccessRec* out, Flow* f, bool one_node) {
  std::size_t m = 0;
  bool append = false;  // out[0, m) unsorted from some point on: sort_and_merge at the end
  for (std::size_t i = 0; i < n; ++i) {
    const Access& a = acc[i];
    if (!a.data) [[unlikely]]
      bad_access(i, n, "null data handle");
    // Read as a byte: a C caller may pass any value.
    const auto raw = static_cast<std::uint8_t>(a.mode);
    if (raw > static_cast<std::uint8_t>(AccessMode::ReadWrite)) [[unlikely]]
      bad_access(i, n, "access mode is not Read, Write or ReadWrite");
    const std::uint32_t index = a.data.index;
    State* s = nullptr;
    DataEntry* e;
    if (f && (index >> Flow::kChunkBits) < Flow::kMaxChunks) [[likely]] {
      s = root_state(f, index);
      e = s->entry.load(std::memory_order_relaxed);
      if (!e || e->live.load(std::memory_order_acquire) != a.data.generation) [[unlikely]]
        e = checked_entry(a, i, n, s);
    } else {
      e = checked_entry(a, i, n, nullptr);
      if (f) s = root_state(f, index);  // (an index beyond the table: throws)
    }
    const std::uint8_t mode = raw == 0 ? kModeRead : kModeWrite;
    // Insertion: accesses lists are short, and often sorted already. A long
    // list out of order is appended and sorted once at the end instead
    // (insertion is quadratic: 40% of the submission time of 250-access
    // tasks, measured with perf).
    std::size_t j = m;
    if (m > 0 && out[m - 1].index >= index && !append) [[unlikely]] {
      if (m >= kInsertionMax) {
        append = true;
        goto place;
      }
      while (j > 0 && out[j - 1].index > index) --j;
      if (j > 0 && out[j - 1].index == index) {
        out[j - 1].mode |= mode;
        continue;
      }
      for (std::size_t k = m; k > j; --k) {
        out[k] = out[k - 1];
        out[k].slot = static_cast<std::uint16_t>(k);
      }
    }
  place:
    AccessRec& r = out[j];
    r.state = s;
    r.entry = e;
    r.index = index;
    r.slot = static_cast<std::uint16_t>(j);
    r.mode = mode;
    r.kind = kRecTask;
    r.one_node_bytes = one_node ? e->node_bytes[0].load(std::memory_order_relaxed) : 0;
    ++m;
  }
  if (append) [[unlikely]]
    m = sort_and_merge(out, m);
  return m;
}

// The common case of a top-level submission, in one pass: 1..kFastMax
// accesses in strictly increasing handle order (so no repeats to merge and
// already in lock order), each handle's State created, remembering the
// handle's live registry entry and holding its totals (a handle submitted
// before). Each access is checked, its record written, its State locked
// and the access registered (two-phase: the locks are given back by the
// caller, after the last registration). Returns how many accesses wait;
// -1 when an access fails the check: the registrations made so far are
// undone (nobody saw them: their locks were held throughout) and their
// locks given back, and the checked path (prepare) takes over.
inline int register_fast(const Access* acc, std::size_t n, AccessRec* out, Flow* f, std::uint32_t epoch,
                         bool* poisoned) {
  // Per registered access: the State's tail before it was queued, or
  // kWasActive when it became active at once.
  AccessRec* undo[kFastMax];
  AccessRec* const kWasActive = out;  // (never a tail of its own State before this call)
  if (n - 1 >= kFastMax) [[unlikely]]  // (also n == 0)
    return -1;
  std::uint32_t least = 0;  // the smallest index the next access may have
  int waiting = 0;
  std::size_t i = 0;
  for (; i < n; ++i) {
    const std::uint32_t index = acc[i].data.index;
    const std::uint32_t gen = acc[i].data.generation;
    const auto raw = static_cast<std::uint8_t>(acc[i].mode);
    const std::uint32_t c = index >> Flow::kChunkBits;
    if (index < least || c >= Flow::kMaxChunks || raw > 2 || gen == 0) [[unlikely]]
      break;
    least = index + 1;  // (no overflow: index < kMaxChunks * kChunk)
    State* chunk = f->chunks[c].load(std::memory_order_acquire);
    if (!chunk) [[unlikely]]
      break;
    State* s = chunk + (index & (Flow::kChunk - 1));
    DataEntry* e = s->entry.load(std::memory_order_relaxed);
    if (!e || e->live.load(std::memory_order_acquire) != gen ||
        s->generation.load(std::memory_order_relaxed) != gen) [[unlikely]]
      break;
    AccessRec& r = out[i];
    r.state = s;
    r.entry = e;
    r.index = index;
    r.slot = static_cast<std::uint16_t>(i);
    const std::uint8_t mode = raw == 0 ? kModeRead : kModeWrite;
    r.mode = mode;
    r.kind = kRecTask;
    // (On the entry's first line, which `live` just brought in; used only
    // by a one-node runtime's release.)
    r.one_node_bytes = e->node_bytes[0].load(std::memory_order_relaxed);
    s->lock.lock();
    if (s->head == nullptr && (s->active == 0 || (mode == kModeRead && s->active_write == 0))) {
      ++s->active;
      s->active_write = mode;
      if (s->poison == epoch) [[unlikely]]
        *poisoned = true;
      undo[i] = kWasActive;
    } else {
      r.next = nullptr;
      undo[i] = s->tail;
      if (s->tail)
        s->tail->next = &r;
      else
        s->head = &r;
      s->tail = &r;
      ++waiting;
    }
  }
  if (i == n) [[likely]] {
    // As on the inline path: the States and registry entries a few indexes
    // ahead, which handles used in registration order reach cold.
    __builtin_prefetch(out[n - 1].state + kPrefetchAhead, 1);
    __builtin_prefetch(out[n - 1].entry + kPrefetchAhead, 1);
    return waiting;
  }
  // Undo, newest first (each State holds only this call's last change).
  while (i-- > 0) {
    State* s = out[i].state;
    if (undo[i] == kWasActive) {
      --s->active;  // (active_write matters only while active != 0, where it is unchanged)
    } else {
      s->tail = undo[i];
      if (undo[i])
        undo[i]->next = nullptr;
      else
        s->head = nullptr;
    }
    s->lock.unlock();
  }
  return -1;
}

// Registers one access under its State's lock; true when it must wait.
inline bool register_access(State* s, AccessRec* r, std::uint32_t epoch, bool* poisoned) {
  if (s->head == nullptr && (s->active == 0 || (r->mode == kModeRead && s->active_write == 0))) {
    ++s->active;
    s->active_write = r->mode;
    if (s->poison == epoch) [[unlikely]]
      *poisoned = true;
    return false;
  }
  r->next = nullptr;
  if (s->tail)
    s->tail->next = r;
  else
    s->head = r;
  s->tail = r;
  return true;
}

Domain* child_domain(Node* n, Worker* w) {
  if (!n->children) n->children = new_child_domain(n, w);
  return n->children;
}

}  // namespace

Domain* current_domain(Worker* w) {
  Node* n = tls_flow.node;
  if (n && n->domain->flow->rt == w->rt) [[unlikely]]
    return child_domain(n, w);
  return &flow_of(w->rt)->root;
}

Domain* current_domain_if_any(Worker* w) {
  Node* n = tls_flow.node;
  if (n && n->domain->flow->rt == w->rt) return n->children;
  return &flow_of(w->rt)->root;
}

namespace {

// Everything but the inline path (inline.hpp), out of line: the inline
// path's frame stays small.
// kStream: the runtime has automatic affinity (stream_affinity.hpp); the
// other instantiation is the plain submission, without a trace of it.
template <bool kStream>
[[gnu::noinline]] void submit_on(Worker* w, const Access* acc, std::size_t count, const Affinity& affinity,
                                 const FnOps& ops, void* src) {
  if (count > kMaxAccesses) [[unlikely]]
    too_many(count);
  if (affinity.kind == Affinity::Kind::Data) [[unlikely]] {
    try {
      data_entry(affinity.data);
    } catch (const Error& e) {
      throw Error(fmt::format("submit: affinity near data: {}", e.what()));
    }
  }
  // The top level (root: its Flow), or the children of the running task.
  Domain* d;
  Flow* root;
  if (tls_flow.node == nullptr) [[likely]] {
    root = flow_of(w->rt);
    d = &root->root;
  } else {
    d = current_domain(w);
    root = d->owner == nullptr ? d->flow : nullptr;
  }
  // Automatic affinity of the stream (stream_affinity.hpp): top-level tasks
  // without a hint, on a runtime of several workers.
  StreamTask stream{};
  if constexpr (kStream) {
    if (tls_flow.node == nullptr && affinity.kind == Affinity::Kind::None && w->rt->num_workers > 1)
      stream = stream_task_submitted(w->rt, acc, count);
  }
  // Node: header, records (room for `count`; repeats merged may leave some
  // unused), a timed stream task's StreamTimer, callable (aligned).
  const std::size_t recs_end = sizeof(Node) + count * sizeof(AccessRec);
  std::size_t fn_offset = (recs_end + ops.align - 1) & ~(ops.align - 1);
  if (kStream && stream.timed) {
    const std::size_t align = std::max(ops.align, alignof(StreamTimer));
    fn_offset = (recs_end + sizeof(StreamTimer) + align - 1) & ~(align - 1);
  }
  std::int8_t cls;
  void* mem = alloc_bytes(w, fn_offset + ops.size, &cls);
  Node* n = ::new (mem) Node(d, &ops, affinity, static_cast<std::uint32_t>(fn_offset), cls);
  if (kStream && stream.id != 0) {
    n->stream_id = stream.id;
    n->affinity = Affinity::worker(0);  // the mark (make_ready asks stream_worker)
    if (stream.timed) {
      ::new (static_cast<char*>(mem) + fn_offset - sizeof(StreamTimer)) StreamTimer{&ops, stream.stream, stream.id};
      n->ops = &kStreamTimedOps;
    }
  }
  n->seq = d->next_seq.load(std::memory_order_relaxed);
  d->next_seq.store(n->seq + 1, std::memory_order_relaxed);
  AccessRec* recs = n->recs();
  try {
    ops.construct(static_cast<char*>(mem) + fn_offset, src);
  } catch (...) {
    free_bytes(w, mem, cls);
    throw;
  }
  // A top-level submission on a one-worker runtime counts itself, then
  // waits while worker 0 runs a task inline, before it reads any State
  // (inline.hpp). Elsewhere it is counted once registered.
  const bool announced = root && w->rt->num_workers == 1;
  if (announced) [[unlikely]] {
    d->count.fetch_add(1, std::memory_order_seq_cst);
    if (root->inline_running.load(std::memory_order_seq_cst) != 0) [[unlikely]]
      wait_inline(root);
  }
  // Two-phase locking in index order (see flow.hpp).
  const std::uint32_t epoch = d->error_epoch.load(std::memory_order_relaxed);
  bool poisoned = false;
  int waiting = root ? register_fast(acc, count, recs, root, epoch, &poisoned) : -1;
  std::size_t m = count;
  if (waiting < 0) [[unlikely]] {
    poisoned = false;
    waiting = 0;
    try {
      m = prepare(acc, count, recs, root, machine_nodes(w->rt) == 1);
    } catch (...) {
      if (ops.destroy) ops.destroy(n->fn());
      free_bytes(w, mem, cls);
      if (announced) uncount(d);
      throw;
    }
    if (!root) {
      d->table_lock.lock();
      try {
        for (std::size_t i = 0; i < m; ++i) recs[i].state = child_state(d, recs[i].index, w);
      } catch (...) {
        d->table_lock.unlock();
        if (ops.destroy) ops.destroy(n->fn());
        free_bytes(w, mem, cls);
        throw;
      }
      d->table_lock.unlock();
    }
    for (std::size_t i = 0; i < m; ++i) {
      State* s = recs[i].state;
      s->lock.lock();  // (registering under the locks taken so far is still two-phase)
      const std::uint32_t gen = recs[i].entry->live.load(std::memory_order_relaxed);
      if (root && s->generation.load(std::memory_order_relaxed) != gen) [[unlikely]]
        s->reset_totals(gen);  // a new handle in this registry slot
      waiting += register_access(s, &recs[i], epoch, &poisoned);
    }
  }
  n->naccess = static_cast<std::uint16_t>(m);
  // Counted before it can finish (it cannot before the locks go).
  if (!announced) d->count.fetch_add(1, std::memory_order_relaxed);
  // Before the locks go: an activation (under a lock) decrements it.
  n->preds.store(waiting, std::memory_order_relaxed);
  if (poisoned) n->poisoned.store(1, std::memory_order_relaxed);
  for (std::size_t i = 0; i < m; ++i) recs[i].state->lock.unlock();
  if (waiting == 0) {
    // One worker: nobody else can run it, and everything it waits for has
    // finished: run it now (no queueing; its node is freed while in cache).
    if (w->rt->num_workers == 1 && affinity.kind == Affinity::Kind::None)
      run_now(n, w);
    else
      make_ready(n, w);
  }
}

inline void submit_to(Worker* w, const Access* acc, std::size_t count, const Affinity& affinity, const FnOps& ops,
                      void* src) {
  if (w->rt->options.affinity == AutoAffinity::Auto) [[unlikely]]
    submit_on<true>(w, acc, count, affinity, ops, src);
  else
    submit_on<false>(w, acc, count, affinity, ops, src);
}

}  // namespace

void submit(RuntimeCore* rt, const Access* accesses, std::size_t count, const Affinity& affinity, const FnOps& ops,
            void* src) {
  Worker* w = tls_worker;
  if (w && (rt == nullptr || w->rt == rt)) [[likely]] {
    // Worker 0 of a one-worker runtime, at the top level, no hint: run it
    // now, unregistered, if nothing is unfinished (inline.hpp).
    ThreadFlow& t = tls_flow;
    if (t.node == nullptr && affinity.kind == Affinity::Kind::None && w->index == 0 && w->rt->num_workers == 1 &&
        try_inline(t, w, flow_of(t, w->rt), accesses, count, ops, src)) [[likely]]
      return;
    submit_to(w, accesses, count, affinity, ops, src);
    return;
  }
  RuntimeScope scope(rt ? rt : default_core());
  Worker* sw = scope.worker();
  ThreadFlow& t = tls_flow;
  // A data-flow body submitting to another runtime: its waits cover that
  // runtime's top level too (scope.cpp). (Outside bodies the flow cache
  // records the runtime.)
  if (t.node != nullptr && t.node->domain->flow->rt != sw->rt) [[unlikely]]
    remember_flow(t, flow_of(t, sw->rt), t.node);
  if (t.node == nullptr && affinity.kind == Affinity::Kind::None && sw->index == 0 && sw->rt->num_workers == 1 &&
      try_inline(t, sw, flow_of(t, sw->rt), accesses, count, ops, src))
    return;
  submit_to(sw, accesses, count, affinity, ops, src);
}

}  // namespace canopy::detail::flow
