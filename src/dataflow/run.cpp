// Running a data-flow task and what follows: the body
// (its exception kept for the flow's next wait), the nesting rule (a task
// with children finishes when its body and every child have), releasing its
// accesses (which activates the accesses queued behind them and makes ready
// the tasks whose last queued access that was; and adds up where its bytes
// were, for the worker and the handles: locality), and counting it in its
// domain (which wakes threads in wait_all when the domain becomes idle).
//
// Where a ready task goes: its affinity hint (detail::schedule); without
// one, on a runtime of several NUMA nodes, the node holding most of the
// bytes it writes (or accesses: RuntimeOptions::data_affinity); otherwise
// the calling worker's own deque, the cheapest path — or, for one of the
// tasks a finishing task made ready (the one submitted first), straight on
// this worker after it; the others go to the deque oldest at the bottom.
#include <algorithm>

#include "canopy/detail/affine.hpp"
#include "canopy/detail/trace.hpp"
#include "dataflow/flow.hpp"
#include "dataflow/stream_affinity.hpp"
#include "runtime/runtime_core.hpp"

namespace canopy::detail::flow {

namespace {

Group* run_node_slot(const TaskSlot* s, Worker* w);
void run_affine_node(AffineTask* t, Worker* w);
// Called by a task's last holder: releases its accesses, counts it in its
// domain; returns a task it made ready for the caller to run next (or nullptr).
// `plain`: it ran here, on a one-node runtime, without failing, and has no
// children (the quick release applies if it is a top-level task). Inlined
// into run_node: a call less per task.
// Traced: also records the releases (one test per run_node entry, not per task).
template <bool Traced>
[[gnu::always_inline]] inline Node* finish(Node* n, Worker* w, bool plain);

// Owner computes applies: several NUMA nodes, and data_affinity not None.
// (Read from the runtime each time: see Flow::rt.)
inline bool owner_computes(const RuntimeCore* rt) {
  return rt->nodes.size() > 1 && rt->options.data_affinity != DataAffinity::None;
}

}  // namespace

bool is_node_slot(const TaskSlot* s) { return slot_run(s) == &run_node_slot; }

void record_error(Domain* d, std::exception_ptr e) noexcept {
  auto* box = new (std::nothrow) ErrorBox{std::move(e)};
  if (!box) return;  // out of memory while reporting: the task still counts as failed
  ErrorBox* expected = nullptr;
  if (!d->error.compare_exchange_strong(expected, box, std::memory_order_acq_rel)) delete box;
}

void access_locality_slow(int nodes, const DataEntry* e, int machine_node, std::uint64_t* local,
                          std::uint64_t* remote) {
  // The task that just ran may have been the first to write the handle:
  // learn where its pages went (one load when the location is complete).
  data_learn_if_unplaced(*const_cast<DataEntry*>(e));
  std::uint64_t l = 0, r = 0;
  for (int k = 0; k < nodes; ++k) (k == machine_node ? l : r) += e->bytes_on_node(k);
  *local = l;
  *remote = r;
}

void claim_touch_marks(Node* n) noexcept {
  AccessRec* recs = n->recs();
  for (int i = 0; i < n->naccess; ++i) data_touch_claim(*recs[i].entry, recs[i].mode == kModeWrite);
}

namespace {

// Owner computes: the runtime node holding most of the bytes the task
// writes (or accesses); no target when none of them is placed yet. A handle
// marked next-touch / next-write does not count: its pages are about to
// follow whoever runs the task, so where they are now should not decide it
// (else a matrix first touched on one node would draw every first writer
// there, and the marks would move nothing).
Target owner_target(RuntimeCore* rt, Node* n) {
  const int nodes = machine_nodes(rt);
  const bool writes_decide = rt->options.data_affinity == DataAffinity::Write;
  const bool marks = touch_marks_pending();
  std::uint64_t bytes[kDataMaxNodes] = {};
  bool any = false;
  AccessRec* recs = n->recs();
  for (int i = 0; i < n->naccess; ++i) {
    const AccessRec& r = recs[i];
    if (writes_decide && r.mode != kModeWrite) continue;
    if (marks && r.entry->touch_mark.load(std::memory_order_relaxed) != 0) [[unlikely]]
      continue;
    data_learn_if_unplaced(*r.entry);
    for (int k = 0; k < nodes; ++k) {
      const std::size_t b = r.entry->bytes_on_node(k);
      bytes[k] += b;
      any |= b != 0;
    }
  }
  Target t;
  if (!any) return t;
  int best = 0;
  for (int k = 1; k < nodes; ++k)
    if (bytes[k] > bytes[best]) best = k;
  t.node = runtime_node_of(rt, best);
  return t;
}

inline void push_node(Node* n, Worker* w) {
  push_task(w, w->deque.bottom(), &run_node_slot, nullptr,
            [n](TaskSlot* s) { store_word(s, 2, reinterpret_cast<std::uint64_t>(n)); });
}

}  // namespace

void make_ready(Node* n, Worker* w) {
  RuntimeCore* rt = w->rt;
  // A thread in an extra slot (an outside thread that entered for one call)
  // leaves when the call returns, and from then on thieves no longer look at
  // its deque (they scan extra slots only while one is held): a task left
  // there would wait until some thread takes an extra slot again. Its ready
  // tasks go to a node's loose queue instead, where the workers take them.
  const bool extra = w->index >= rt->num_workers;
  if (n->affinity.kind == Affinity::Kind::None && !owner_computes(rt) && !extra) [[likely]] {
    push_node(n, w);
    return;
  }
  n->link.run = &run_affine_node;
  Target t;
  if (n->stream_id != 0) [[unlikely]] {
    // Automatic affinity of the stream: its task's worker once mapped,
    // else where it would have gone without the mark.
    t.worker = stream_worker(rt, n->stream_id);
    if (t.worker < 0 && owner_computes(rt) && !n->poisoned.load(std::memory_order_relaxed)) t = owner_target(rt, n);
  } else if (n->affinity.kind != Affinity::Kind::None) {
    try {
      t = resolve(rt, n->affinity);
    } catch (...) {
      // The hint's handle was freed since submission: run it anywhere; the
      // body will meet the same stale handle if it uses it.
      t = Target{};
    }
  } else if (!n->poisoned.load(std::memory_order_relaxed)) {
    t = owner_target(rt, n);
  }
  if (t.none()) {
    if (!extra) {
      push_node(n, w);
      return;
    }
    t.node = 0;  // (loose)
  }
  schedule_targeted(w, &n->link, t);
}

void schedule_list(Node* head, Worker* w) {
  while (head) {
    Node* next = static_cast<Node*>(static_cast<void*>(head->link.next));
    make_ready(head, w);
    head = next;
  }
}

namespace {

// Traced: each task in a span (the entry points test whether w traces
// once, and run the traced copy out of line: the untraced one has no test).
template <bool Traced>
[[gnu::always_inline]] inline void run_node(Node* n, Worker* w) {
  for (;;) {
    // Ran here on a one-node runtime without failing (release_plain may apply).
    bool plain = false;
    if (!n->poisoned.load(std::memory_order_relaxed)) [[likely]] {
      // Where it runs, for the locality totals its release adds up.
      const int nodes = machine_nodes(w->rt);
      n->nodes = static_cast<std::uint8_t>(nodes);
      n->run_node = static_cast<std::int16_t>(nodes == 1 ? 0 : worker_machine_node(w));
      ThreadFlow& t = tls_flow;
      Node* prev = t.node;
      const std::int64_t prev_base = t.body_base;
      t.node = n;
      t.body_base = w->deque.bottom();
      // Next-touch / next-write marks (data_mark_next_touch): one load while none is set.
      if (touch_marks_pending()) [[unlikely]]
        claim_touch_marks(n);
      try {
        if constexpr (Traced)
          trace_call(w, kTraceFlowTask, n->ops, reinterpret_cast<std::uintptr_t>(n), 0, [&] { n->ops->invoke(n->fn()); });
        else
          n->ops->invoke(n->fn());
        plain = nodes == 1;
      } catch (...) {
        n->failed = 1;
        record_error(n->domain, std::current_exception());
      }
      t.node = prev;
      t.body_base = prev_base;
    }
    if (n->ops->destroy) n->ops->destroy(n->fn());
    // The body's share of the nesting count: the last of body and children finishes.
    if (Domain* c = n->children) [[unlikely]] {
      if ((c->count.fetch_sub(1, std::memory_order_acq_rel) & ~kWaiting) != 1) return;
      plain = false;
    }
    // A task this one made ready runs next, here, without a trip through
    // the deque (the others were queued, for thieves).
    n = finish<Traced>(n, w, plain);
    if (!n) return;
    ++w->tasks_run;
  }
}

[[gnu::noinline]] void run_node_traced(Node* n, Worker* w) { run_node<true>(n, w); }

// Runs n (and the tasks it makes ready next), traced or not.
[[gnu::always_inline]] inline void run_node_entry(Node* n, Worker* w) {
  if (traces(w)) [[unlikely]]
    run_node_traced(n, w);
  else
    run_node<false>(n, w);
}

}  // namespace

void run_now(Node* n, Worker* w) {
  ++w->tasks_run;
  run_node_entry(n, w);
}

namespace {

Group* run_node_slot(const TaskSlot* s, Worker* w) {
  ++w->tasks_run;  // (the runtime counts the tasks it takes from affinity queues itself)
  run_node_entry(slot_pointer<Node>(s), w);
  return nullptr;
}

void run_affine_node(AffineTask* t, Worker* w) { run_node_entry(static_cast<Node*>(static_cast<void*>(t)), w); }

// Activates the queue's front group of s (the lock held, nothing active):
// a writer, or every reader up to the next writer; a wait(Data) record
// passes when nothing is active before it.
inline void activate_front(State* s, bool poisoned, Node** ready, DataWaiter** signals) {
  AccessRec* a = s->head;
  while (a) {
    if (a->kind == kRecWaiter) {
      if (s->active != 0) break;
      s->head = a->next;
      auto* dw = reinterpret_cast<DataWaiter*>(a);
      a->next = reinterpret_cast<AccessRec*>(*signals);
      *signals = dw;
    } else if (a->mode == kModeWrite) {
      if (s->active != 0) break;
      s->head = a->next;
      s->active = 1;
      s->active_write = kModeWrite;
    } else {
      s->head = a->next;
      ++s->active;
      s->active_write = kModeRead;
    }
    if (a->kind == kRecTask) {
      Node* n = node_of(a);
      if (poisoned) n->poisoned.store(1, std::memory_order_relaxed);
      if (n->preds.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        n->link.next = static_cast<AffineTask*>(static_cast<void*>(*ready));
        *ready = n;
      }
      if (s->active_write) break;
    }
    a = s->head;
  }
  if (!s->head) s->tail = nullptr;
}

void wake_waiters(Domain* d) {
  d->wait_lock.lock();
  AllWaiter* list = d->waiters;
  d->waiters = nullptr;
  for (AllWaiter* a = list; a; a = a->next) a->linked = false;
  d->count.fetch_and(~kWaiting, std::memory_order_seq_cst);
  d->wait_lock.unlock();
  while (list) {
    AllWaiter* next = list->next;  // read before: the waiter may return at once
    complete_remote(&list->group);
    list = next;
  }
}

}  // namespace

namespace {

// The release of a task that ran at the top level on a one-node runtime
// without failing and without children (the common case): per access, the
// lock, the totals, the count of active accesses, and the activation of
// what waits behind (rare here: most accesses find nobody queued).
[[gnu::always_inline]] inline void release_plain(Node* n, Domain* d, Worker* w, Node** ready,
                                                 DataWaiter** signals) {
  AccessRec* recs = n->recs();
  const int na = n->naccess;
  std::uint64_t task_local = 0;
  for (int i = 0; i < na; ++i) {
    AccessRec* r = &recs[i];
    State* s = r->state;
    const std::uint64_t b = r->one_node_bytes;
    task_local += b;
    s->lock.lock();
    s->add_totals(b, 0);
    if (--s->active == 0 && s->head)
      activate_front(s, s->poison == d->error_epoch.load(std::memory_order_relaxed), ready, signals);
    s->lock.unlock();
  }
  w->bytes_local.store(w->bytes_local.load(std::memory_order_relaxed) + task_local, std::memory_order_relaxed);
}

// Everything else: failed or cancelled tasks (their writes poison), tasks
// with children, children (whose totals also go to the top-level State),
// several NUMA nodes.
void release_general(Node* n, Domain* d, Worker* w, Node** ready, DataWaiter** signals) {
  Flow* f = d->flow;
  bool bad = n->failed || n->poisoned.load(std::memory_order_relaxed);
  if (Domain* c = n->children) {
    // A child's exception nobody reported inside: the task failed.
    if (ErrorBox* e = c->error.exchange(nullptr, std::memory_order_acq_rel)) {
      bad = true;
      record_error(d, std::move(e->error));
      delete e;
    }
    free_child_domain(c, w);
    n->children = nullptr;
  }
  const std::uint32_t epoch = d->error_epoch.load(std::memory_order_relaxed);
  const int nodes = n->nodes;
  const bool top = d->owner == nullptr;
  const bool ran = n->run_node >= 0;
  AccessRec* recs = n->recs();
  std::uint64_t task_local = 0, task_remote = 0;
  for (int i = 0; i < n->naccess; ++i) {
    AccessRec* r = &recs[i];
    State* s = r->state;
    std::uint64_t local = 0, remote = 0;
    if (ran) {
      if (nodes == 1)
        local = r->one_node_bytes;
      else
        access_locality(nodes, r->entry, n->run_node, &local, &remote);
      task_local += local;
      task_remote += remote;
    }
    s->lock.lock();
    if (bad && r->mode == kModeWrite) [[unlikely]] {
      s->poison = epoch;
      note_poison(d, epoch);
    }
    if (top && ran) s->add_totals(local, remote);
    if (--s->active == 0 && s->head) activate_front(s, s->poison == epoch, ready, signals);
    s->lock.unlock();
    if (!top && ran) {
      // Children's accesses count in the handle's top-level totals too.
      State* rs = root_state(f, r->index);
      const std::uint32_t gen = r->entry->live.load(std::memory_order_relaxed);
      rs->lock.lock();
      if (rs->generation.load(std::memory_order_relaxed) != gen)  // first use of this handle at the top level
        rs->reset_totals(gen);
      rs->add_totals(local, remote);
      rs->lock.unlock();
    }
  }
  // Counted for this worker: the one that ran the task, but for a task
  // with children whose last child ended elsewhere.
  if (ran) add_locality(w, task_local, task_remote);
}

}  // namespace

namespace {

Node* as_node(AffineTask* t) { return static_cast<Node*>(static_cast<void*>(t)); }
Node* list_next(Node* n) { return as_node(n->link.next); }

// True when a was submitted before b (sequence numbers wrap).
inline bool older(const Node* a, const Node* b) { return static_cast<std::int32_t>(a->seq - b->seq) < 0; }

// The tasks one release made ready (a short list), sorted newest first:
// queued in that order, the oldest ends at the bottom of this worker's
// deque, where it pops first, and thieves take the newest. Running the
// oldest first keeps to the program's order, which in factorizations and
// other step-by-step graphs is the critical path: a task of the next step
// would otherwise run before the one of this step that the next step's
// first task waits for.
[[gnu::noinline]] Node* newest_first(Node* list) {
  AffineTask* sorted = nullptr;
  AffineTask* rest = &list->link;
  while (rest) {
    AffineTask* t = rest;
    rest = rest->next;
    AffineTask** at = &sorted;
    while (*at && !older(as_node(*at), as_node(t))) at = &(*at)->next;
    t->next = *at;
    *at = t;
  }
  return as_node(sorted);
}

// Unlinks the last (oldest) task of the list that has no hint, into *next.
inline void take_oldest_unhinted(Node** list, Node** next) {
  Node* pick = nullptr;
  Node* before_pick = nullptr;
  Node* prev = nullptr;
  for (Node* n = *list; n; prev = n, n = list_next(n))
    if (n->affinity.kind == Affinity::Kind::None) {
      pick = n;
      before_pick = prev;
    }
  if (!pick) return;
  if (before_pick)
    before_pick->link.next = pick->link.next;
  else
    *list = list_next(pick);
  *next = pick;
}

// Traced: one event per task that n's release made ready (the edges of the
// data-flow graph a trace reader follows for the critical path).
[[gnu::noinline, gnu::cold]] void trace_releases(TraceRing* r, const Node* n, const Node* ready) noexcept {
  const std::uint64_t t = trace_clock();
  for (; ready; ready = static_cast<const Node*>(static_cast<const void*>(ready->link.next)))
    trace_put(r, kTraceRelease, t, t, reinterpret_cast<std::uintptr_t>(n), reinterpret_cast<std::uintptr_t>(ready), 0,
              0);
}

template <bool Traced>
[[gnu::always_inline]] inline Node* finish(Node* n, Worker* w, bool plain) {
  Node* next = nullptr;
  for (;;) {
    Domain* d = n->domain;
    Node* ready = nullptr;
    DataWaiter* signals = nullptr;
    if (plain && d->owner == nullptr) [[likely]]
      release_plain(n, d, w, &ready, &signals);
    else
      release_general(n, d, w, &ready, &signals);
    if constexpr (Traced)
      if (TraceRing* r = trace_ring(w)) trace_releases(r, n, ready);
    Node* owner = d->owner;
    const std::int8_t cls = n->size_class;
    n->~Node();
    free_bytes(w, n, cls);
    // One ready task without a hint (nor owner computes) is handed back to
    // run next; the rest are queued. Of several, the oldest runs next.
    if (ready && ready->link.next) [[unlikely]]
      ready = newest_first(ready);
    if (ready && !next && !owner_computes(w->rt)) take_oldest_unhinted(&ready, &next);
    if (ready) [[unlikely]]
      schedule_list(ready, w);
    while (signals) {
      DataWaiter* following = reinterpret_cast<DataWaiter*>(signals->rec.next);
      complete_remote(&signals->group);
      signals = following;
    }
    const std::int64_t v = d->count.fetch_sub(1, std::memory_order_seq_cst);
    const std::int64_t c = v & ~kWaiting;
    if (c == 2) {
      if (v & kWaiting) wake_waiters(d);
    } else if (c == 1) {
      // The last child of a task whose body had ended: the task finishes now.
      n = owner;
      plain = false;
      continue;
    }
    return next;
  }
}

}  // namespace

void end_inline_parent(Node* n, Worker* w) {
  if ((n->children->count.fetch_sub(1, std::memory_order_acq_rel) & ~kWaiting) != 1) return;
  if (Node* next = traces(w) ? finish<true>(n, w, false) : finish<false>(n, w, false)) {
    ++w->tasks_run;
    run_node_entry(next, w);
  }
}

void uncount(Domain* d) {
  const std::int64_t v = d->count.fetch_sub(1, std::memory_order_seq_cst);
  if ((v & ~kWaiting) == 2 && (v & kWaiting)) wake_waiters(d);
}

}  // namespace canopy::detail::flow
