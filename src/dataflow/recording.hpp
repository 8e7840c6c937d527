// Private to src/dataflow/: a Recording is the tasks of one iteration with
// the accesses they declared (handle, bytes, read and/or write), in the
// order they were added; automatic affinity turns it into the task-to-task
// matrix (recording.cpp, the rules in docs/auto-affinity.md) and applies
// placements to it (auto_affinity.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "canopy/auto_affinity.hpp"
#include "canopy/data.hpp"

namespace canopy {
class Topology;
namespace detail {
struct RuntimeCore;
}
}  // namespace canopy

namespace canopy::detail::flow {

struct RecAccess {
  std::uint32_t index = 0;       // Data::index
  std::uint32_t generation = 0;  // Data::generation
  std::uint64_t bytes = 0;       // the handle's size when the task was added
  bool reads = false;            // Read or ReadWrite
  bool writes = false;           // Write or ReadWrite
  Data data() const { return Data{index, generation}; }
};

struct Recording {
  std::vector<std::uint32_t> begin{0};  // task t's accesses: [begin[t], begin[t + 1])
  std::vector<RecAccess> accesses;

  std::size_t tasks() const { return begin.size() - 1; }
  void add_task(const RecAccess* a, std::size_t n) {
    accesses.insert(accesses.end(), a, a + n);
    begin.push_back(static_cast<std::uint32_t>(accesses.size()));
  }
  void clear() {
    begin.assign(1, 0);
    accesses.clear();
  }
};

// The matrix of the recorded tasks. `cyclic`: the recording is one
// iteration of a loop, so the values the last writers leave are what the
// first readers of the next iteration read (counted as in the iteration).
// `work`: seconds per task (empty: not measured). `labels`: fill
// TaskMatrix::labels (the automatic step needs them only to show or save).
// `rows` (optional): the matrix row of each recorded task, for a recording
// in which one task occurs several times (a submit stream's iteration:
// stream_affinity.cpp); edges between two occurrences of one row are
// dropped, and the matrix has `nrows` rows (labels are then left empty).
TaskMatrix build_task_matrix(const Recording& r, bool cyclic, std::vector<double> work, bool labels = true,
                             const std::vector<int>* rows = nullptr, int nrows = 0);

// The work automatic affinity balances a graph's groups by: each task's
// measured seconds (one observed run), capped at kWorkOutlierFactor times
// the median of the tasks that declared the same accesses (the same count,
// and the same bytes and modes, in any order: mostly the same code on
// another block). One run times each task once, and one time can be tens of
// times the task's own (its thread preempted, a vCPU of an emulated NUMA VM
// descheduled): counted as it is, that one task outweighed all the others
// of its worker, and balancing gave its node-mate 31 of the node's 32
// lk23 tasks, whose queue then exceeded what another node may take from
// (affine.hpp's surplus). Real differences between tasks of one shape up to
// the factor, and between shapes, are kept.
inline constexpr double kWorkOutlierFactor = 2.0;
std::vector<double> robust_work(const Recording& r, std::vector<double> seconds);

// "t3: r#1 w#2 rw#4" (handles by registry index).
std::string task_label(const Recording& r, std::size_t task);

// Where each handle's pages should go, from a placement (`task_worker`):
// a handle some recorded task writes, the worker whose tasks write most of
// its bytes (ties: the last writer's); a handle the tasks only read, the
// worker whose tasks read most of it when they read at least half of its
// read bytes (else it is not listed: read evenly by several, it stays).
struct HandleWriter {
  Data data;
  int worker = -1;
};
std::vector<HandleWriter> handle_writers(const Recording& r, const std::vector<int>& task_worker);

// compute_placement's steps on any machine (the OpenMP runtime's teams use
// them too): `m` mapped onto `topo` with the policy `name` (canopy's at its
// run-time effort), then the groups balanced by m.work when given.
Placement place_tasks(const Topology& topo, const TaskMatrix& m, const std::string& name);
// The worker of each task of p, given each worker's PU in topo (-1:
// unknown): the worker on the task's PU (several there: in turn), else one
// on its core, else its NUMA node, else any (in turn).
std::vector<int> workers_of_placement(const Topology& topo, const std::vector<int>& worker_pu, const Placement& p);
// The CANOPY_DISPLAY_AFFINITY lines of a placement: one per worker (`unit`
// names it: "worker", "thread") with its PU (OS index), NUMA node, the
// tasks placed there (`workers`: the worker of each task) and their work.
std::string describe_groups(const char* unit, const std::vector<std::pair<int, int>>& pu_os_numa, const TaskMatrix& m,
                            const std::vector<int>& workers);

// The runtime-core side of canopy/auto_affinity.hpp (auto_placement.cpp),
// for callers that hold a RuntimeCore rather than a Runtime.
Topology worker_topology(RuntimeCore* rt);
Placement compute_placement(RuntimeCore* rt, const TaskMatrix& m, const std::string& policy);
std::vector<int> placement_workers(RuntimeCore* rt, const Placement& p);
void write_affinity_files(const std::string& dir, const std::string& name, RuntimeCore* rt, const TaskMatrix& m,
                          const Placement& p);
std::string describe_placement(RuntimeCore* rt, const TaskMatrix& m, const Placement& p);
// write_affinity_files on any machine (the OpenMP runtime's teams):
// `workers` gives each task's worker (`unit`: "worker", "thread") for the
// placement file's comments.
void write_affinity_files(const std::string& dir, const std::string& name, const Topology& topo, const TaskMatrix& m,
                          const Placement& p, const std::vector<int>& workers, const char* unit);

// Moves each handle of `r` to the NUMA node of its worker (handle_writers
// with `task_worker`, a worker per recorded task); sets the report's pages
// moved and left (a one-node machine, or a runtime on a machine that is not
// this one, moves nothing). Pages the kernel will not move stay where they
// are: an optimisation never aborts the program (data_try_move_to_node).
void move_handles(RuntimeCore* rt, const Recording& r, const std::vector<int>& task_worker, AffinityReport* report);

}  // namespace canopy::detail::flow
