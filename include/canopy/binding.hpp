// Binding the calling thread to CPUs of this machine, and asking where it is
// bound and where it runs. hwloc does the work inside src/topology/; the
// hwloc topology that binding needs is loaded once per process, on first use.
//
// All CPU numbers here are OS indexes (what `taskset`, OMP_PLACES and
// sched_getcpu() use), not canopy's logical PU indexes.
#pragma once
#include <vector>

namespace canopy {

class Topology;

// A team (canopy_omp_bind_team) or `canopy run -n` with more threads than
// this per allowed PU is taken as a typo rather than attempted.
inline constexpr int kMaxThreadsPerPU = 64;

// Binds the calling thread to the given OS CPUs (it may then run on any of
// them). Throws canopy::Error: BadInput when the list is empty or names a CPU
// this machine does not have; System when the OS refuses (e.g. a CPU outside
// the cgroup cpuset or the process's allowed set).
void bind_current_thread(const std::vector<int>& os_indexes);

// The OS CPUs the calling thread may run on, sorted. Throws Error(System)
// when the OS cannot tell.
std::vector<int> current_thread_binding();

// The OS CPU the calling thread runs on at this instant, -1 when the OS
// cannot tell. (It may change right after unless the thread is bound to one CPU.)
int current_cpu();

// This machine, restricted to the PUs the process could use when this was
// first called, loaded once per process. Placing the threads of a team on it
// (rather than on a fresh Topology::this_machine()) matters: once earlier
// threads are bound, the process's binding narrows to their CPUs, and a
// second, larger team would otherwise be squeezed onto them.
const Topology& process_topology();

}  // namespace canopy
