// Explicit tasks, first cut: one mutex-protected ready queue per team, tasks
// run by the thread that waits (barrier, taskwait, taskgroup end, taskyield),
// dependences tracked by address among sibling tasks. Every operation the ABI
// needs goes through the functions below, so that the engine (queue, wake-ups)
// can be replaced by canopy's work-stealing deques without touching gomp/.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "runtime.hpp"

namespace canopy::omp {

struct TaskGroup {
  TaskGroup* outer = nullptr;
  std::atomic<int> pending{0};  // tasks created in the group (and their descendants) not complete
  std::atomic<bool> cancelled{false};
  // Task reductions visible in the group (GCC's descriptor array, see
  // task_reduction_register): inherited from the enclosing group.
  std::uintptr_t* reductions = nullptr;
  bool workshare = false;  // a work share's task-reduction group: cancel taskgroup means the enclosing one
  bool is_cancelled() const {
    return cancelled.load(std::memory_order_acquire) ||
           (workshare && outer && outer->cancelled.load(std::memory_order_acquire));
  }
};

// Task identities for lock ownership: 31 bits, never 0.
inline std::uint32_t next_task_id() {
  static std::atomic<std::uint32_t> counter{0};
  std::uint32_t v;
  do {
    v = counter.fetch_add(1, std::memory_order_relaxed) & 0x7fffffffu;
  } while (v == 0);
  return v;
}

struct DepRecord {                 // per address, among the children of one task
  Task* last_out = nullptr;        // last out/inout/mutexinoutset task
  std::vector<Task*> readers;      // in tasks since last_out
};

struct Task {
  Icvs icvs;
  std::uint32_t id = next_task_id();  // lock owner identity (locks belong to tasks)
  Task* parent = nullptr;
  Team* team = nullptr;
  std::atomic<int> refs{1};        // itself + live children (a parent outlives its children's bookkeeping)
  std::atomic<int> children{0};    // children not yet complete (taskwait)
  TaskGroup* group = nullptr;      // innermost taskgroup tasks created here belong to
  TaskGroup* member_of = nullptr;  // the group this task counts in
  bool final_task = false;
  bool implicit = false;
  int priority = 0;
  void (*fn)(void*) = nullptr;
  void* arg = nullptr;
  char* arg_storage = nullptr;
  // Dependences.
  std::atomic<int> unresolved{0};             // predecessors not complete (changed under queue mutex)
  bool undeferred = false;                    // run by its creator: never queued
  bool counted = true;                        // in the parent's children, its group and the team's pending count
  std::vector<Task*> successors;              // under queue mutex
  std::vector<void*> dep_addrs;               // entries this task holds in parent's dep map
  std::unordered_map<void*, DepRecord> deps;  // this task's children's dependences (under queue mutex)
  bool completed = false;
  std::atomic<int> completion_left{1};        // body + (detach event)
};

struct TaskQueue {
  std::mutex m;
  std::deque<Task*> ready;
  std::atomic<int> queued{0};
  std::atomic<int> pending{0};  // explicit tasks created and not complete
};

struct TaskSpec {
  void (*fn)(void*) = nullptr;
  void* data = nullptr;
  void (*cpyfn)(void*, void*) = nullptr;
  long arg_size = 0, arg_align = 1;
  bool if_clause = true;
  unsigned flags = 0;
  void** depend = nullptr;
  int priority = 0;
  void* detach = nullptr;
  bool set_bounds = false;           // taskloop: write (lo, hi) into the first two words of the copied data
  std::uint64_t lo = 0, hi = 0;
};

void task_create(const TaskSpec& spec);
void taskwait();
void taskwait_depend(void** depend);
void taskyield();
void taskgroup_start();
void taskgroup_end();
void fulfill_event(void* event);
bool in_final();

// Task reductions (GCC 12's ABI). `data` is the compiler's descriptor:
// data[0] item count, data[1] bytes of one thread's block of private copies,
// data[2] its alignment (the runtime replaces it with the base of the
// nthreads blocks), data[3] allocator, data[4] next array (the runtime chains
// it to the enclosing group's registration), data[5] the runtime's lookup,
// data[6] the end of the blocks; then per item {original address, offset in
// a block, the runtime's back pointer to data}. Registers on the calling
// task's innermost taskgroup; with `orig` (a work share's first thread's
// array) the blocks `orig` allocated are shared instead of allocated.
void task_reduction_register(std::uintptr_t* data, std::uintptr_t* orig = nullptr);
// Frees the lookup and (with free_blocks) the private copies of one registration.
void task_reduction_unregister(std::uintptr_t* data, bool free_blocks = true);
// GOMP_task_reduction_remap: ptrs[i] (an original item, or an address inside
// some thread's private copies) becomes the calling thread's private copy;
// for i < cntorig, ptrs[cnt + i] gets the original item's address.
void task_reduction_remap(std::size_t cnt, std::size_t cntorig, void** ptrs);
// End of a work share with task reductions: its taskgroup ends, the
// registration is dropped (thread 0 frees the copies), then a barrier unless cancelled.
void workshare_task_reduction_end(bool cancelled);

// The barrier hook: run one ready task of `team` if there is one; true if one ran.
// With a filter, only a child of `parent` / a member of `group` is taken:
// taskwait and taskgroup end run only their own tasks, which bounds the
// stack depth by the depth of the task tree (running any task while waiting
// nests waits without limit).
bool run_one_task(Team& team, const Task* parent = nullptr, const TaskGroup* group = nullptr);
// Tasks of the team not complete.
int team_pending_tasks(Team& team);
void ensure_task_queue(Team& team);

}  // namespace canopy::omp
