// Waiting: wait_all (the current domain becomes idle) and wait(Data) (every
// task submitted so far that accesses the handle has finished), both
// helping while they wait (the runtime's wait_slow: pop, mail, steal, park
// on a one-task group that the finisher completes), and both reporting the
// domain's first exception; the public entry points; data_locality.
//
// Which of its own deque's tasks a waiter may run: inside a data-flow
// task's body, everything pushed since the body started (its children and
// what they released); from a thread that entered the runtime for this
// call, everything (only self-counting tasks can be left there); from a
// worker elsewhere (Runtime::run, a plain task), the data-flow tasks on top
// of its deque, then only what is pushed during the wait, so that a slot of
// an enclosing fork-join frame is never run from here.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "canopy/error.hpp"
#include "dataflow/flow.hpp"
#include "dataflow/free_wait.hpp"
#include "runtime/runtime_core.hpp"

namespace canopy::detail::flow {

namespace {

// Runs the data-flow tasks on top of w's own deque (peeking at the newest
// slot, which the owner may read).
void drain_top_nodes(Worker* w) {
  for (;;) {
    const std::int64_t b = w->deque.bottom();
    if (!w->deque.has_above(std::numeric_limits<std::int64_t>::min())) return;
    if (!is_node_slot(w->deque.reserve(b - 1))) return;
    const TaskSlot* s = w->deque.pop_at(b);
    if (!s) return;
    execute(w, s);
  }
}

std::int64_t help_base(Worker* w, Domain* d, bool entered) {
  if (entered) return std::numeric_limits<std::int64_t>::min();
  if (d->owner) return current_body_base();
  drain_top_nodes(w);
  return w->deque.bottom();
}

void report(Domain* d) {
  if (!d || d->error.load(std::memory_order_relaxed) == nullptr) [[likely]]
    return;
  ErrorBox* box = d->error.exchange(nullptr, std::memory_order_acq_rel);
  if (!box) return;
  // Tasks submitted from now on are not cancelled by the failures reported here.
  d->error_epoch.fetch_add(1, std::memory_order_relaxed);
  std::exception_ptr e = std::move(box->error);
  delete box;
  std::rethrow_exception(e);
}

void wait_domain(Worker* w, Domain* d, std::int64_t base) {
  if ((d->count.load(std::memory_order_acquire) & ~kWaiting) == 1) return;
  AllWaiter me;
  me.group.init(w, base);
  me.group.init_owner_side(w, base, 1);
  d->wait_lock.lock();
  me.next = d->waiters;
  if (me.next) me.next->prev = &me;
  d->waiters = &me;
  me.linked = true;
  d->wait_lock.unlock();
  // Either a finisher's 2 -> 1 decrement comes after this and sees
  // kWaiting (it wakes us), or the domain is idle already (we leave).
  const std::int64_t v = d->count.fetch_or(kWaiting, std::memory_order_seq_cst);
  if ((v & ~kWaiting) == 1) {
    d->wait_lock.lock();
    if (me.linked) {
      if (me.prev)
        me.prev->next = me.next;
      else
        d->waiters = me.next;
      if (me.next) me.next->prev = me.prev;
      if (!d->waiters) d->count.fetch_and(~kWaiting, std::memory_order_seq_cst);
      d->wait_lock.unlock();
      return;
    }
    d->wait_lock.unlock();  // a finisher took the list: it completes our group
  }
  wait_slow(w, &me.group);
}

void wait_all_on(Worker* w, bool entered) {
  Domain* d = current_domain_if_any(w);
  if (!d) return;  // a task that submitted nothing
  wait_domain(w, d, help_base(w, d, entered));
  report(d);
}

// Waits until every access queued or active in s now has been released
// (a waiter record queued like a writer), helping from `base`.
void wait_state(Worker* w, State* s, std::int64_t base) {
  DataWaiter me;
  me.rec.kind = kRecWaiter;
  me.rec.mode = kModeWrite;
  me.rec.state = s;
  me.group.init(w, base);
  me.group.init_owner_side(w, base, 1);
  s->lock.lock();
  const bool idle = s->head == nullptr && s->active == 0;
  if (!idle) {
    if (s->tail)
      s->tail->next = &me.rec;
    else
      s->head = &me.rec;
    s->tail = &me.rec;
  }
  s->lock.unlock();
  if (!idle) wait_slow(w, &me.group);
}

bool state_busy(State* s) {
  s->lock.lock();
  const bool busy = s->head != nullptr || s->active != 0;
  s->lock.unlock();
  return busy;
}

void check_data(Data data, const char* what) {
  try {
    data_entry(data);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", what, e.what()));
  }
}

// The tasks of the current domain that access data (no report).
void wait_data_in_domain(Worker* w, Domain* d, Data data, bool entered) {
  State* s;
  if (d->owner) {
    d->table_lock.lock();
    s = child_state_if_any(d, data.index);
    d->table_lock.unlock();
  } else {
    s = root_state_if_any(d->flow, data.index);
  }
  if (s) wait_state(w, s, help_base(w, d, entered));
}

void wait_data_on(Worker* w, Data data, bool entered) {
  check_data(data, "wait");
  Domain* d = current_domain_if_any(w);
  if (!d) return;
  wait_data_in_domain(w, d, data, entered);
  report(d);
}

// ---- the waits without a runtime (scope.cpp keeps the record) ----

// Flows to cover, each once: on the stack (a wait is often called in a
// loop), on the heap only when every flow is looked at.
struct FlowList {
  static constexpr int kInline = ThreadFlow::kSeen + 3;
  Flow* inline_flows[kInline];
  int n = 0;
  std::vector<Flow*> more;
  void add(Flow* f) {
    if (!f) return;
    for (int i = 0; i < n; ++i)
      if (inline_flows[i] == f) return;
    if (std::find(more.begin(), more.end(), f) != more.end()) return;
    if (n < kInline)
      inline_flows[n++] = f;
    else
      more.push_back(f);
  }
  bool empty() const { return n == 0; }
  template <class Fn>
  void each(Fn&& fn) const {
    for (int i = 0; i < n; ++i) fn(inline_flows[i]);
    for (Flow* f : more) fn(f);
  }
};

void add_if_unclean(Flow* f, void* arg) {
  if (!flow_clean(f)) static_cast<FlowList*>(arg)->add(f);
}

// A top-level wait (no data-flow body on this thread's stack): the calling
// worker's runtime, the flows the thread used, the default runtime's if it
// exists (tasks other threads submitted there: the old rule), and after an
// overflow of the record every flow that is not clean.
FlowList top_flows(ThreadFlow& t, Worker* w) {
  FlowList l;
  if (w) l.add(flow_of(t, w->rt));
  l.add(t.cache_flow);
  for (int i = 0; i < t.nseen; ++i) l.add(t.seen[i].flow);
  // (The registry's lock only when the default runtime is not one of those.)
  RuntimeCore* dc = default_core_if_any();
  if (dc && dc != t.cache_rt && (!w || dc != w->rt)) l.add(find_flow(dc));
  if (t.seen_overflow) {
    for_each_flow(&add_if_unclean, &l);
    t.seen_overflow = false;
  }
  return l;
}

// The flows a body submitted to in other runtimes (and the record's
// entries for them, dropped once waited for).
FlowList body_flows(ThreadFlow& t, Node* body) {
  FlowList l;
  for (int i = 0; i < t.nseen; ++i)
    if (t.seen[i].body == body && t.seen[i].body_seq == body->seq) l.add(t.seen[i].flow);
  return l;
}

// Until f's top level is idle: from w when it is a worker of f's runtime,
// else entering that runtime (only when there is something to wait for:
// the runtime of an idle flow may be gone).
void wait_flow(Worker* w, Flow* f) {
  Domain* d = &f->root;
  if (w && w->rt == f->rt) {
    wait_domain(w, d, help_base(w, d, false));
    return;
  }
  if ((d->count.load(std::memory_order_acquire) & ~kWaiting) == 1) return;
  RuntimeScope scope(f->rt);
  wait_domain(scope.worker(), d, std::numeric_limits<std::int64_t>::min());
}

// Until no task of f's top level accesses data (as wait_flow).
void wait_flow_data(Worker* w, Flow* f, Data data) {
  State* s = root_state_if_any(f, data.index);
  if (!s || !state_busy(s)) return;  // (not even the top-of-deque tasks help_base runs)
  if (w && w->rt == f->rt) {
    wait_state(w, s, help_base(w, &f->root, false));
    return;
  }
  RuntimeScope scope(f->rt);
  wait_state(scope.worker(), s, std::numeric_limits<std::int64_t>::min());
}

void report_all(const FlowList& l) {
  l.each([](Flow* f) { report(&f->root); });
}

// The running body of w's runtime, or nullptr (at the top level, or in a
// body of another runtime this thread entered w's runtime from).
Node* own_body(const ThreadFlow& t, Worker* w) {
  Node* n = t.node;
  return n && w && n->domain->flow->rt == w->rt ? n : nullptr;
}

void wait_all_scoped() {
  Worker* w = tls_worker;
  ThreadFlow& t = tls_flow;
  if (t.node == nullptr) {
    const FlowList l = top_flows(t, w);
    l.each([w](Flow* f) { wait_flow(w, f); });
    prune_seen(t);
    report_all(l);
    return;
  }
  Node* body = own_body(t, w);
  if (!body) {  // a body of another runtime below: this runtime's top level, as wait_all(rt)
    wait_all_on(w, false);
    return;
  }
  // Its children, and what it submitted to other runtimes.
  Domain* d = body->children;
  if (d) wait_domain(w, d, help_base(w, d, false));
  const FlowList l = body_flows(t, body);
  l.each([w](Flow* f) { wait_flow(w, f); });
  if (!l.empty()) prune_seen(t);
  report(d);
  report_all(l);
}

void wait_data_scoped(Data data) {
  check_data(data, "wait");
  Worker* w = tls_worker;
  ThreadFlow& t = tls_flow;
  if (t.node == nullptr) {
    const FlowList l = top_flows(t, w);
    l.each([w, data](Flow* f) { wait_flow_data(w, f, data); });
    prune_seen(t);
    report_all(l);
    return;
  }
  Node* body = own_body(t, w);
  if (!body) {
    wait_data_on(w, data, false);
    return;
  }
  Domain* d = body->children;
  if (d) wait_data_in_domain(w, d, data, false);
  const FlowList l = body_flows(t, body);
  l.each([w, data](Flow* f) { wait_flow_data(w, f, data); });
  if (!l.empty()) prune_seen(t);
  report(d);
  report_all(l);
}

struct LocalitySum {
  Data d;
  DataLocality out;
};

void add_flow_locality(Flow* f, void* arg) {
  auto* sum = static_cast<LocalitySum*>(arg);
  State* s = root_state_if_any(f, sum->d.index);
  if (!s) return;
  s->lock.lock();
  if (s->generation.load(std::memory_order_relaxed) == sum->d.generation) {
    sum->out.local_bytes += s->local_bytes.load(std::memory_order_relaxed);
    sum->out.remote_bytes += s->remote_bytes.load(std::memory_order_relaxed);
    sum->out.accesses += s->accesses.load(std::memory_order_relaxed);
  }
  s->lock.unlock();
}

void add_flow(Flow* f, void* arg) { static_cast<FlowList*>(arg)->add(f); }

// data_free inside a data-flow body: a handle that the body or a task it is
// a child of lists (waiting would wait for itself), or that unfinished
// tasks elsewhere use (waiting inside a task could wait for a task that
// waits for it), is refused; the body's own children are waited for.
void before_free_in_body(Worker* w, ThreadFlow& t, Data data, const FlowList& all) {
  for (Node* n = t.node; n; n = n->domain->owner) {
    bool listed = false;
    if (n == &t.inline_node) {
      for (std::size_t i = 0; i < t.inline_count; ++i) listed |= t.inline_acc[i].data == data;
    } else {
      for (int i = 0; i < n->naccess; ++i) listed |= n->recs()[i].index == data.index;
    }
    if (listed)
      throw Error(fmt::format("data_free: data handle #{} is listed by the running data-flow task{}: free it "
                              "after that task has finished",
                              data.index, n == t.node ? "" : " (by a task it is a child of)"));
  }
  if (Node* body = own_body(t, w); body && body->children) wait_data_in_domain(w, body->children, data, false);
  all.each([&](Flow* f) {
    if (State* s = root_state_if_any(f, data.index); s && state_busy(s))
      throw Error(fmt::format("data_free: data handle #{} is still used by unfinished data-flow tasks of the "
                              "runtime at {} ({} workers); a task cannot wait for them: free it after they have "
                              "finished (e.g. after wait_all() outside any task)",
                              data.index, fmt::ptr(f->rt), f->rt->num_workers));
  });
}

}  // namespace

void before_data_free(Data data) {
  try {
    data_entry(data);
  } catch (const Error&) {
    return;  // data_free reports a null or stale handle itself
  }
  FlowList all;
  for_each_flow(&add_flow, &all);
  if (all.empty()) return;
  Worker* w = tls_worker;
  ThreadFlow& t = tls_flow;
  if (t.node) {
    before_free_in_body(w, t, data, all);
    return;
  }
  // Outside any body: wait (helping) for the tasks of every runtime that
  // use the handle; their exceptions are left for the next wait.
  all.each([w, data](Flow* f) { wait_flow_data(w, f, data); });
}

void wait_all(RuntimeCore* rt) {
  if (rt == nullptr) {
    wait_all_scoped();
    return;
  }
  Worker* w = tls_worker;
  if (w && w->rt == rt) {
    wait_all_on(w, false);
  } else {
    RuntimeScope scope(rt);
    wait_all_on(scope.worker(), true);
  }
  if (tls_flow.nseen) prune_seen(tls_flow);
}

void wait(RuntimeCore* rt, Data d) {
  if (rt == nullptr) {
    wait_data_scoped(d);
    return;
  }
  Worker* w = tls_worker;
  if (w && w->rt == rt) {
    wait_data_on(w, d, false);
  } else {
    RuntimeScope scope(rt);
    wait_data_on(scope.worker(), d, true);
  }
  if (tls_flow.nseen) prune_seen(tls_flow);
}

}  // namespace canopy::detail::flow

namespace canopy {

void wait_all() { detail::flow::wait_all(nullptr); }
void wait_all(Runtime& rt) { detail::flow::wait_all(rt.core()); }
void wait(Data d) { detail::flow::wait(nullptr, d); }
void wait(Runtime& rt, Data d) { detail::flow::wait(rt.core(), d); }

DataLocality data_locality(Data d) {
  try {
    detail::data_entry(d);
  } catch (const Error& e) {
    throw Error(fmt::format("data_locality: {}", e.what()));
  }
  detail::flow::LocalitySum sum{d, {}};
  detail::flow::for_each_flow(&detail::flow::add_flow_locality, &sum);
  return sum.out;
}

}  // namespace canopy
