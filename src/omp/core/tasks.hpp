// Explicit tasks. Every operation the ABI needs goes through the functions
// below (gomp/ and the barrier code in runtime.cpp call nothing else).
// The engine (tasks.cpp): a Chase-Lev deque per thread of a team
// (task_deque.hpp), owner LIFO at the bottom, thieves FIFO at the top in
// topology order (task_victims.hpp); a small locked queue per team for
// priority tasks and tasks made ready by a thread outside the team;
// dependences per parent task (the parent's own lock, not a team-wide one);
// waits that run tasks under the rule in tasks.cpp (a waiting task runs
// only its own descendants).
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "depend_affinity.hpp"
#include "runtime.hpp"
#include "small_vec.hpp"
#include "spin_mutex.hpp"
#include "task_affinity.hpp"
#include "task_deque.hpp"

namespace canopy::omp {

struct TaskGroup {
  TaskGroup* outer = nullptr;
  std::atomic<int> pending{0};  // tasks created in the group (and their descendants) not complete
  std::atomic<bool> cancelled{false};
  // Task reductions visible in the group (GCC's descriptor array, see
  // task_reduction_register): inherited from the enclosing group.
  std::uintptr_t* reductions = nullptr;
  bool workshare = false;  // a work share's task-reduction group: cancel taskgroup means the enclosing one
  void* kmp_reductions = nullptr;  // the libomp ABI's task reductions of this group (kmp/task_reduction.cpp)
  bool is_cancelled() const {
    return cancelled.load(std::memory_order_acquire) ||
           (workshare && outer && outer->cancelled.load(std::memory_order_acquire));
  }
};

// Task identities for lock ownership: 31 bits, never 0. Each thread takes
// them in blocks, so creating a task touches no shared counter.
inline std::uint32_t next_task_id() {
  static std::atomic<std::uint32_t> counter{0};
  constexpr std::uint32_t kBlock = 1024;
  // initial-exec, as the runtime's other thread-locals: the default model
  // of a shared library calls __tls_get_addr on every access.
  __attribute__((tls_model("initial-exec"))) thread_local std::uint32_t next = 0, end = 0;
  std::uint32_t v;
  do {
    if (next == end) {
      next = counter.fetch_add(kBlock, std::memory_order_relaxed);
      end = next + kBlock;
    }
    v = next++ & 0x7fffffffu;
  } while (v == 0);
  return v;
}

struct DepRecord {                 // per address, among the children of one task
  Task* last_out = nullptr;        // last out/inout/mutexinoutset task
  std::vector<Task*> readers;      // in tasks since last_out
};

// One depend clause item as the core sees it (out: out, inout,
// mutexinoutset, inoutset; they are serialised alike).
struct Dep {
  void* addr;
  bool out;
};
using DepList = SmallVec<Dep, 8>;

// The dependence map of one task's children: allocated when its first child
// with a depend clause is created, guarded by its own mutex (dependences
// only link siblings, so a lock per parent is enough).
struct ChildDeps {
  SpinMutex m;
  std::unordered_map<void*, DepRecord> map;
};

// A task's own dependence bookkeeping, only for a task with depend clauses
// (under the parent's ChildDeps mutex, except `unresolved`).
// In a task block of its own (task_blocks.hpp: new_dep_node, release).
struct DepNode {
  std::atomic<int> unresolved{0};  // predecessors not complete
  bool completed = false;
  std::uint8_t block_class = 0;    // its block's size class
  SmallVec<Task*, 2> successors;
  SmallVec<void*, 2> addrs;        // entries this task holds in the parent's map
};

// Kept small (bench/omp/taskmem.c holds 10^6 at once): dependences live in
// side structures allocated only for tasks that have them, and a deferred
// task's copy of the compiler's data follows the Task in the same block.
struct Task {
  Icvs icvs;
  std::uint32_t id = next_task_id();  // lock owner identity (locks belong to tasks)
  int depth = 0;                   // 0 implicit, a child one more than its parent
  Task* parent = nullptr;
  Team* team = nullptr;
  std::atomic<int> refs{1};        // itself + live children (a parent outlives its children's bookkeeping)
  std::atomic<int> children{0};    // children not yet complete (taskwait)
  TaskGroup* group = nullptr;      // innermost taskgroup tasks created here belong to
  TaskGroup* member_of = nullptr;  // the group this task counts in
  void (*fn)(void*) = nullptr;
  void* arg = nullptr;
  std::atomic<int> completion_left{1};  // body + (detach event)
  int priority = 0;
  // Affinity (task_affinity.hpp): the NUMA node or the thread of the team
  // whose queue it goes to when it becomes ready (-1: none).
  int affinity_node = -1, affinity_thread = -1;
  std::int64_t mark = 0;           // its thread's deque bottom when it started (tasks.cpp, the wait rule)
  DepNode* dep = nullptr;          // only with depend clauses
  ChildDeps* child_deps = nullptr; // only once a child had depend clauses
  ompt_data_t ompt_task{};         // the OMPT tool's data for this task
  // A detached task's body end and omp_fulfill_event race: whichever sets
  // this first tells an OMPT tool the task is not complete yet (observe.cpp).
  std::atomic<bool> detach_half_reported{false};
  bool final_task = false;
  bool implicit = false;
  bool undeferred = false;         // run by its creator: never queued
  bool counted = true;             // in the parent's children, its group and the team's pending count
  bool copied = false;             // firstprivate copy constructors ran (a cancelled group still runs it)
  bool own_block = false;          // allocated by tasks.cpp with its data (freed there)
  std::uint8_t block_class = 0;    // own_block's size class in task_blocks.hpp's cache (the flags above and this: 8 bytes)
};

// Forgets the dependence map of an implicit task reused for a new region.
void reset_task_deps(Task& t);

// One thread's share of its team's count of pending tasks: the tasks it
// created and the tasks it finished (whichever thread created them). Only
// that thread writes them; team_pending_tasks (tasks.cpp) sums them.
struct alignas(64) TaskCounts {
  std::atomic<std::int64_t> created{0};
  std::atomic<std::int64_t> finished{0};
};

// The TaskCounts of a team's threads, by thread number. The array only
// grows, at a fork, and an outgrown array stays until the queue goes: a
// worker of the previous region may still be summing the counts
// (park_at_join's look at the pending count can overlap the next fork).
class TaskCountSlots {
 public:
  TaskCounts& operator[](int i) const { return *array_.load(std::memory_order_acquire)[i]; }
  TaskCounts* const* array() const { return array_.load(std::memory_order_acquire); }
  std::size_t size() const { return size_; }
  void grow_to(std::size_t n) {  // at a fork (quiescent)
    if (n <= size_) return;
    auto a = std::make_unique<TaskCounts*[]>(n);
    for (std::size_t i = 0; i < n; ++i) {
      if (i >= size_) owned_.push_back(std::make_unique<TaskCounts>());
      a[i] = owned_[i].get();
    }
    array_.store(a.get(), std::memory_order_release);
    arrays_.push_back(std::move(a));
    size_ = n;
  }

 private:
  std::atomic<TaskCounts**> array_{nullptr};
  std::size_t size_ = 0;
  std::vector<std::unique_ptr<TaskCounts>> owned_;
  std::vector<std::unique_ptr<TaskCounts*[]>> arrays_;  // the current one and the outgrown ones
};

// The deferred tasks of a team. Whether any is ready (team_has_ready_tasks)
// and the pending count (team_pending_tasks) are read by the barrier code
// (runtime.cpp) before it sleeps.
struct TaskQueue {
  std::vector<std::unique_ptr<TaskDeque>> deques;  // by thread number
  // Explicit tasks created and not complete (team_pending_tasks): counted
  // per thread, each on its own line, because a shared count is a line
  // that the creating and the finishing thread take from each other at
  // every task (one thread creating the tasks that another runs). Here, not
  // beside the counters below: the vector is read at every task.
  TaskCountSlots counts;  // by thread number
  // The team size the counts are for (they restart from zero at a fork
  // that changes it); stored after the counts array grew.
  std::atomic<int> counted_slots{0};
  // Whether a deferred task was counted since the fork: written once per
  // region (by the first), so that a region without tasks reads one flag
  // where it would sum the counts and look at every deque.
  std::atomic<bool> used{false};
  std::mutex shared_m;
  std::vector<Task*> shared;        // priority tasks (highest first) and tasks readied outside the team
  // Each counter on its own cache line. There is no count of the ready
  // tasks: the deques say whether they hold any, and a shared count is a
  // line that every push and every take would move between the threads.
  alignas(64) std::atomic<int> shared_count{0};  // read by every look for a task
  alignas(64) std::atomic<std::int64_t> finished_elsewhere{0};  // tasks finished by a thread outside the team
  // Steal order: the PU of every thread (set at the fork), and per thread
  // the order it computed from them (owner only) for placement `epoch`.
  alignas(64) std::vector<int> slot_pu;
  std::vector<char> slot_pinned;  // the thread may run on one core only (automatic affinity maps onto those)
  unsigned epoch = 0;
  struct Victims {
    unsigned epoch = ~0u;
    std::vector<int> order;
  };
  std::vector<Victims> victims;
  // Tasks with an affinity: a queue per NUMA node of the machine (or of
  // CANOPY_OMP_TEST_NUMA) and per thread; each thread's node (set at the
  // fork from its placement) and which nodes have a thread of the team.
  // affine_count (tasks in all of them) lets every other look skip them.
  std::vector<std::unique_ptr<AffineQueue>> node_queues, thread_queues;
  std::vector<int> slot_node;
  std::vector<char> node_present;
  alignas(64) std::atomic<int> affine_count{0};
  // How long tasks with an affinity run (a moving average, ns): loose
  // affinity lets a thread take another node's task only after it has been
  // idle for twice that (tasks.cpp, find_affine).
  std::atomic<std::int64_t> affine_run_ns{0};
  // CANOPY_AFFINITY=auto only: the recurring tasks with depend clauses and
  // their threads (depend_affinity.hpp); null otherwise.
  DependAffinityPtr depend_affinity;
};

// TaskSpec::flags bits (GCC's GOMP_TASK_FLAG_* values; the kmp layer converts libomp's).
constexpr unsigned kTaskFlagFinal = 2, kTaskFlagDepend = 8, kTaskFlagDetach = 1u << 13;
// canopy's own (GCC never sets it): `depend` (GCC's {n, nout, addresses}
// layout) is followed by n std::size_t, each item's bytes (libomp's `len`),
// for automatic affinity (depend_affinity.hpp). A flag rather than a field:
// TaskSpec is built for every task, and a field costs a store each time.
constexpr unsigned kTaskFlagDependLen = 1u << 30;

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
  const void* codeptr = nullptr;     // the ABI entry point's return address (OMPT)
};

void task_create(const TaskSpec& spec);
// task_create in two halves, for an ABI whose compiler fills the task's data
// in after the runtime allocated it (libomp's __kmpc_omp_task_alloc, then
// __kmpc_omp_task): task_alloc returns the task with spec.arg_size bytes of
// data (aligned to spec.arg_align, copied from spec.data when given) at
// *data; task_submit queues or runs it as task_create would (spec's
// if_clause, depend; its flags must be those given to task_alloc);
// task_discard frees one never submitted. A detached task's event handle is
// the Task itself.
Task* task_alloc(const TaskSpec& spec, void** data);
void task_submit(Task* t, const TaskSpec& spec);
// Whether a new task's depend clauses need tracking: not in a team of one,
// where every task but a detached one runs at once, in creation order, so
// its siblings are all complete already, unless the parent has a deferred
// (detached) child with dependences, which left the parent a dependence map.
bool task_dependences_matter(bool detach);
void task_discard(Task* t);
// An allocated task whose body the caller runs itself, undeferred
// (libomp's __kmpc_omp_task_begin_if0 / __kmpc_omp_task_complete_if0): it is
// the current task in between; the end waits for a detached task's event.
void task_begin_inline(Task* t);
void task_end_inline(Task* t);
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

// The barrier hook: run one ready task of `team` (any task: the thread's
// implicit task is at a barrier or the region's end); true if one ran.
bool run_one_task(Team& team);
// Tasks of the team not complete.
int count_pending_tasks(const TaskQueue& q);
inline int team_pending_tasks(Team& team) {
  return team.tasks && team.tasks->used.load(std::memory_order_seq_cst) ? count_pending_tasks(*team.tasks) : 0;
}
// Whether a ready task is queued anywhere in the team (its deques, shared
// and affinity queues); seq_cst loads, for a waiter's check after it
// announced itself as a sleeper (every push is seq_cst, then reads the
// sleepers).
bool team_has_ready_tasks(Team& team);
// At a fork (reset_team), before the team's threads start: a deque per thread.
void ensure_task_queue(Team& team);
// At a fork, before the workers are woken: the CPUs thread i is placed on
// (empty: the team is not bound), for the topology order of stealing.
void set_task_placement(Team& team, const std::vector<std::vector<int>>& cpus_by_thread);

}  // namespace canopy::omp
