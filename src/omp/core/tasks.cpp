// The first-cut tasking engine (see tasks.hpp): a mutex-protected ready
// queue per team (priority-ordered insertion), address-based dependences
// among siblings, taskwait/taskgroup waits that run ready tasks, detach
// events. Every waiter sleeps on the team's barrier event word, which task
// completion and task submission bump when someone sleeps.
#include "tasks.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <sched.h>
#include <unordered_map>

#include "futex.hpp"

namespace canopy::omp {

namespace {

constexpr unsigned kFlagFinal = 2, kFlagDepend = 8, kFlagDetach = 1u << 13;

void noop(void*) {}

// Sleep on the team's event word until `done()` (running ready tasks meanwhile).
template <class Pred>
void help_until(Team& team, const Task* parent, const TaskGroup* group, Pred&& done) {
  Barrier& b = team.barrier;
  int spins = spin_budget();
  for (;;) {
    if (done()) return;
    if (run_one_task(team, parent, group)) continue;
    if (spins > 0) {
      --spins;
      cpu_relax();
      continue;
    }
    b.sleepers.fetch_add(1, std::memory_order_seq_cst);
    std::uint32_t ev = b.event.load(std::memory_order_seq_cst);
    // A task pushed before `ev` was read is found here; one pushed after bumps the event.
    const bool ran = run_one_task(team, parent, group);
    if (!ran && !done()) futex_wait(b.event, ev);
    b.sleepers.fetch_sub(1, std::memory_order_relaxed);
  }
}

void release(Task* t) {
  if (t->refs.fetch_sub(1, std::memory_order_acq_rel) == 1 && !t->implicit) {
    if (t->arg_storage) std::free(t->arg_storage);
    delete t;
  }
}

void push_ready_locked(TaskQueue& q, Task* t) {
  if (t->priority > 0) {
    auto it = std::find_if(q.ready.begin(), q.ready.end(), [&](Task* o) { return o->priority < t->priority; });
    q.ready.insert(it, t);
  } else {
    q.ready.push_back(t);
  }
  q.queued.fetch_add(1, std::memory_order_seq_cst);
}

// The task's body has run and (if detached) its event is fulfilled.
void finish(Task* t) {
  Team& team = *t->team;
  TaskQueue& q = *team.tasks;
  Task* parent = t->parent;
  bool woke = false;
  if (!t->dep_addrs.empty()) {  // only a task with dependences is in the records or has successors
    std::lock_guard<std::mutex> lock(q.m);
    for (void* addr : t->dep_addrs) {
      auto it = parent->deps.find(addr);
      if (it == parent->deps.end()) continue;
      DepRecord& rec = it->second;
      if (rec.last_out == t) rec.last_out = nullptr;
      rec.readers.erase(std::remove(rec.readers.begin(), rec.readers.end(), t), rec.readers.end());
      if (!rec.last_out && rec.readers.empty()) parent->deps.erase(it);
    }
    t->completed = true;
    for (Task* s : t->successors) {
      if (s->unresolved.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        if (!s->undeferred) push_ready_locked(q, s);
        woke = true;
      }
    }
    t->successors.clear();
  }
  // Order matters: the team's pending count goes last, because the join
  // (and so the end of the implicit parent task) waits for it.
  if (!t->counted) {  // an undeferred task without dependences: its creator was waiting, nobody else
    release(t);
    return;
  }
  if (t->member_of) t->member_of->pending.fetch_sub(1, std::memory_order_acq_rel);
  parent->children.fetch_sub(1, std::memory_order_acq_rel);
  release(parent);
  release(t);
  (void)woke;
  q.pending.fetch_sub(1, std::memory_order_acq_rel);
  wake_team_waiters(team);
}

void execute(ThreadState& ts, Task* t) {
  Task* prev = ts.task;
  ts.task = t;
  bool cancelled = (t->member_of && t->member_of->is_cancelled()) ||
                   t->team->cancel_parallel.load(std::memory_order_relaxed);
  if (!cancelled) t->fn(t->arg);
  ts.task = prev;
  if (t->completion_left.fetch_sub(1, std::memory_order_acq_rel) == 1) finish(t);
}

struct Dep {
  void* addr;
  bool out;
};

std::vector<Dep> parse_depend(void** d) {
  std::vector<Dep> deps;
  std::uintptr_t n, nout, nmutex = 0, nin = 0;
  void** addrs;
  if (d[0]) {
    n = reinterpret_cast<std::uintptr_t>(d[0]);
    nout = reinterpret_cast<std::uintptr_t>(d[1]);
    nin = n - nout;
    addrs = d + 2;
  } else {
    n = reinterpret_cast<std::uintptr_t>(d[1]);
    nout = reinterpret_cast<std::uintptr_t>(d[2]);
    nmutex = reinterpret_cast<std::uintptr_t>(d[3]);
    nin = reinterpret_cast<std::uintptr_t>(d[4]);
    addrs = d + 5;
  }
  for (std::uintptr_t i = 0; i < n; ++i) {
    if (i < nout + nmutex) {
      deps.push_back({addrs[i], true});  // out, inout, mutexinoutset (serialised: correct, less parallel)
    } else if (i < nout + nmutex + nin) {
      deps.push_back({addrs[i], false});
    } else {  // depobj: {address, kind}; kind 1 is `in`, others (out, inout, mutexinoutset, inoutset) serialise
      void** obj = static_cast<void**>(addrs[i]);
      deps.push_back({obj[0], reinterpret_cast<std::uintptr_t>(obj[1]) != 1});
    }
  }
  return deps;
}

// Under the queue mutex: link `t` after its predecessors among its siblings.
void register_deps_locked(Task* parent, Task* t, const std::vector<Dep>& deps) {
  auto add_pred = [&](Task* p) {
    if (!p || p == t || p->completed) return;
    p->successors.push_back(t);
    t->unresolved.fetch_add(1, std::memory_order_relaxed);
  };
  for (const Dep& d : deps) {
    DepRecord& rec = parent->deps[d.addr];
    if (d.out) {
      for (Task* r : rec.readers) add_pred(r);
      add_pred(rec.last_out);
      rec.last_out = t;
      rec.readers.clear();
    } else {
      add_pred(rec.last_out);
      rec.readers.push_back(t);
    }
    if (std::find(t->dep_addrs.begin(), t->dep_addrs.end(), d.addr) == t->dep_addrs.end()) t->dep_addrs.push_back(d.addr);
  }
}

}  // namespace

void ensure_task_queue(Team& team) {
  if (!team.tasks) team.tasks = std::make_unique<TaskQueue>();
}

int team_pending_tasks(Team& team) { return team.tasks ? team.tasks->pending.load(std::memory_order_acquire) : 0; }

bool run_one_task(Team& team, const Task* parent, const TaskGroup* group) {
  TaskQueue* q = team.tasks.get();
  if (!q || q->queued.load(std::memory_order_acquire) == 0) return false;
  Task* t = nullptr;
  {
    std::lock_guard<std::mutex> lock(q->m);
    auto it = q->ready.begin();
    if (parent || group)
      it = std::find_if(q->ready.begin(), q->ready.end(), [&](const Task* c) {
        return (parent && c->parent == parent) || (group && c->member_of == group);
      });
    if (it == q->ready.end()) return false;
    t = *it;
    q->ready.erase(it);
    q->queued.fetch_sub(1, std::memory_order_relaxed);
  }
  execute(this_thread(), t);
  return true;
}

void task_create(const TaskSpec& spec) {
  ThreadState& ts = this_thread();
  Team& team = *ts.team;
  Task* parent = ts.task;
  auto* t = new Task;
  t->icvs = parent->icvs;
  t->parent = parent;
  t->team = &team;
  t->member_of = parent->group;
  t->group = parent->group;
  t->final_task = parent->final_task || (spec.flags & kFlagFinal);
  t->priority = spec.priority;
  t->fn = spec.fn;
  const bool detach = (spec.flags & kFlagDetach) != 0;
  t->completion_left.store(detach ? 2 : 1, std::memory_order_relaxed);
  if (detach) *static_cast<void**>(spec.detach) = t;
  // A team of one runs tasks at once, except detached ones: their event may be
  // fulfilled by a task created later, so waiting for them here could hang.
  t->undeferred = !spec.if_clause || parent->final_task || (team.nthreads == 1 && !detach);
  if (t->undeferred && !spec.set_bounds) {
    if (spec.cpyfn) {
      const long align = std::max<long>(spec.arg_align, alignof(std::max_align_t));
      t->arg_storage = static_cast<char*>(std::aligned_alloc(align, (spec.arg_size + align - 1) / align * align));
      spec.cpyfn(t->arg_storage, spec.data);
      t->arg = t->arg_storage;
    } else {
      t->arg = spec.data;  // the creator waits: its data stays valid
    }
  } else {
    const long align = std::max<long>(spec.arg_align, alignof(std::max_align_t));
    const long size = std::max<long>(spec.arg_size, 1);
    t->arg_storage = static_cast<char*>(std::aligned_alloc(align, (size + align - 1) / align * align));
    if (spec.cpyfn)
      spec.cpyfn(t->arg_storage, spec.data);
    else if (spec.arg_size > 0)
      std::memcpy(t->arg_storage, spec.data, spec.arg_size);
    if (spec.set_bounds) {
      std::memcpy(t->arg_storage, &spec.lo, sizeof spec.lo);
      std::memcpy(t->arg_storage + sizeof spec.lo, &spec.hi, sizeof spec.hi);
    }
    t->arg = t->arg_storage;
  }
  // GCC puts the detach clause's firstprivate event handle first in the
  // task's data block, for the runtime to fill in the task's own copy.
  if (detach && t->arg) *static_cast<void**>(t->arg) = t;
  TaskQueue& q = *team.tasks;
  const bool has_deps = (spec.flags & kFlagDepend) && spec.depend;
  if (t->undeferred && !has_deps && !detach) {
    // Fast path (if(0), final, a team of one): run now, no bookkeeping that
    // other threads could observe; the task object stays on the heap because
    // its own children point to it.
    t->counted = false;
    execute(ts, t);
    return;
  }
  parent->refs.fetch_add(1, std::memory_order_relaxed);
  parent->children.fetch_add(1, std::memory_order_relaxed);
  if (t->member_of) t->member_of->pending.fetch_add(1, std::memory_order_relaxed);
  q.pending.fetch_add(1, std::memory_order_acq_rel);
  t->refs.fetch_add(1, std::memory_order_relaxed);  // held until the creator is done with it below
  {
    std::lock_guard<std::mutex> lock(q.m);
    if (has_deps) register_deps_locked(parent, t, parse_depend(spec.depend));
    if (!t->undeferred && t->unresolved.load(std::memory_order_relaxed) == 0) push_ready_locked(q, t);
  }
  if (t->undeferred) {
    help_until(team, parent, nullptr, [&] { return t->unresolved.load(std::memory_order_acquire) == 0; });
    execute(ts, t);
    if (detach) help_until(team, t, nullptr, [&] { return t->completion_left.load(std::memory_order_acquire) == 0; });
  } else {
    wake_team_waiters(team);
  }
  release(t);
}

void taskwait() {
  ThreadState& ts = this_thread();
  Task* me = ts.task;
  if (me->children.load(std::memory_order_acquire) == 0) return;
  help_until(*ts.team, me, nullptr, [&] { return me->children.load(std::memory_order_acquire) == 0; });
}

void taskwait_depend(void** depend) {
  TaskSpec spec;
  spec.fn = noop;
  spec.if_clause = false;
  spec.flags = kFlagDepend;
  spec.depend = depend;
  task_create(spec);
}

void taskyield() {
  ThreadState& ts = this_thread();
  run_one_task(*ts.team);
}

void taskgroup_start() {
  Task* me = this_thread().task;
  auto* g = new TaskGroup;
  g->outer = me->group;
  g->reductions = me->group ? me->group->reductions : nullptr;
  me->group = g;
}

void taskgroup_end() {
  ThreadState& ts = this_thread();
  Task* me = ts.task;
  TaskGroup* g = me->group;
  if (!g) return;
  help_until(*ts.team, nullptr, g, [&] { return g->pending.load(std::memory_order_acquire) == 0; });
  me->group = g->outer;
  delete g;
}

void fulfill_event(void* event) {
  auto* t = static_cast<Task*>(event);
  if (!t) fatal("omp_fulfill_event: null event handle");
  if (t->completion_left.fetch_sub(1, std::memory_order_acq_rel) == 1) finish(t);
}

bool in_final() { return this_thread().task->final_task; }

// Task reductions. The compiler's descriptor layout is described in
// tasks.hpp; the runtime's own lookup (original address -> item entry,
// including the enclosing groups' items) hangs off data[5] of the head array.
namespace {

using ReductionLookup = std::unordered_map<std::uintptr_t, std::uintptr_t*>;

constexpr std::size_t kRedHeader = 7, kRedItem = 3;

std::uintptr_t* red_item(std::uintptr_t* d, std::size_t j) { return d + kRedHeader + j * kRedItem; }

}  // namespace

void task_reduction_register(std::uintptr_t* data, std::uintptr_t* orig) {
  ThreadState& ts = this_thread();
  TaskGroup* g = ts.task->group;
  if (!g) fatal("task reduction registered outside a taskgroup (GOMP_taskgroup_reduction_register)");
  std::uintptr_t* old = g->reductions;
  const std::size_t nthreads = static_cast<std::size_t>(std::max(1, ts.team->nthreads));
  // Give every array of the chain its blocks of private copies, and chain the
  // last one to the enclosing registration.
  std::uintptr_t* d = data;
  for (;;) {
    if (orig) {  // a work share: the first thread allocated the blocks
      d[2] = orig[2];
      d[6] = orig[6];
      orig = reinterpret_cast<std::uintptr_t*>(orig[4]);
    } else {
      const std::size_t align = std::max<std::size_t>(d[2] ? d[2] : 1, alignof(std::max_align_t));
      std::size_t size = std::max<std::size_t>(d[1] * nthreads, 1);
      size = (size + align - 1) / align * align;
      void* blocks = std::aligned_alloc(align, size);
      if (!blocks) fatal("task reduction: cannot allocate %zu bytes of private copies", size);
      std::memset(blocks, 0, size);
      d[2] = reinterpret_cast<std::uintptr_t>(blocks);
      d[6] = d[2] + d[1] * nthreads;
    }
    d[5] = 0;
    if (d[4] == 0) {
      d[4] = reinterpret_cast<std::uintptr_t>(old);
      break;
    }
    d = reinterpret_cast<std::uintptr_t*>(d[4]);
  }
  auto* lookup = new ReductionLookup;
  if (old && old[5]) *lookup = *reinterpret_cast<ReductionLookup*>(old[5]);
  for (d = data;;) {
    for (std::size_t j = 0; j < d[0]; ++j) {
      std::uintptr_t* item = red_item(d, j);
      item[2] = reinterpret_cast<std::uintptr_t>(d);
      (*lookup)[item[0]] = item;
    }
    if (d[4] == reinterpret_cast<std::uintptr_t>(old)) break;
    d = reinterpret_cast<std::uintptr_t*>(d[4]);
  }
  data[5] = reinterpret_cast<std::uintptr_t>(lookup);
  g->reductions = data;
}

void task_reduction_unregister(std::uintptr_t* data, bool free_blocks) {
  if (!data) return;
  delete reinterpret_cast<ReductionLookup*>(data[5]);
  data[5] = 0;
  if (!free_blocks) return;
  // The arrays of this registration are chained up to the enclosing one,
  // whose head carries its own lookup (data[5] != 0).
  std::uintptr_t* d = data;
  do {
    std::free(reinterpret_cast<void*>(d[2]));
    d = reinterpret_cast<std::uintptr_t*>(d[4]);
  } while (d && !d[5]);
}

void task_reduction_remap(std::size_t cnt, std::size_t cntorig, void** ptrs) {
  ThreadState& ts = this_thread();
  TaskGroup* g = ts.task->group;
  std::uintptr_t* data = g ? g->reductions : nullptr;
  if (!data) fatal("in_reduction without an enclosing task_reduction (GOMP_task_reduction_remap)");
  const std::uintptr_t id = static_cast<std::uintptr_t>(ts.num);
  const auto* lookup = reinterpret_cast<const ReductionLookup*>(data[5]);
  for (std::size_t i = 0; i < cnt; ++i) {
    const std::uintptr_t addr = reinterpret_cast<std::uintptr_t>(ptrs[i]);
    if (lookup) {
      auto it = lookup->find(addr);
      if (it != lookup->end()) {
        std::uintptr_t* item = it->second;
        auto* d = reinterpret_cast<std::uintptr_t*>(item[2]);
        ptrs[i] = reinterpret_cast<void*>(d[2] + id * d[1] + item[1]);
        if (i < cntorig) ptrs[cnt + i] = reinterpret_cast<void*>(item[0]);
        continue;
      }
    }
    // Not an original item: an address inside some thread's private copies
    // (a task nested in a task that already remapped it).
    std::uintptr_t* d = data;
    while (d && !(addr >= d[2] && addr < d[6])) d = reinterpret_cast<std::uintptr_t*>(d[4]);
    if (!d) fatal("no task_reduction or task-modifier reduction matches the in_reduction item at %p", ptrs[i]);
    const std::uintptr_t off = (addr - d[2]) % d[1];
    ptrs[i] = reinterpret_cast<void*>(d[2] + id * d[1] + off);
    if (i < cntorig) {
      bool found = false;
      for (std::size_t j = 0; j < d[0]; ++j) {
        if (red_item(d, j)[1] == off) {
          ptrs[cnt + i] = reinterpret_cast<void*>(red_item(d, j)[0]);
          found = true;
          break;
        }
      }
      if (!found) fatal("no task_reduction item at offset %zu matches the in_reduction item at %p", static_cast<std::size_t>(off), ptrs[i]);
    }
  }
}

void workshare_task_reduction_end(bool cancelled) {
  ThreadState& ts = this_thread();
  TaskGroup* g = ts.task->group;
  std::uintptr_t* data = g ? g->reductions : nullptr;
  taskgroup_end();
  task_reduction_unregister(data, ts.num == 0);
  if (!cancelled) team_barrier();
}

}  // namespace canopy::omp
