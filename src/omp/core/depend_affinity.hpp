// Automatic affinity for OpenMP tasks with depend clauses
// (CANOPY_AFFINITY=auto; docs/auto-affinity.md, "OpenMP tasks"). Each
// deferred task with depend clauses created in a team is identified by what
// it accesses: its function and its depend items (addresses, in or out),
// so the same task of a later iteration gets the same id. The ids in
// creation order give the iterations (dataflow/iterations.hpp, shared with
// canopy's own submit streams); a confirmed iteration's task-to-task matrix
// (writer -> reader over shared depend addresses, weighed by clang's `len`
// in bytes, or one unit per address for GCC, which passes addresses only)
// is mapped onto the team's threads with the placement engine
// (CANOPY_POLICY), and each task of the following iterations is aimed at
// its thread loosely, through the thread queues canopy_omp_task_thread uses.
// Right after a mapping, the pages of the written depend items of a page or
// more (clang's array sections) go to their writers' nodes (depend_pages.hpp);
// CANOPY_STATS and CANOPY_AFFINITY_DUMP report each mapping.
//
// Cost: nothing unless CANOPY_AFFINITY=auto (one test of a setting in the
// path of tasks that have depend clauses, none on other tasks); with it, a
// lock per team and a hash of the task's depend items per such task.
#pragma once
#include <cstddef>
#include <memory>
#include <vector>

namespace canopy::omp {

struct Dep;
struct Task;
struct Team;
struct TaskQueue;
struct DependAffinity;

// The team's recogniser, made at the fork when CANOPY_AFFINITY=auto (only
// then is TaskQueue::depend_affinity set).
void attach_depend_affinity(TaskQueue& q);
void destroy_depend_affinity(DependAffinity* d);
struct DependAffinityDeleter {
  void operator()(DependAffinity* d) const { destroy_depend_affinity(d); }
};
using DependAffinityPtr = std::unique_ptr<DependAffinity, DependAffinityDeleter>;

// A deferred task `t` of `team` with its depend items (`len`: the bytes of
// each, libomp's ABI; null for GCC's) is about to be queued: observed, and
// aimed at its thread when its recurring task is mapped and it has no
// affinity of its own.
void depend_affinity_task(Team& team, Task* t, const Dep* deps, std::size_t ndeps, const std::size_t* len);

// canopy_omp_affinity_save / _load (canopy_omp.h) for `team`: writes the
// last mapping's <dir>/<name>.edges and .placement; applies a placement
// file (one OS CPU of the team's machine per recurring task, as saved or as
// `canopy map --of list` writes it) to the recurring tasks: later tasks go
// to the threads on those CPUs, written items' pages to their nodes. 1:
// done; 0: no mapping holds for the team (none yet, CANOPY_AFFINITY not
// auto, another team shape since); -1: an error, said on stderr.
int depend_affinity_save(Team* team, const char* dir, const char* name);
int depend_affinity_load(Team* team, const char* path);

}  // namespace canopy::omp
