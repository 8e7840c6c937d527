// GOMP_loop_* (long iteration variables), GOMP_parallel_loop_*, doacross
// and GOMP_loop_end*: conversion between (start, end, incr) and the core's
// iteration numbers [0, count).
#include <cstdarg>
#include <vector>

#include "../core/runtime.hpp"
#include "../core/workshare.hpp"
#include "abi.hpp"

using namespace canopy::omp;

namespace {

std::uint64_t count_of(long start, long end, long incr) {
  if (incr > 0) return end > start ? (static_cast<unsigned long>(end) - start - 1) / incr + 1 : 0;
  return start > end ? (static_cast<unsigned long>(start) - end - 1) / (0UL - static_cast<unsigned long>(incr)) + 1 : 0;
}

bool next_long(long* istart, long* iend) {
  std::uint64_t lo, hi;
  if (!loop_next(lo, hi)) return false;
  const LoopCursor& c = this_thread().loop;
  *istart = static_cast<long>(c.base + lo * c.step);
  *iend = static_cast<long>(c.base + hi * c.step);
  return true;
}

LoopSpec spec_of(long start, long end, long incr, int kind, long chunk, bool ordered) {
  LoopSpec s;
  s.count = count_of(start, end, incr);
  if (kind == 0) {  // runtime
    std::uint64_t c;
    runtime_schedule(kind, c);
    chunk = static_cast<long>(c);
  }
  s.kind = kind == 4 ? 1 : kind;
  s.chunk = chunk > 0 ? static_cast<std::uint64_t>(chunk) : 0;
  s.ordered = ordered;
  s.base = static_cast<std::uint64_t>(start);
  s.step = static_cast<std::uint64_t>(incr);
  return s;
}

bool start_long(long start, long end, long incr, int kind, long chunk, bool ordered, long* istart, long* iend) {
  loop_enter(spec_of(start, end, incr, kind, chunk, ordered));
  return next_long(istart, iend);
}

void parallel_loop(void (*fn)(void*), void* data, unsigned n, long start, long end, long incr, int kind, long chunk,
                   unsigned flags) {
  LoopSpec spec = spec_of(start, end, incr, kind, chunk, false);
  fork_join(fn, data, n, flags & 7, &spec);
}

int sched_kind(long sched) { return static_cast<int>(sched & 0x7fffffffL); }

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

namespace {
bool loop_start_generic(long s, long e, long i, long sched, long chunk, long* is, long* ie, uintptr_t* reductions,
                        void** mem, bool ordered) {
  LoopSpec spec = spec_of(s, e, i, sched_kind(sched), chunk, ordered);
  spec.reductions = reductions;
  if (mem) spec.mem_size = reinterpret_cast<uintptr_t>(*mem);
  loop_enter(spec);
  if (mem) *mem = loop_mem();
  if (!is) return false;
  return next_long(is, ie);
}
}  // namespace

CANOPY_GOMP bool GOMP_loop_start(long s, long e, long i, long sched, long chunk, long* is, long* ie,
                                 uintptr_t* reductions, void** mem) {
  return loop_start_generic(s, e, i, sched, chunk, is, ie, reductions, mem, false);
}
CANOPY_GOMP bool GOMP_loop_ordered_start(long s, long e, long i, long sched, long chunk, long* is, long* ie,
                                         uintptr_t* reductions, void** mem) {
  return loop_start_generic(s, e, i, sched, chunk, is, ie, reductions, mem, true);
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
thread_local std::vector<std::uint64_t> tls_dims;
bool doacross_start(unsigned ncounts, long* counts, int kind, long chunk, long* is, long* ie,
                    uintptr_t* reductions = nullptr, void** mem = nullptr) {
  tls_dims.assign(counts, counts + ncounts);
  for (auto& d : tls_dims)
    if (static_cast<long>(d) < 0) d = 0;
  LoopSpec spec = spec_of(0, static_cast<long>(tls_dims[0]), 1, kind, chunk, false);
  spec.ndims = ncounts;
  spec.dims = tls_dims.data();
  spec.reductions = reductions;
  if (mem) spec.mem_size = reinterpret_cast<uintptr_t>(*mem);
  loop_enter(spec);
  if (mem) *mem = loop_mem();
  if (!is) return false;
  return next_long(is, ie);
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

CANOPY_GOMP void GOMP_doacross_post(long* counts) {
  WorkShare* w = this_thread().loop.ws;
  if (!w) return;
  std::vector<std::uint64_t> idx(counts, counts + w->dims.size());
  doacross_post(idx.data());
}
CANOPY_GOMP void GOMP_doacross_wait(long first, ...) {
  WorkShare* w = this_thread().loop.ws;
  if (!w || w->dims.empty()) return;
  std::vector<std::uint64_t> idx(w->dims.size());
  idx[0] = static_cast<std::uint64_t>(first);
  va_list ap;
  va_start(ap, first);
  for (std::size_t d = 1; d < idx.size(); ++d) idx[d] = static_cast<std::uint64_t>(va_arg(ap, long));
  va_end(ap);
  doacross_wait(idx.data());
}
