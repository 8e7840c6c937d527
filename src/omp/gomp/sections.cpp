// GOMP_sections* and GOMP_parallel_sections*: sections are a dynamic loop
// with chunk 1 over [0, count); the ABI numbers them from 1 (0: none left).
#include "../core/runtime.hpp"
#include "../core/workshare.hpp"
#include "abi.hpp"

using namespace canopy::omp;

namespace {
LoopSpec sections_spec(unsigned count) {
  LoopSpec s;
  s.count = count;
  s.kind = 2;
  s.chunk = 1;
  s.work = ompt_work_sections;
  return s;
}
unsigned next_section() {
  std::uint64_t lo, hi;
  return loop_next(lo, hi) ? static_cast<unsigned>(lo + 1) : 0;
}
}  // namespace

CANOPY_GOMP unsigned GOMP_sections_start(unsigned count) {
  loop_enter(sections_spec(count));
  return next_section();
}
CANOPY_GOMP unsigned GOMP_sections2_start(unsigned count, uintptr_t* reductions, void** mem) {
  LoopSpec s = sections_spec(count);
  s.reductions = reductions;
  if (mem) s.mem_size = reinterpret_cast<uintptr_t>(*mem);
  loop_enter(s);
  if (mem) *mem = loop_mem();
  return next_section();
}
CANOPY_GOMP unsigned GOMP_sections_next() { return next_section(); }
CANOPY_GOMP void GOMP_sections_end() {
  loop_leave();
  team_barrier();
}
CANOPY_GOMP void GOMP_sections_end_nowait() { loop_leave(); }
CANOPY_GOMP bool GOMP_sections_end_cancel() {
  bool cancelled = team_barrier_cancellable();
  ThreadState& ts = this_thread();
  if (ts.loop.ws && ts.loop.ws->cancelled.load()) cancelled = true;
  loop_leave();
  return cancelled;
}

CANOPY_GOMP void GOMP_parallel_sections(void (*fn)(void*), void* data, unsigned n, unsigned count, unsigned flags) {
  LoopSpec s = sections_spec(count);
  fork_join(fn, data, n, flags & 7, &s);
}
CANOPY_GOMP void GOMP_parallel_sections_start(void (*fn)(void*), void* data, unsigned n, unsigned count) {
  LoopSpec s = sections_spec(count);
  fork_start(fn, data, n, 0, &s);
}
