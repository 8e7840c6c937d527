// The OpenMP runtime's core state: the process-wide Runtime (settings, the
// pool of idle threads, placement), one ThreadState per OS thread that takes
// part in OpenMP (an OpenMP thread never moves to another OS thread: GCC's
// threadprivate is native TLS), teams (nested ones too), the per-task ICVs
// and the team's work-share ring. The gomp/ and api/ files are thin entry
// points over the functions declared here.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <omp-tools.h>

#include "canopy/detail/trace.hpp"
#include "settings.hpp"

namespace canopy::omp {

struct Team;
struct Task;
struct ThreadState;

// The data-environment ICVs a task carries (OpenMP 5.1, 2.4).
struct Icvs {
  int nthreads = 1;           // nthreads-var (first element of the list for this level)
  int nthreads_level = 0;     // which element of settings.num_threads this level uses
  bool dynamic = false;       // dyn-var
  int max_active_levels = 1;  // max-active-levels-var
  Schedule run_sched;         // run-sched-var
  int bind_level = 0;         // index into settings.proc_bind for the next team
  int bind_var = -1;          // bind-var past the end of the OMP_PROC_BIND list (ProcBind; -1: the list's element)
  int thread_limit = 0;       // thread-limit-var (0: unlimited)
  int default_device = 0;
  std::uintptr_t def_allocator = 0;  // def-allocator-var (0: OMP_ALLOCATOR's, see api/alloc.cpp)
  bool operator==(const Icvs&) const = default;
};

// One place: OS CPUs. A thread's partition is a list of places.
using PlaceList = std::vector<std::vector<int>>;

// A loop to set up in every thread of a team (parallel loop and parallel
// sections constructs), see workshare.hpp.
struct LoopSpec {
  std::uint64_t count = 0;   // iterations
  int kind = 1;              // ScheduleKind (auto is static)
  int work = ompt_work_loop;  // what an OMPT tool is told it is (0: nothing, doacross bookkeeping)
  std::uint64_t chunk = 0;   // 0: default
  bool ordered = false;
  std::uint64_t mem_size = 0;            // GOMP_loop_start's per-work-share memory (0: none)
  unsigned ndims = 0;                    // doacross dimensions
  const std::uint64_t* dims = nullptr;   // doacross iteration counts per dimension
  std::uint64_t base = 0, step = 1;      // the ABI's start and increment (iteration i is base + i * step)
  std::uintptr_t* reductions = nullptr;  // task reductions of the work share (GCC's descriptor, tasks.hpp)
};

// A loop, sections or single construct shared by the team (one ring slot).
struct WorkShare {
  std::mutex m;
  long id = -1;            // work-share sequence number held, -1 free
  long next_id = 0;        // the sequence number that may take the slot next
  std::atomic<int> left{0};
  // Loops (iteration space normalised to [0, count)), sections (count = sections).
  std::uint64_t count = 0;
  std::uint64_t chunk = 1;
  std::uint64_t chunks = 0;             // static with a chunk size: ceil(count / chunk), divided once
  int kind = 1;                         // ScheduleKind
  int work = ompt_work_loop;            // LoopSpec::work, for the OMPT work events
  std::atomic<std::uint64_t> next{0};   // dynamic / guided hand-out position
  std::mutex handout;                   // ordered hand-out (position and sequence move together)
  std::uint64_t seq_handed = 0;
  alignas(64) std::atomic<std::uint32_t> ordered_turn{0};  // chunk sequence allowed in `ordered`
  std::atomic<std::uint32_t> ordered_sleepers{0};          // threads asleep (or about to be) on ordered_turn
  std::atomic<bool> cancelled{false};  // cancel for / sections
  std::vector<char> mem;                // GOMP_loop_start's per-work-share memory
  // Doacross: per outer iteration, how far (flattened inner index + 1) posts reached.
  std::unique_ptr<std::atomic<std::uint64_t>[]> doacross;
  std::vector<std::uint64_t> dims;
  std::uintptr_t* task_reductions = nullptr;  // the first thread's descriptor: its copies are shared
};

constexpr int kWorkShareRing = 64;

// A thread's position in its current loop.
struct LoopCursor {
  WorkShare* ws = nullptr;
  std::uint64_t static_next = 0;   // static: next chunk number of this thread
  std::uint64_t seq = 0;           // ordered: sequence of the chunk being run
  bool has_chunk = false;
  bool ordered = false;
  std::uint64_t base = 0, step = 1;  // from LoopSpec
};

// The per-team barrier: arrivals counted, a generation word to sleep on.
struct Barrier {
  alignas(64) std::atomic<std::uint32_t> arrived{0};
  alignas(64) std::atomic<std::uint32_t> generation{0};
  std::atomic<std::uint32_t> event{0};     // bumped on release and on new tasks (futex word)
  std::atomic<int> sleepers{0};
};

struct Team {
  int nthreads = 1;
  int fork_fanout = 2;    // the fork's wake-up tree: each thread wakes this many (runtime.cpp)
  int level = 0;          // nesting level of the team (0: the initial team)
  int active_level = 0;   // active (more than one thread) levels enclosing and including it
  Team* parent = nullptr;
  int parent_thread_num = 0;  // thread number of the primary thread in the parent team
  // The league this team's threads belong to (host teams construct):
  // inherited by nested teams, reset to one team by a target region.
  int team_num = 0, num_teams = 1;
  // Contention group (what thread-limit-var bounds): the team of an initial
  // thread or of a target region's initial task is a group's root, and
  // counts in busy_workers the workers its regions hold (reserved at the
  // fork with a compare-and-swap, released at the join, so nested regions
  // forked at the same time never exceed the limit together).
  Team* group_root = this;
  std::atomic<int> busy_workers{0};  // meaningful in a root only
  int reserved_workers = 0;          // this region's share of group_root->busy_workers
  std::vector<ThreadState*> threads;
  Barrier barrier;
  alignas(64) std::atomic<int> left{0};  // workers that finished the region (join)
  std::atomic<int> join_arrived{0};      // threads that reached the region's end (its implicit barrier)
  std::atomic<int> join_parked{0};       // workers holding their join_parked token (runtime.cpp, worker_join)
  WorkShare ws[kWorkShareRing];
  // Work shares the last region started (the highest sequence number + 1):
  // the next region resets only those slots of the ring.
  std::atomic<long> ws_started{kWorkShareRing};
  // single constructs of this region claimed so far (workshare.cpp's
  // single_start: the k-th single goes to the thread that moves it from k-1 to k).
  alignas(64) std::atomic<long> singles_claimed{0};
  void* copyprivate = nullptr;
  std::atomic<bool> cancel_parallel{false};
  // cancel for / sections of a loop without a work share (libomp's static
  // schedules are computed by each thread alone): cleared by the barrier
  // that ends the construct, by the last thread to arrive (none is looking).
  std::atomic<bool> cancel_static_loop{false};
  std::unique_ptr<struct TaskQueue> tasks;  // deferred tasks of this team (tasks.hpp)
  // The libomp ABI's task reductions with the task modifier, one per kind
  // (0 parallel, 1 work share), shared by the team's threads, and how many
  // threads have finished with them (kmp/task_reduction.cpp).
  std::atomic<void*> kmp_task_red[2] = {nullptr, nullptr};
  std::atomic<int> kmp_task_red_done[2] = {0, 0};
  void (*fn)(void*) = nullptr;
  void* data = nullptr;
  Icvs child_icvs;  // each thread's implicit task starts with these (the worker sets up its own)
  // Observed regions (observe.hpp): when the fork began (trace clock; 0: not traced).
  std::uint64_t obs_t0 = 0;
  // OMPT (ompt.hpp): the tool's data for the region, the task that
  // encountered it and the call's return address (set only when observed).
  ompt_data_t ompt_parallel{};
  Task* encountering = nullptr;
  const void* codeptr = nullptr;
  bool has_initial_loop = false;
  LoopSpec initial_loop;
};

// One OS thread taking part in OpenMP.
struct ThreadState {
  // Written by the thread itself at every region (a worker's team, task and
  // per-region counters): the fork's inputs below are on lines of their own,
  // which the primary reads at every fork without taking them from the worker.
  Team* team = nullptr;
  Task* task = nullptr;              // the task running now (implicit or explicit)
  std::unique_ptr<Task> implicit;    // this thread's implicit task in `team`
  long ws_count = 0;                 // work shares entered in the current team region
  long single_count = 0;             // single constructs entered in the current team region
  LoopCursor loop;
  std::unique_ptr<Team> own_team;    // initial team when this is an initial thread
  // The teams this thread forks, one per nesting depth, never freed: a
  // worker's last touches of a team it left (wake-ups) may come after the
  // join, so a team's memory must outlive the region.
  std::vector<std::unique_ptr<Team>> forked_teams;
  std::vector<int> bound_cpus;       // what the OS thread is bound to now (empty: not bound by us)
  bool is_worker = false;
  // The fork's inputs: what the primary that takes this worker sets (only
  // when it changes, so that a team forked again and again writes nothing
  // here) and the worker reads.
  alignas(64) PlaceList partition;   // place-partition-var
  int place = -1;                    // index in runtime places, -1 unbound
  int num = 0;                       // thread number in `team`
  std::vector<int> want_cpus;        // where the team that woke this worker wants it (empty: leave as is)
  // The team a fork woke this worker for: the worker makes it its `team`
  // (which it clears when it leaves).
  Team* next_team = nullptr;
  // Pool word: 0: wait; kWakeRun: run the team the fork set up (or
  // retire); kWakeRecheck: a task appeared while this worker was parked at
  // its team's join; kWakeSleeping: the worker sleeps on it (futex).
  alignas(64) std::atomic<std::uint32_t> wake{0};
  std::atomic<bool> join_parked{false};  // parked at the join, the primary may claim it (worker_join)
  std::vector<ThreadState*> last_workers;  // the workers this thread's last team used, by slot
  bool retire = false;   // set before a wake-up: the worker's OS thread ends (omp_pause_resource)
  // What this thread keeps while it leads nested teams (runtime.cpp): saved
  // enclosing states, spare implicit tasks, the last placements. Created on
  // its first fork and, like the ThreadState, never freed.
  struct ForkStack* fork_stack = nullptr;
  // Traced or observed by a tool (observe.hpp): the trace session's ring,
  // bit 0 set when an OMPT tool is attached. Every event site tests it once.
  detail::TraceThreadSlot observe;
  ompt_data_t ompt_thread{};  // the tool's data for this thread (OMPT)
  // In the pool (under its lock). The last line, its own: the primaries that
  // take and return the worker write it at every fork and join, and the
  // worker spins on `wake` meanwhile.
  alignas(64) std::atomic<bool> idle{false};
};

inline constexpr std::uint32_t kWakeRun = 1, kWakeRecheck = 2, kWakeSleeping = 3;

struct Runtime {
  Settings settings;
  PlaceList places;              // settings.places or canopy's default (one per core)
  bool places_set = false;       // OMP_PLACES / GOMP_CPU_AFFINITY given
  int usable_pus = 1;
  int num_cores = 1;
  std::atomic<int> spin_count{20000};  // polls before sleeping; kmp_set_blocktime may change it while threads wait
  // Written by the primaries at every fork and join: a line of their own
  // (the pool's lock in the waiters' line below made every fork and join
  // take that line from the workers that had just read it).
  alignas(64) std::atomic<int> live_threads{1};
  std::atomic<int> idle_workers{0};  // of live_threads, those in the pool (not in any team)
  std::mutex pool_mutex;
  std::vector<ThreadState*> pool;   // idle workers
  // What every wait reads (futex.hpp's oversubscribed(), spin_budget()),
  // derived from the counters above and spin_count by refresh_wait_state:
  // stored only when it changes, so the waiters' reads stay hits.
  alignas(64) std::atomic<bool> oversubscribed_now{false};
  std::atomic<int> spins_now{20000};
  Icvs initial_icvs;
};

Runtime& runtime();
// The calling thread's state if it has one (never creates it).
ThreadState* current_thread() noexcept;
// The calling thread's state (runtime.cpp; initial-exec and constinit: read
// inline, without a call to a TLS wrapper).
extern __attribute__((tls_model("initial-exec"), visibility("hidden"))) constinit thread_local ThreadState* tls_thread;
// The calling thread's state, created on first use (an initial thread):
// inline, as every entry point asks for it, often several times.
ThreadState& first_this_thread();
inline ThreadState& this_thread() {
  if (ThreadState* ts = tls_thread) [[likely]]
    return *ts;
  return first_this_thread();
}
Icvs& current_icvs();

// Fork a team running fn(data) on `requested` threads (0: nthreads-var),
// proc_bind from the clause (0: none); the caller is thread 0. Joins.
// `codeptr`: the return address of the ABI's entry point (OMPT's codeptr_ra).
void fork_join(void (*fn)(void*), void* data, unsigned requested, unsigned proc_bind,
               const LoopSpec* loop = nullptr, const void* codeptr = nullptr);
// Split form (GOMP_parallel_start / _end).
void fork_start(void (*fn)(void*), void* data, unsigned requested, unsigned proc_bind,
                const LoopSpec* loop = nullptr, const void* codeptr = nullptr);
void join_end();

// omp_pause_resource on the host: the idle workers of the pool end their OS
// threads (so their threadprivate data goes with them); the next regions
// start new ones. Returns how many were released.
int release_idle_workers();

// The teams construct on the host: `num_teams` teams (0: nteams-var, else
// 1) of one initial thread each, run one after another on the caller, each
// seeing its team number (omp_get_team_num) and thread_limit (0:
// teams-thread-limit-var). A league of concurrent initial threads is not
// done: the teams share the caller's thread.
void host_teams(void (*fn)(void*), void* data, unsigned num_teams, unsigned thread_limit);

void wake_team_waiters(Team& team);  // new tasks or a worker leaving: wake sleepers
// Runs fn(data) as a new initial task in a team of one at level 0 (the host
// fallback of a target region), then restores the caller's state.
void run_as_initial_task(void (*fn)(void*), void* data, int thread_limit = 0);

void team_barrier();                 // a barrier of the current team (tasks run while waiting)
bool team_barrier_cancellable();     // returns true when the parallel region was cancelled

// The calling thread's OMP_AFFINITY_FORMAT line (format: nullptr or "" for
// affinity-format-var); OMP_DISPLAY_AFFINITY's display at a region's start.
std::string thread_affinity(const char* format);
void display_affinity_if_changed(ThreadState& ts);

[[noreturn]] void fatal(const char* fmt, ...);

}  // namespace canopy::omp
