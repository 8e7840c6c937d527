// What canopy's OpenMP runtime shows to observers: OpenMP construct events
// in canopy's traces (CANOPY_TRACE, docs/trace.md) and to an OMPT tool
// (ompt.hpp). Every event site tests
// the calling thread's one observe word (ThreadState::observe) and takes an
// out-of-line path when it is set; with nothing observing, that test is the
// whole cost.
#pragma once
#include <cstdint>

#include <omp-tools.h>

#include "runtime.hpp"

namespace canopy::omp {

inline bool observed(const ThreadState& ts) noexcept {
  return ts.observe.word.load(std::memory_order_relaxed) != 0;
}

// The calling thread's state if it is observed, else null: for event sites
// with no ThreadState at hand (a TLS read, no call; a thread not yet in
// OpenMP is not observed).
inline ThreadState* observed_thread() noexcept {
  ThreadState* ts = tls_thread;
  return ts && observed(*ts) ? ts : nullptr;
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

// The events (called only when observed(ts)): each records the trace's span
// ends it needs and dispatches the OMPT tool's callback when one is
// registered.
// A region's start on its primary thread, before the workers are woken.
void obs_parallel_begin(ThreadState& ts, Team& team, const void* codeptr) noexcept;
// The primary's implicit task starts (end of the fork).
void obs_implicit_begin(ThreadState& ts, Team& team) noexcept;
// A thread's implicit task ends (task_data: the task's data, or a copy of it
// once the team may be reused).
void obs_implicit_end(ThreadState& ts, ompt_data_t* task_data, int thread_num) noexcept;
// The region's end on its primary thread, once it left the team.
void obs_parallel_end(ThreadState& ts, Team& team, std::uint64_t t0, const void* code) noexcept;
// A synchronisation region (barrier, taskwait, taskgroup) and the wait in it.
void obs_sync_begin(ThreadState& ts, ompt_sync_region_t kind, ompt_data_t* parallel, ompt_data_t* task,
                    const void* codeptr = nullptr) noexcept;
void obs_sync_end(ThreadState& ts, ompt_sync_region_t kind, ompt_data_t* parallel, ompt_data_t* task,
                  const void* codeptr = nullptr) noexcept;
// A work-sharing construct (kind: an ompt_work_t; 0 reports nothing) the
// thread enters (begin) or leaves (end); count: its iterations, sections or 1.
void obs_work(const ThreadState& ts, int kind, ompt_scope_endpoint_t ep, std::uint64_t count) noexcept;
// A thread reaches a single: the executor's work begins (single_end ends
// it), the others' begins and ends at once.
void obs_single_start(const ThreadState& ts, bool executor) noexcept;
// An explicit task is created (flags: OMPT's ompt_task_flag_t bits).
void obs_task_create(ThreadState& ts, Task* t, int flags, bool has_deps, const void* codeptr) noexcept;
// Its dependences (addresses; out: written).
void obs_dependences(Task* t, const void* const* addrs, const bool* out, int n) noexcept;
// The thread switches from `prior` to run `next`, and back when it is done
// (status: ompt_task_complete, _detach or _cancel).
void obs_task_switch(Task* prior, Task* next) noexcept;
void obs_task_done(Task* t, ompt_task_status_t status, Task* prior) noexcept;
// The status a task's body end reports: ompt_task_detach while its event is
// pending, else ompt_task_complete. Called before the body's share of
// completion_left is released (the task is alive throughout).
ompt_task_status_t obs_body_end_status(Task* t) noexcept;
// A detached task's event is fulfilled, after its body ended (late) or
// before (early; its body's end then reports it complete). Of the two racing
// reports exactly one says the task is complete: both go through
// detach_half_reported.
void obs_task_fulfilled(Task* t) noexcept;
// A worker's OS thread ends (omp_pause_resource, or the tool's finalize).
void obs_thread_end(ThreadState& ts) noexcept;

}  // namespace canopy::omp
