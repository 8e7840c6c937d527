// GOMP_parallel* and GOMP_teams*: fork/join entry points.
#include "../core/runtime.hpp"
#include "../core/tasks.hpp"
#include "abi.hpp"

using namespace canopy::omp;

CANOPY_GOMP void GOMP_parallel(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
  fork_join(fn, data, num_threads, flags & 7, nullptr, __builtin_return_address(0));
}
CANOPY_GOMP void GOMP_parallel_start(void (*fn)(void*), void* data, unsigned num_threads) {
  fork_start(fn, data, num_threads, 0, nullptr, __builtin_return_address(0));
}
CANOPY_GOMP void GOMP_parallel_end() { join_end(); }

// parallel with reduction(task, ...): the compiler's descriptor is the first
// word of `data`. Every implicit task of the team runs inside one taskgroup
// that carries the registration (private copies for each thread of the
// team); the compiler combines them after the region, so the team size is
// returned.
namespace {
struct ParallelReductions {
  void (*fn)(void*);
  void* data;
  TaskGroup group;
  int nthreads = 1;
};

void parallel_reductions_body(void* arg) {
  auto* pr = static_cast<ParallelReductions*>(arg);
  ThreadState& ts = this_thread();
  Task* me = ts.task;
  TaskGroup* saved = me->group;
  if (ts.num == 0) {  // the team's size is known only now: register once, then let the team in
    pr->nthreads = ts.team->nthreads;
    me->group = &pr->group;
    task_reduction_register(*static_cast<std::uintptr_t**>(pr->data));
  }
  team_barrier();
  me->group = &pr->group;
  pr->fn(pr->data);
  me->group = saved;
}
}  // namespace

CANOPY_GOMP unsigned GOMP_parallel_reductions(void (*fn)(void*), void* data, unsigned num_threads, unsigned flags) {
  ParallelReductions pr{fn, data, {}, 1};
  fork_join(parallel_reductions_body, &pr, num_threads, flags & 7);
  return static_cast<unsigned>(pr.nthreads);
}

// Host teams: a league of `num_teams` initial threads would need their own
// contention groups; this cut runs the teams one after another on the
// caller. The team number lives in the current Team (runtime.hpp), so the
// threads of a parallel region inside a team see it too.
int canopy_omp_team_num() {
  Team* t = this_thread().team;
  return t ? t->team_num : 0;
}
int canopy_omp_num_teams() {
  Team* t = this_thread().team;
  return t ? t->num_teams : 1;
}

CANOPY_GOMP void GOMP_teams_reg(void (*fn)(void*), void* data, unsigned num_teams, unsigned thread_limit, unsigned flags) {
  (void)flags;
  host_teams(fn, data, num_teams, thread_limit);
}

// Teams inside a target region on the host (the fallback): GCC loops while
// this returns true, once per team.
CANOPY_GOMP bool GOMP_teams4(unsigned low, unsigned high, unsigned thread_limit, bool first) {
  (void)high;
  if (first) {
    if (thread_limit) current_icvs().thread_limit = static_cast<int>(thread_limit);
    Team& league = *this_thread().team;
    league.num_teams = low ? static_cast<int>(low) : 1;
    league.team_num = 0;
    return true;
  }
  Team& league = *this_thread().team;
  if (++league.team_num < league.num_teams) return true;
  league.team_num = 0;
  league.num_teams = 1;
  return false;
}

CANOPY_GOMP void GOMP_teams(unsigned num_teams, unsigned thread_limit) {
  (void)num_teams;
  if (thread_limit) current_icvs().thread_limit = static_cast<int>(thread_limit);
}
