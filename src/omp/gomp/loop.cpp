// GOMP_loop_* (long iteration variables), GOMP_parallel_loop_*, doacross
// and GOMP_loop_end*: conversion between (start, end, incr) and the core's
// iteration numbers [0, count).
#include <cstdarg>
#include <vector>

#include "abi.hpp"
#include "loop_common.hpp"

using namespace canopy::omp;

namespace {

std::uint64_t count_of(long start, long end, long incr) {
  if (incr > 0) return end > start ? (static_cast<unsigned long>(end) - start - 1) / incr + 1 : 0;
  return start > end ? (static_cast<unsigned long>(start) - end - 1) / (0UL - static_cast<unsigned long>(incr)) + 1 : 0;
}

LoopSpec spec_of(long start, long end, long incr, int kind, long chunk, bool ordered) {
  return loop_spec(count_of(start, end, incr), kind, chunk > 0 ? static_cast<std::uint64_t>(chunk) : 0, ordered,
                   static_cast<std::uint64_t>(start), static_cast<std::uint64_t>(incr));
}

bool next_long(long* istart, long* iend) { return next_chunk(istart, iend); }

bool start_long(long start, long end, long incr, int kind, long chunk, bool ordered, long* istart, long* iend,
                uintptr_t* reductions = nullptr, void** mem = nullptr) {
  loop_begin(spec_of(start, end, incr, kind, chunk, ordered), reductions, mem);
  return istart && next_long(istart, iend);
}

void parallel_loop(void (*fn)(void*), void* data, unsigned n, long start, long end, long incr, int kind, long chunk,
                   unsigned flags) {
  LoopSpec spec = spec_of(start, end, incr, kind, chunk, false);
  fork_join(fn, data, n, flags & 7, &spec);
}

}  // namespace

#define LOOP_START(name, kind, ordered)                                                                          \
  CANOPY_GOMP bool GOMP_loop_##name##_start(long s, long e, long i, long c, long* is, long* ie) {                \
    return start_long(s, e, i, kind, c, ordered, is, ie);                                                        \
  }
#define LOOP_RT_START(name, ordered)                                                                             \
  CANOPY_GOMP bool GOMP_loop_##name##_start(long s, long e, long i, long* is, long* ie) {                        \
    return start_long(s, e, i, 0, 0, ordered, is, ie);                                                           \
  }
#define LOOP_NEXT(name) \
  CANOPY_GOMP bool GOMP_loop_##name##_next(long* is, long* ie) { return next_long(is, ie); }

LOOP_START(static, 1, false)
LOOP_START(dynamic, 2, false)
LOOP_START(guided, 3, false)
LOOP_START(nonmonotonic_dynamic, 2, false)
LOOP_START(nonmonotonic_guided, 3, false)
LOOP_RT_START(runtime, false)
LOOP_RT_START(nonmonotonic_runtime, false)
LOOP_RT_START(maybe_nonmonotonic_runtime, false)
LOOP_START(ordered_static, 1, true)
LOOP_START(ordered_dynamic, 2, true)
LOOP_START(ordered_guided, 3, true)
LOOP_RT_START(ordered_runtime, true)
LOOP_NEXT(static)
LOOP_NEXT(dynamic)
LOOP_NEXT(guided)
LOOP_NEXT(nonmonotonic_dynamic)
LOOP_NEXT(nonmonotonic_guided)
LOOP_NEXT(runtime)
LOOP_NEXT(nonmonotonic_runtime)
LOOP_NEXT(maybe_nonmonotonic_runtime)
LOOP_NEXT(ordered_static)
LOOP_NEXT(ordered_dynamic)
LOOP_NEXT(ordered_guided)
LOOP_NEXT(ordered_runtime)

CANOPY_GOMP bool GOMP_loop_start(long s, long e, long i, long sched, long chunk, long* is, long* ie,
                                 uintptr_t* reductions, void** mem) {
  return start_long(s, e, i, sched_kind(sched), chunk, false, is, ie, reductions, mem);
}
CANOPY_GOMP bool GOMP_loop_ordered_start(long s, long e, long i, long sched, long chunk, long* is, long* ie,
                                         uintptr_t* reductions, void** mem) {
  return start_long(s, e, i, sched_kind(sched), chunk, true, is, ie, reductions, mem);
}

CANOPY_GOMP void GOMP_loop_end() {
  loop_leave();
  team_barrier();
}
CANOPY_GOMP void GOMP_loop_end_nowait() { loop_leave(); }
CANOPY_GOMP bool GOMP_loop_end_cancel() {
  bool cancelled = team_barrier_cancellable();
  ThreadState& ts = this_thread();
  if (ts.loop.ws && ts.loop.ws->cancelled.load()) cancelled = true;
  loop_leave();
  return cancelled;
}

// Parallel loops.
#define PAR_LOOP(name, kind)                                                                                  \
  CANOPY_GOMP void GOMP_parallel_loop_##name(void (*fn)(void*), void* data, unsigned n, long s, long e, long i, \
                                             long c, unsigned flags) {                                        \
    parallel_loop(fn, data, n, s, e, i, kind, c, flags);                                                      \
  }
#define PAR_LOOP_RT(name)                                                                                     \
  CANOPY_GOMP void GOMP_parallel_loop_##name(void (*fn)(void*), void* data, unsigned n, long s, long e, long i, \
                                             unsigned flags) {                                                \
    parallel_loop(fn, data, n, s, e, i, 0, 0, flags);                                                         \
  }
PAR_LOOP(static, 1)
PAR_LOOP(dynamic, 2)
PAR_LOOP(guided, 3)
PAR_LOOP(nonmonotonic_dynamic, 2)
PAR_LOOP(nonmonotonic_guided, 3)
PAR_LOOP_RT(runtime)
PAR_LOOP_RT(nonmonotonic_runtime)
PAR_LOOP_RT(maybe_nonmonotonic_runtime)

// The GOMP_1.0 split forms: the caller runs fn and calls GOMP_parallel_end.
namespace {
void parallel_loop_start(void (*fn)(void*), void* data, unsigned n, long s, long e, long i, int kind, long c) {
  LoopSpec spec = spec_of(s, e, i, kind, c, false);
  fork_start(fn, data, n, 0, &spec);
}
}  // namespace
CANOPY_GOMP void GOMP_parallel_loop_static_start(void (*fn)(void*), void* d, unsigned n, long s, long e, long i, long c) {
  parallel_loop_start(fn, d, n, s, e, i, 1, c);
}
CANOPY_GOMP void GOMP_parallel_loop_dynamic_start(void (*fn)(void*), void* d, unsigned n, long s, long e, long i, long c) {
  parallel_loop_start(fn, d, n, s, e, i, 2, c);
}
CANOPY_GOMP void GOMP_parallel_loop_guided_start(void (*fn)(void*), void* d, unsigned n, long s, long e, long i, long c) {
  parallel_loop_start(fn, d, n, s, e, i, 3, c);
}
CANOPY_GOMP void GOMP_parallel_loop_runtime_start(void (*fn)(void*), void* d, unsigned n, long s, long e, long i) {
  parallel_loop_start(fn, d, n, s, e, i, 0, 0);
}

// Doacross loops: the work share runs over counts[0] iterations, numbered from 0.
namespace {
bool doacross_start(unsigned ncounts, long* counts, int kind, long chunk, long* is, long* ie,
                    uintptr_t* reductions = nullptr, void** mem = nullptr) {
  std::vector<std::uint64_t> dims(ncounts);
  for (unsigned d = 0; d < ncounts; ++d) dims[d] = counts[d] > 0 ? static_cast<std::uint64_t>(counts[d]) : 0;
  doacross_begin(dims, kind, chunk > 0 ? static_cast<std::uint64_t>(chunk) : 0, reductions, mem);
  return is && next_long(is, ie);
}
}  // namespace
CANOPY_GOMP bool GOMP_loop_doacross_static_start(unsigned n, long* counts, long c, long* is, long* ie) {
  return doacross_start(n, counts, 1, c, is, ie);
}
CANOPY_GOMP bool GOMP_loop_doacross_dynamic_start(unsigned n, long* counts, long c, long* is, long* ie) {
  return doacross_start(n, counts, 2, c, is, ie);
}
CANOPY_GOMP bool GOMP_loop_doacross_guided_start(unsigned n, long* counts, long c, long* is, long* ie) {
  return doacross_start(n, counts, 3, c, is, ie);
}
CANOPY_GOMP bool GOMP_loop_doacross_runtime_start(unsigned n, long* counts, long* is, long* ie) {
  return doacross_start(n, counts, 0, 0, is, ie);
}
CANOPY_GOMP bool GOMP_loop_doacross_start(unsigned n, long* counts, long sched, long c, long* is, long* ie,
                                          uintptr_t* reductions, void** mem) {
  return doacross_start(n, counts, sched_kind(sched), c, is, ie, reductions, mem);
}

CANOPY_GOMP void GOMP_doacross_post(long* counts) { doacross_post_counts(counts); }
CANOPY_GOMP void GOMP_doacross_wait(long first, ...) {
  va_list rest;
  va_start(rest, first);
  doacross_wait_counts(first, rest);
  va_end(rest);
}
