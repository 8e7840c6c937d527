// Automatic affinity in three calls (docs/auto-affinity.md): the matrix of
// a task graph derived from the data its tasks declare (TaskGraph::matrix),
// a placement of those tasks on a runtime's workers computed from it with
// any policy (compute_placement), and the placement applied to the graph
// (TaskGraph::apply). Between the calls a user can look at the matrix and
// the placement, change them, and save them for the CLI
// (write_affinity_files: `canopy matrix`, `canopy map`, `canopy eval`,
// `canopy compare` read them) or load a saved placement back
// (read_placement). With CANOPY_AFFINITY=auto the runtime makes the three
// calls itself after the first run of a graph.
//
//   canopy::TaskMatrix m = graph.matrix();                 // bytes between tasks
//   canopy::Placement p = canopy::compute_placement(rt, m, "treematch");
//   graph.apply(rt, p);                                     // next runs follow it
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "canopy/comm_matrix.hpp"
#include "canopy/placement.hpp"

namespace canopy {

class Runtime;
class Topology;

// The communication of a set of tasks: bytes that one task writes and
// another reads, and bytes that tasks reading the same data share
// (docs/auto-affinity.md lists the rules), with a label per task and, when
// measured, the seconds each task took.
struct TaskMatrix {
  CommMatrix matrix;
  std::vector<std::string> labels;  // "t3: r#1 w#2" (accesses by handle index)
  std::vector<double> work;         // seconds per task; empty: not measured
};

// The machine of rt restricted to the PUs its workers are on: the topology
// a placement of tasks on rt's workers is computed on (and read back with).
Topology worker_topology(const Runtime& rt);

// Maps the tasks of m onto rt's workers with `policy` ("" = rt's
// RuntimeOptions::policy, else canopy's default policy): map_tasks on
// worker_topology(rt), so with more tasks than workers each worker gets a
// group of tasks; when m.work is given, the groups are then balanced by
// work (tasks move from the most to the least loaded worker, closest
// first, while that lowers the largest load). Throws canopy::Error for an
// unknown policy or an empty matrix.
Placement compute_placement(const Runtime& rt, const TaskMatrix& m, const std::string& policy = "");

// The worker placement p puts each task on: the worker on the task's PU
// (several there: in turn), else one on its core, else its NUMA node, else
// any (in turn). Throws canopy::Error for a PU rt's machine lacks.
std::vector<int> placement_workers(const Runtime& rt, const Placement& p);

// Writes <dir>/<name>.edges (the matrix as an edge list, one comment line
// per task with its label and work) and <dir>/<name>.placement (the
// placement as `canopy map --of list` writes it: one OS CPU number per
// task, with comments), creating dir. Throws canopy::Error naming the file
// when it cannot be written.
void write_affinity_files(const std::string& dir, const std::string& name, const Runtime& rt, const TaskMatrix& m,
                          const Placement& p);

// Reads a placement file in the list format (write_affinity_files, `canopy
// map --of list`) for `tasks` tasks on rt's workers; errors name the file.
Placement read_placement(const Runtime& rt, const std::string& path, int tasks);

// What the CANOPY_DISPLAY_AFFINITY lines say: one line per worker with its
// PU, NUMA node, the tasks placed there and their work.
std::string describe_placement(const Runtime& rt, const TaskMatrix& m, const Placement& p);

// What automatic affinity did for one task graph (TaskGraph::affinity_report).
struct AffinityReport {
  int mappings = 0;              // placements computed (1 + re-mappings)
  double map_seconds = 0;        // the last one: matrix + placement (elapsed)
  double map_cpu_seconds = 0;    // the same in CPU time of the thread that mapped
  double move_seconds = 0;       // the last one: moving handles' pages
  std::uint64_t pages_moved = 0; // by the last one
  // Pages the last one could not move (the kernel refused: e.g. a huge
  // page shared with another handle) and left where they were, the handles
  // they belong to, and the first refusal ("#52 to node 0: mbind: ...").
  std::uint64_t pages_left = 0;
  std::uint64_t handles_left = 0;
  std::string move_refusal;
  // Bytes the tasks accessed on the NUMA node of the worker that ran them,
  // and on other nodes, in the observed run before the placement and in
  // the first run after it (as far as canopy knows where the pages are).
  std::uint64_t before_local = 0, before_remote = 0;
  std::uint64_t after_local = 0, after_remote = 0;
  bool after_measured = false;
};

// What automatic affinity found in a runtime's `submit` stream
// (docs/auto-affinity.md, "Streams"): a task is recognised by what it
// accesses (handles and modes); the iteration is the submissions from one
// occurrence of a recurring task to its next; once two iterations in a row
// hold the same tasks, the matrix of the last one is mapped and each task
// submitted or made ready after that goes to its worker (loosely).
struct StreamReport {
  std::size_t signatures = 0;  // distinct tasks seen (by their accesses)
  std::size_t iteration = 0;   // submissions per iteration of the mapped pattern (0: none mapped)
  std::size_t recurring = 0;   // its distinct tasks: the rows of stream_matrix
  std::vector<int> workers;    // the worker of each (stream_matrix order); empty: not mapped
  bool manual = false;         // the placement was applied by apply_stream_placement
  AffinityReport affinity;     // mappings, their cost, pages moved
};

// The stream's report (all zero when CANOPY_AFFINITY is not auto, or on a
// runtime of one worker).
StreamReport stream_affinity(const Runtime& rt);

// The matrix of the stream's last mapped (else last confirmed) iteration:
// one row per recurring task in first-submission order, labelled "s3: r#1
// w#2 rw#4" (handles by index), with the measured seconds per iteration as
// work. Throws canopy::Error when no iteration has been recognised yet.
TaskMatrix stream_matrix(const Runtime& rt);

// Applies a placement of stream_matrix's tasks: from now on each of them
// goes to its worker when it is made ready, and each handle's pages to the
// node of the worker that writes most of it. Kept until the stream's pattern
// changes (automatic affinity does not replace it meanwhile). Throws
// canopy::Error when the task counts differ.
void apply_stream_placement(Runtime& rt, const Placement& p);

}  // namespace canopy
