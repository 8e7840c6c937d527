// Cancellation (see cancel.hpp).
#include "cancel.hpp"

#include "runtime.hpp"
#include "tasks.hpp"

namespace canopy::omp {

bool cancellation_point(int which) {
  if (!runtime().settings.cancellation) return false;
  ThreadState& ts = this_thread();
  if (ts.team->cancel_parallel.load(std::memory_order_acquire)) return true;
  if (which & (kCancelLoop | kCancelSections))
    return ts.loop.ws ? ts.loop.ws->cancelled.load(std::memory_order_acquire)
                      : ts.team->cancel_static_loop.load(std::memory_order_acquire);
  if (which & kCancelTaskgroup) {
    TaskGroup* g = ts.task->member_of ? ts.task->member_of : ts.task->group;
    return g && g->is_cancelled();
  }
  return false;
}

bool cancel(int which) {
  if (!runtime().settings.cancellation) return false;
  ThreadState& ts = this_thread();
  if (which & kCancelParallel) {
    ts.team->cancel_parallel.store(true, std::memory_order_release);
    wake_team_waiters(*ts.team);
  } else if (which & (kCancelLoop | kCancelSections)) {
    if (ts.loop.ws) ts.loop.ws->cancelled.store(true, std::memory_order_release);
    else ts.team->cancel_static_loop.store(true, std::memory_order_release);
  } else if (which & kCancelTaskgroup) {
    TaskGroup* g = ts.task->group ? ts.task->group : ts.task->member_of;
    if (g && g->workshare && g->outer) g = g->outer;  // a work share's reduction group: the enclosing taskgroup
    if (g) g->cancelled.store(true, std::memory_order_release);
  }
  return true;
}

}  // namespace canopy::omp
