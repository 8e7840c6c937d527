// Where tasks with an affinity go (OpenMP's `affinity` clause through the
// libomp ABI, and canopy's canopy_omp_task_node / canopy_omp_task_thread
// extension for any compiler): the NUMA node holding most bytes of the
// task's locator list, or a thread of the team. The queues themselves are
// in tasks.cpp (per node and per thread, beside the deques); here: the
// settings, the page-location cache, and the calling thread's affinity
// for its next task.
#pragma once
#include <atomic>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>

namespace canopy::omp {

struct Task;

struct AffinitySettings {
  bool strict = false;  // CANOPY_OMP_AFFINITY=strict: only threads of the task's node take it
  int test_nodes = 0;   // CANOPY_OMP_TEST_NUMA=n (tests on a one-node machine): n pretend nodes
  // CANOPY_AFFINITY=auto: recurring tasks with depend clauses are mapped
  // onto the team's threads (depend_affinity.hpp); CANOPY_POLICY (the
  // policy; "" = canopy's default) and CANOPY_DISPLAY_AFFINITY (print each
  // mapping) are read only then. The same words as canopy's runtime.
  // CANOPY_STATS (the local share of the depend items' bytes at each
  // mapping) and CANOPY_AFFINITY_DUMP (a directory: each mapping's matrix
  // and placement files) likewise.
  bool auto_affinity = false;
  std::string policy;
  bool display = false;
  bool stats = false;
  std::string dump;
};
// Read once from the environment (at the runtime's start); a bad value
// stops the program with a message naming the variable (canopy's custom
// for CANOPY_* variables).
const AffinitySettings& affinity_settings();

// The NUMA node holding most bytes of the ranges (ties: the lowest node),
// -1 when no byte is on a known node (untouched pages). Page locations come
// from the data layer (move_pages) and are cached per page range until
// canopy moves pages (data_move_generation). With CANOPY_OMP_TEST_NUMA=n,
// page p (address / page size) is on node p mod n.
struct ByteRange {
  const void* addr;
  std::size_t len;
};
int locator_node(const ByteRange* ranges, int n);

// canopy_omp_task_node / canopy_omp_task_thread: the next task the calling
// thread creates goes to that node / thread (-1: none). Taken (and
// cleared) when the task is created.
void set_next_task_affinity(int node, int thread);
bool take_next_task_affinity(int& node, int& thread);

// A queue of tasks with an affinity (one per node and one per thread of a team).
struct AffineQueue {
  std::mutex m;
  std::deque<Task*> tasks;
  std::atomic<int> count{0};
};

}  // namespace canopy::omp
