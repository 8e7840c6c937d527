// Work-sharing constructs of a team: the ring of work-share slots (threads
// may be several nowait constructs apart), loops over a normalised iteration
// space [0, count) with static/dynamic/guided hand-out, ordered, sections,
// single, copyprivate and doacross. The gomp/ files convert the ABI's
// (start, end, incr) forms to and from iteration numbers.
#pragma once
#include <cstdint>

#include "observe.hpp"
#include "runtime.hpp"

namespace canopy::omp {

// The calling thread enters its next work share (the first thread to arrive
// initialises it with `spec`). Returns the slot.
WorkShare& loop_enter(const LoopSpec& spec);
// Next chunk [lo, hi) of the calling thread; false when none left.
bool loop_next(std::uint64_t& lo, std::uint64_t& hi);
void loop_leave();      // the thread is done with its current loop (no barrier)
void* loop_mem();       // the work share's memory (GOMP_loop_start's mem)

void ordered_start();
void ordered_end();

void doacross_post(const std::uint64_t* idx);
void doacross_wait(const std::uint64_t* idx);

// scope with task reductions: the thread's taskgroup and registration
// (GOMP_workshare_task_reduction_unregister ends them).
void scope_enter(std::uintptr_t* reductions);

// single: true in the one thread that runs the block; single_end when it
// leaves the block (the OMPT work event; GCC's ABI has no call there: its
// GOMP_single_start ends the event at once, see gomp/sync.cpp).
bool single_start();
inline void single_end() {
  if (ThreadState* ts = observed_thread()) [[unlikely]] obs_work(*ts, ompt_work_single_executor, ompt_scope_end, 1);
}
void* single_copy_start();
void single_copy_end(void* data);

// Resolves run-sched-var for schedule(runtime) into a kind and chunk.
void runtime_schedule(int& kind, std::uint64_t& chunk);

}  // namespace canopy::omp
