// GOMP_task, taskwait, taskgroup, taskyield, taskloop: entry points over core/tasks.
#include <algorithm>

#include "../core/observe.hpp"
#include "../core/runtime.hpp"
#include "../core/tasks.hpp"
#include "abi.hpp"

using namespace canopy::omp;

CANOPY_GOMP void GOMP_task(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
                           bool if_clause, unsigned flags, void** depend, int priority, void* detach) {
  TaskSpec s;
  s.fn = fn;
  s.data = data;
  s.cpyfn = cpyfn;
  s.arg_size = arg_size;
  s.arg_align = arg_align;
  s.if_clause = if_clause;
  s.flags = flags;
  s.depend = depend;
  s.priority = (flags & 16) ? std::min(priority, runtime().settings.max_task_priority) : 0;
  s.detach = detach;
  s.codeptr = __builtin_return_address(0);
  task_create(s);
}

CANOPY_GOMP void GOMP_taskwait() { taskwait(); }
CANOPY_GOMP void GOMP_taskwait_depend(void** depend) { taskwait_depend(depend); }
CANOPY_GOMP void GOMP_taskyield() { taskyield(); }
CANOPY_GOMP void GOMP_taskgroup_start() { taskgroup_start(); }
CANOPY_GOMP void GOMP_taskgroup_end() { taskgroup_end(); }

// Task reductions (descriptor layout in core/tasks.hpp).
CANOPY_GOMP void GOMP_taskgroup_reduction_register(uintptr_t* data) { task_reduction_register(data); }
CANOPY_GOMP void GOMP_taskgroup_reduction_unregister(uintptr_t* data) { task_reduction_unregister(data); }
CANOPY_GOMP void GOMP_task_reduction_remap(size_t cnt, size_t cntorig, void** ptrs) {
  task_reduction_remap(cnt, cntorig, ptrs);
}
CANOPY_GOMP void GOMP_workshare_task_reduction_unregister(bool cancelled) { workshare_task_reduction_end(cancelled); }

// Taskloop flags (gomp-constants.h): UP 1<<8, GRAINSIZE 1<<9, IF 1<<10, NOGROUP 1<<11, REDUCTION 1<<12, STRICT 1<<14.
namespace {
constexpr unsigned kTlUp = 1u << 8, kTlGrainsize = 1u << 9, kTlIf = 1u << 10, kTlNogroup = 1u << 11,
                   kTlReduction = 1u << 12, kTlStrict = 1u << 14;

template <class T>
void taskloop(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align, unsigned flags,
              unsigned long num_tasks, int priority, T start, T end, T step, bool up) {
  // With a reduction clause, the data block starts {T lo, T hi, uintptr_t* descriptor}.
  struct DataHead {
    T lo, hi;
    std::uintptr_t* reductions;
  };
  const bool reduce = (flags & (kTlReduction | kTlNogroup)) == kTlReduction;
  std::uint64_t count;
  if (up)
    count = end > start ? (static_cast<std::uint64_t>(end) - start - 1) / static_cast<std::uint64_t>(step) + 1 : 0;
  else
    count = start > end ? (static_cast<std::uint64_t>(start) - end - 1) / (0 - static_cast<std::uint64_t>(step)) + 1 : 0;
  ThreadState& ts = this_thread();
  const bool obs = observed(ts);
  if (obs) [[unlikely]] obs_work(ts, ompt_work_taskloop, ompt_scope_begin, count);
  if (count == 0) {
    if (reduce) static_cast<DataHead*>(data)->reductions[2] = 0;  // tells the caller nothing was registered
    if (obs) [[unlikely]] obs_work(ts, ompt_work_taskloop, ompt_scope_end, count);
    return;
  }
  std::uint64_t ntasks;
  if (flags & kTlGrainsize) {
    std::uint64_t grain = num_tasks ? num_tasks : 1;
    ntasks = std::max<std::uint64_t>(1, count / grain);
  } else {
    ntasks = num_tasks ? num_tasks : static_cast<std::uint64_t>(std::max(1, ts.team->nthreads));
  }
  ntasks = std::min(ntasks, count);
  if (!(flags & kTlNogroup)) taskgroup_start();
  if (reduce) task_reduction_register(static_cast<DataHead*>(data)->reductions);
  std::uint64_t q = count / ntasks, r = count % ntasks;
  if ((flags & kTlGrainsize) && (flags & kTlStrict)) {  // grainsize(strict: g): exactly g per task, the last one less
    q = num_tasks ? num_tasks : 1;
    ntasks = (count + q - 1) / q;
    r = 0;
  }
  std::uint64_t first = 0;
  for (std::uint64_t k = 0; k < ntasks; ++k) {
    std::uint64_t n = std::min(q + (k < r ? 1 : 0), count - first);
    TaskSpec s;
    s.fn = fn;
    s.data = data;
    s.cpyfn = cpyfn;
    s.arg_size = arg_size;
    s.arg_align = arg_align;
    s.if_clause = (flags & kTlIf) != 0;
    s.flags = flags & 2;  // final
    s.priority = (flags & 16) ? priority : 0;
    s.set_bounds = true;
    s.lo = static_cast<std::uint64_t>(start) + first * static_cast<std::uint64_t>(step);
    s.hi = static_cast<std::uint64_t>(start) + (first + n) * static_cast<std::uint64_t>(step);
    task_create(s);
    first += n;
  }
  if (obs) [[unlikely]] obs_work(ts, ompt_work_taskloop, ompt_scope_end, count);
  if (!(flags & kTlNogroup)) taskgroup_end();
}
}  // namespace

CANOPY_GOMP void GOMP_taskloop(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size, long arg_align,
                               unsigned flags, unsigned long num_tasks, int priority, long start, long end, long step) {
  taskloop<long>(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step, step > 0);
}
CANOPY_GOMP void GOMP_taskloop_ull(void (*fn)(void*), void* data, void (*cpyfn)(void*, void*), long arg_size,
                                   long arg_align, unsigned flags, unsigned long num_tasks, int priority,
                                   unsigned long long start, unsigned long long end, unsigned long long step) {
  taskloop<unsigned long long>(fn, data, cpyfn, arg_size, arg_align, flags, num_tasks, priority, start, end, step,
                               (flags & kTlUp) != 0);
}
