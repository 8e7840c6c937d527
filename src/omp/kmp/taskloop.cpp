// taskloop in the libomp ABI: the compiler allocates one pattern task whose
// private variables hold the loop's bounds (lb, ub point into it); the
// runtime makes the tasks as copies of it, each with its own inclusive
// bounds (task_dup, when the compiler gives one, copies firstprivate
// variables and tells the last task it is last), then frees the pattern.
#include <algorithm>
#include <cstring>

#include "../core/observe.hpp"
#include "../core/runtime.hpp"
#include "task.hpp"

using namespace canopy::omp;
using namespace canopy::omp::kmp;

namespace {

using TaskDup = void (*)(kmp_task_t* dst, kmp_task_t* src, kmp_int32 lastpriv);

void taskloop(kmp_task_t* pattern, int if_val, kmp_uint64* lb, kmp_uint64* ub, kmp_int64 st, int nogroup, int sched,
              kmp_uint64 grainsize, int modifier, void* task_dup) {
  TaskHead* ph = head_of(pattern);
  const kmp_uint64 lower = *lb, upper = *ub;
  if (st == 0) fatal("taskloop with increment 0");
  kmp_uint64 tc;
  if (st > 0) tc = upper < lower ? 0 : (upper - lower) / static_cast<kmp_uint64>(st) + 1;
  else tc = lower < upper ? 0 : (lower - upper) / static_cast<kmp_uint64>(-st) + 1;
  if (!nogroup) taskgroup_start();
  ThreadState& ts = this_thread();
  const bool obs = observed(ts);
  if (obs) [[unlikely]] obs_work(ts, ompt_work_taskloop, ompt_scope_begin, tc);
  if (tc > 0) {
    // How many tasks: num_tasks(n) (sched 2), grainsize(g) (sched 1: each
    // task g to 2g-1 iterations, or exactly g with the strict modifier),
    // else ten per thread, as libomp.
    kmp_uint64 ntasks, per, extra;
    if (sched == 1 && modifier) {
      per = std::max<kmp_uint64>(grainsize, 1);
      ntasks = (tc + per - 1) / per;
      extra = 0;
    } else {
      if (sched == 2) ntasks = std::max<kmp_uint64>(grainsize, 1);
      else if (sched == 1) ntasks = std::max<kmp_uint64>(tc / std::max<kmp_uint64>(grainsize, 1), 1);
      else ntasks = static_cast<kmp_uint64>(ts.team->nthreads) * 10;
      ntasks = std::min(ntasks, tc);
      per = tc / ntasks;
      extra = tc % ntasks;
    }
    const std::size_t lb_off = reinterpret_cast<char*>(lb) - reinterpret_cast<char*>(pattern);
    const std::size_t ub_off = reinterpret_cast<char*>(ub) - reinterpret_cast<char*>(pattern);
    kmp_uint64 first = 0;
    for (kmp_uint64 k = 0; k < ntasks && first < tc; ++k) {
      const kmp_uint64 n = std::min(per + (k < extra ? 1 : 0), tc - first);
      kmp_task_t* t = alloc_task(ph->flags, ph->sizeof_task, ph->sizeof_shareds, pattern->routine);
      // The compiler's part of the task (its privates and, after them, its shareds block) as the pattern's.
      void* shareds = t->shareds;
      std::memcpy(t, pattern, ph->sizeof_task);
      t->shareds = shareds;
      if (ph->sizeof_shareds) std::memcpy(shareds, pattern->shareds, ph->sizeof_shareds);
      const bool last = first + n == tc;
      if (task_dup) reinterpret_cast<TaskDup>(task_dup)(t, pattern, last ? 1 : 0);
      const kmp_uint64 tlb = lower + first * static_cast<kmp_uint64>(st);
      const kmp_uint64 tub = tlb + (n - 1) * static_cast<kmp_uint64>(st);
      std::memcpy(reinterpret_cast<char*>(t) + lb_off, &tlb, sizeof tlb);
      std::memcpy(reinterpret_cast<char*>(t) + ub_off, &tub, sizeof tub);
      head_of(t)->core->affinity_node = ph->core->affinity_node;  // the pattern's affinity clause, for each chunk
      head_of(t)->core->affinity_thread = ph->core->affinity_thread;
      submit(t, nullptr, if_val != 0);
      first += n;
    }
  }
  task_discard(ph->core);  // the pattern never runs
  if (obs) [[unlikely]] obs_work(ts, ompt_work_taskloop, ompt_scope_end, tc);
  if (!nogroup) taskgroup_end();
}

}  // namespace

CANOPY_KMP void __kmpc_taskloop(ident_t*, kmp_int32, kmp_task_t* task, int if_val, kmp_uint64* lb, kmp_uint64* ub,
                                kmp_int64 st, int nogroup, int sched, kmp_uint64 grainsize, void* task_dup) {
  taskloop(task, if_val, lb, ub, st, nogroup, sched, grainsize, 0, task_dup);
}
CANOPY_KMP void __kmpc_taskloop_5(ident_t*, kmp_int32, kmp_task_t* task, int if_val, kmp_uint64* lb, kmp_uint64* ub,
                                  kmp_int64 st, int nogroup, int sched, kmp_uint64 grainsize, int modifier,
                                  void* task_dup) {
  taskloop(task, if_val, lb, ub, st, nogroup, sched, grainsize, modifier, task_dup);
}
