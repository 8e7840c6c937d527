// What the GOMP_loop_* (long) and GOMP_loop_ull_* (unsigned long long)
// entry points share: the work share of a loop whose iteration i is
// base + i * step, its chunks in the ABI's (start, end) form, and doacross
// loops. loop.cpp and loop_ull.cpp only convert their ABI's arguments.
#pragma once
#include <cstdarg>
#include <cstdint>
#include <vector>

#include "../core/runtime.hpp"
#include "../core/small_vec.hpp"
#include "../core/workshare.hpp"

namespace canopy::omp {

// The schedule argument of GOMP_loop_start and the like: the kind without
// GCC's monotonic flag bit (0 runtime, 1 static, 2 dynamic, 3 guided, 4 auto).
inline int sched_kind(long sched) { return static_cast<int>(sched & 0x7fffffffL); }

// A loop of `count` iterations; schedule(runtime) is resolved from
// run-sched-var, auto is static; chunk 0 means the kind's default.
LoopSpec loop_spec(std::uint64_t count, int kind, std::uint64_t chunk, bool ordered, std::uint64_t base = 0,
                   std::uint64_t step = 1);

// Enters the work share. With `mem`, *mem is GOMP_loop_start's memory size on
// entry and the work share's memory on return.
void loop_begin(LoopSpec spec, std::uintptr_t* reductions = nullptr, void** mem = nullptr);

// The calling thread's next chunk as the ABI's iteration values.
template <class T>
bool next_chunk(T* istart, T* iend) {
  std::uint64_t lo, hi;
  if (!loop_next(lo, hi)) return false;
  const LoopCursor& c = this_thread().loop;
  *istart = static_cast<T>(c.base + lo * c.step);
  *iend = static_cast<T>(c.base + hi * c.step);
  return true;
}

// A doacross loop over dims[0] iterations, numbered from 0 (the iteration
// counts of every dimension are kept for the posts and waits).
void doacross_begin(const std::vector<std::uint64_t>& dims, int kind, std::uint64_t chunk,
                    std::uintptr_t* reductions = nullptr, void** mem = nullptr);

// GOMP_doacross_post / GOMP_doacross_wait in the ABI's index type.
template <class T>
void doacross_post_counts(const T* counts) {
  WorkShare* w = this_thread().loop.ws;
  if (!w) return;
  // On the stack for up to 8 dimensions: a vector here was a malloc and a
  // free per post (a third of a one-thread doacross loop's time).
  SmallVec<std::uint64_t, 8> idx;
  for (std::size_t d = 0; d < w->dims.size(); ++d) idx.push_back(static_cast<std::uint64_t>(counts[d]));
  doacross_post(idx.data());
}

template <class T>
void doacross_wait_counts(T first, va_list rest) {
  WorkShare* w = this_thread().loop.ws;
  if (!w || w->dims.empty()) return;
  SmallVec<std::uint64_t, 8> idx;  // as in doacross_post_counts
  idx.push_back(static_cast<std::uint64_t>(first));
  for (std::size_t d = 1; d < w->dims.size(); ++d) idx.push_back(static_cast<std::uint64_t>(va_arg(rest, T)));
  doacross_wait(idx.data());
}

}  // namespace canopy::omp
