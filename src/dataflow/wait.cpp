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

#include <limits>

#include "canopy/error.hpp"
#include "dataflow/flow.hpp"
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

void wait_data_on(Worker* w, Data data, bool entered) {
  try {
    data_entry(data);
  } catch (const Error& e) {
    throw Error(fmt::format("wait: {}", e.what()));
  }
  Domain* d = current_domain_if_any(w);
  if (!d) return;
  State* s;
  if (d->owner) {
    d->table_lock.lock();
    s = child_state_if_any(d, data.index);
    d->table_lock.unlock();
  } else {
    s = root_state_if_any(d->flow, data.index);
  }
  if (s) {
    const std::int64_t base = help_base(w, d, entered);
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
  report(d);
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

}  // namespace

void wait_all(RuntimeCore* rt) {
  Worker* w = tls_worker;
  if (w && (rt == nullptr || w->rt == rt)) {
    wait_all_on(w, false);
    return;
  }
  RuntimeScope scope(rt ? rt : default_core());
  wait_all_on(scope.worker(), true);
}

void wait(RuntimeCore* rt, Data d) {
  Worker* w = tls_worker;
  if (w && (rt == nullptr || w->rt == rt)) {
    wait_data_on(w, d, false);
    return;
  }
  RuntimeScope scope(rt ? rt : default_core());
  wait_data_on(scope.worker(), d, true);
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
