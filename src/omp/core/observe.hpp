// What canopy's OpenMP runtime shows to observers: OpenMP construct events
// in canopy's traces (CANOPY_TRACE, docs/trace.md). Every event site tests
// the calling thread's one observe word (ThreadState::observe) and takes an
// out-of-line path when it is set; with nothing observing, that test is the
// whole cost.
#pragma once
#include <cstdint>

#include "runtime.hpp"

namespace canopy::omp {

inline bool observed(const ThreadState& ts) noexcept {
  return ts.observe.word.load(std::memory_order_relaxed) != 0;
}

// At the runtime's start (make_runtime): the trace group of the OpenMP
// threads (reads CANOPY_TRACE*; a bad value stops the program).
void observe_init();
// On a thread that starts taking part in OpenMP (an initial thread when its
// state is made, a worker when its OS thread starts): its trace row.
void observe_thread(ThreadState& ts, bool initial);

// The user's code behind a function the runtime runs (an outlined region or
// a task's function): an ABI layer that wraps the compiler's function in
// one of its own registers how to find the compiler's from the data.
using CodeOf = const void* (*)(void* data);
void register_code_of(void (*wrapper)(void*), CodeOf code_of);
const void* code_of(void (*fn)(void*), void* data);

// The trace side: a time stamp when ts traces (else 0), and a construct's
// span from t0 (skipped when t0 is 0: a session started meanwhile).
std::uint64_t obs_now(const ThreadState& ts) noexcept;
void obs_span(ThreadState& ts, detail::TraceOmpConstruct c, std::uint64_t t0, const void* code = nullptr,
              std::uint64_t b = 0) noexcept;

}  // namespace canopy::omp
