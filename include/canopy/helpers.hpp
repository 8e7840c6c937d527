// Helper threads: threads of the program that are not workers but run
// beside them — an MPI progress thread, an I/O thread, a communication
// thread (ORWL put its control threads on the hyperthread siblings of the
// compute threads). When the machine has SMT the workers go one per core
// (CANOPY_NUM_THREADS unset: one worker per core) and the siblings of their
// PUs are kept for helpers; register_helper_thread binds the calling thread
// to the free PU with the fewest helpers, a sibling of a worker first.
// Without a free PU (no SMT, or as many workers as PUs) a helper shares the
// core with the fewest helpers so far: it never fails for want of a PU.
//
//   canopy::Runtime rt;
//   std::thread progress([&] { canopy::register_helper_thread(rt); mpi_progress_loop(); });
#pragma once
#include <vector>

#include "canopy/runtime.hpp"

namespace canopy {

class Topology;

struct HelperPlacement {
  int pu = -1;            // logical PU of the runtime's machine
  int pu_os = -1;         // its OS index
  bool shared = false;    // no free PU: the helper shares a worker's core
  std::vector<int> cpus;  // the OS CPUs the thread was bound to (empty: not bound)
};

// Chooses a PU for one more helper of rt and, when rt binds its workers
// (RuntimeOptions::bind is not None, on this machine), binds the calling
// thread there (the whole core when it is shared). Each call counts one
// more helper: the next goes elsewhere while free PUs remain.
HelperPlacement register_helper_thread(Runtime& rt);

// The pure choice behind it: for workers on `worker_pus` (logical PUs of
// topo) and `helpers[pu]` helpers already on each PU of topo, the PU for the
// next helper and whether it shares a worker's core.
HelperPlacement choose_helper_pu(const Topology& topo, const std::vector<int>& worker_pus,
                                 const std::vector<int>& helpers);

}  // namespace canopy
