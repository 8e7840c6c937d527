// OMPT, the OpenMP 5.x tool interface (omp-tools.h), in canopy's OpenMP
// runtime (ompt.cpp): finding a tool (ompt_start_tool in the program or a
// library loaded with it, or OMP_TOOL_LIBRARIES), its initialize and
// finalize, the callbacks it registers and the inquiry functions it looks
// up. The runtime dispatches events through the functions below, only from
// the out-of-line paths taken when the thread's observe word is set
// (observe.hpp): with no tool attached, OMPT costs nothing else.
#pragma once
#include <omp-tools.h>

#include <atomic>

#include "runtime.hpp"

namespace canopy::omp {
struct Task;
namespace ompt {

// The callbacks the runtime dispatches (null: not registered).
struct Callbacks {
  ompt_callback_thread_begin_t thread_begin = nullptr;
  ompt_callback_thread_end_t thread_end = nullptr;
  ompt_callback_parallel_begin_t parallel_begin = nullptr;
  ompt_callback_parallel_end_t parallel_end = nullptr;
  ompt_callback_task_create_t task_create = nullptr;
  ompt_callback_task_schedule_t task_schedule = nullptr;
  ompt_callback_implicit_task_t implicit_task = nullptr;
  ompt_callback_sync_region_t sync_region = nullptr;
  ompt_callback_sync_region_t sync_region_wait = nullptr;
  ompt_callback_dependences_t dependences = nullptr;
  ompt_callback_work_t work = nullptr;
};

// Set by start() before any thread is observed; cleared by finalize (the
// callbacks stay: a thread may be dispatching one).
extern std::atomic<bool> active;
extern Callbacks cb;

// Looks for a tool and initialises it (once per process, from the first
// initial thread after its state exists). True when a tool is attached.
bool start();

// A frame the runtime does not fill in (canopy does not track the frames
// of the tasks it runs: both addresses NULL, as the specification allows).
ompt_frame_t* no_frame();

}  // namespace ompt
}  // namespace canopy::omp
