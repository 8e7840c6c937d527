// Private to src/dataflow/: automatic affinity of a runtime's `submit`
// stream (docs/auto-affinity.md, "Streams"). Each top-level task submitted
// without a hint on a runtime of several workers with CANOPY_AFFINITY=auto
// is recognised by its accesses (a signature: handles, generations, read or
// write) and given the id of its recurring task; the ids in submission
// order give the iterations (stream_affinity.cpp says how), the matrix of a
// confirmed iteration is mapped, and make_ready sends each such task to the
// worker of its id (stream_worker) once there is one.
//
// Cost when automatic affinity is off: one load and compare in submit_on
// (the options of the runtime); make_ready's common path is unchanged
// (stream tasks carry a worker hint kind, so they take its hinted path).
#pragma once
#include <cstddef>
#include <cstdint>

#include "canopy/dataflow.hpp"

namespace canopy::detail {
struct RuntimeCore;
}

namespace canopy::detail::flow {

struct StreamAffinity;

// What submit does with one task: its recurring task's id + 1 (0: not
// tracked, submit as usual), and whether to time its body (then the node
// carries a StreamTimer just before the callable, and kStreamTimedOps).
struct StreamTask {
  std::uint32_t id = 0;
  StreamAffinity* stream = nullptr;
  bool timed = false;
};
StreamTask stream_task_submitted(RuntimeCore* rt, const Access* acc, std::size_t n);

// Just before a timed task's callable: the callable's own ops and who to
// tell its duration.
struct StreamTimer {
  const FnOps* ops;
  StreamAffinity* stream;
  std::uint32_t id;  // id + 1, as in StreamTask
};
extern const FnOps kStreamTimedOps;

// The worker task `id` (id + 1, as above) is placed on; -1: none (not
// mapped yet, or not part of the mapped pattern). Lock-free.
int stream_worker(RuntimeCore* rt, std::uint32_t id);

}  // namespace canopy::detail::flow
