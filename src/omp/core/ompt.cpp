// OMPT's tool side (ompt.hpp): finding and starting a tool, the entry points
// it looks up by name (ompt_set_callback and the inquiry functions), and
// finalizing it at exit. Types and constants come from the standard header
// omp-tools.h (LLVM's copy); the events themselves are dispatched from
// observe.cpp.
//
// Discovery (OpenMP 5.1, 4.2.1): OMP_TOOL=disabled turns it off; otherwise
// the first ompt_start_tool found in the process's global scope (the
// program or a library loaded with it), then each library of
// OMP_TOOL_LIBRARIES (colon-separated) in turn, dlopen'ed and asked for its
// own ompt_start_tool; the first non-null result is the tool. Its
// initialize gets the lookup function; a zero return detaches it.
#include "ompt.hpp"

#include <dlfcn.h>
#include <sched.h>
#include <strings.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "futex.hpp"
#include "tasks.hpp"

extern "C" {
int omp_get_num_places(void);
int omp_get_place_num_procs(int);
void omp_get_place_proc_ids(int, int*);
int omp_get_place_num(void);
int omp_get_partition_num_places(void);
void omp_get_partition_place_nums(int*);
}

namespace canopy::omp::ompt {

std::atomic<bool> active{false};
Callbacks cb;

namespace {

using StartTool = ompt_start_tool_result_t* (*)(unsigned int, const char*);

ompt_start_tool_result_t* tool = nullptr;
std::atomic<std::uint64_t> next_id{1};

// The states canopy reports (ompt_get_state): it does not track waits, so
// a thread is working in a parallel region or outside one.
struct State {
  int value;
  const char* name;
};
constexpr State kStates[] = {{ompt_state_work_serial, "ompt_state_work_serial"},
                             {ompt_state_work_parallel, "ompt_state_work_parallel"},
                             {ompt_state_undefined, "ompt_state_undefined"}};

// ompt_set_callback: the events canopy dispatches, and how reliably.
template <class T>
ompt_set_result_t store(T& slot, ompt_callback_t fn) {
  slot = reinterpret_cast<T>(fn);
  return ompt_set_always;
}

ompt_set_result_t set_callback(ompt_callbacks_t event, ompt_callback_t fn) {
  switch (event) {
    case ompt_callback_thread_begin: return store(cb.thread_begin, fn);
    case ompt_callback_thread_end: return store(cb.thread_end, fn);
    case ompt_callback_parallel_begin: return store(cb.parallel_begin, fn);
    case ompt_callback_parallel_end: return store(cb.parallel_end, fn);
    case ompt_callback_task_create: return store(cb.task_create, fn);
    case ompt_callback_task_schedule: return store(cb.task_schedule, fn);
    case ompt_callback_implicit_task: return store(cb.implicit_task, fn);
    case ompt_callback_sync_region: return store(cb.sync_region, fn);
    case ompt_callback_sync_region_wait: return store(cb.sync_region_wait, fn);
    case ompt_callback_dependences: return store(cb.dependences, fn);
    case ompt_callback_work: return store(cb.work, fn);
    default:
      break;
  }
  if (event >= ompt_callback_thread_begin && event <= ompt_callback_error) return ompt_set_never;
  return ompt_set_error;
}

int get_callback(ompt_callbacks_t event, ompt_callback_t* fn) {
  ompt_callback_t f = nullptr;
  switch (event) {
    case ompt_callback_thread_begin: f = reinterpret_cast<ompt_callback_t>(cb.thread_begin); break;
    case ompt_callback_thread_end: f = reinterpret_cast<ompt_callback_t>(cb.thread_end); break;
    case ompt_callback_parallel_begin: f = reinterpret_cast<ompt_callback_t>(cb.parallel_begin); break;
    case ompt_callback_parallel_end: f = reinterpret_cast<ompt_callback_t>(cb.parallel_end); break;
    case ompt_callback_task_create: f = reinterpret_cast<ompt_callback_t>(cb.task_create); break;
    case ompt_callback_task_schedule: f = reinterpret_cast<ompt_callback_t>(cb.task_schedule); break;
    case ompt_callback_implicit_task: f = reinterpret_cast<ompt_callback_t>(cb.implicit_task); break;
    case ompt_callback_sync_region: f = reinterpret_cast<ompt_callback_t>(cb.sync_region); break;
    case ompt_callback_sync_region_wait: f = reinterpret_cast<ompt_callback_t>(cb.sync_region_wait); break;
    case ompt_callback_dependences: f = reinterpret_cast<ompt_callback_t>(cb.dependences); break;
    case ompt_callback_work: f = reinterpret_cast<ompt_callback_t>(cb.work); break;
    default: break;
  }
  if (!f) return 0;
  *fn = f;
  return 1;
}

ompt_data_t* get_thread_data() {
  ThreadState* ts = current_thread();
  return ts ? &ts->ompt_thread : nullptr;
}

int get_num_procs() { return runtime().usable_pus; }
int get_num_places() { return omp_get_num_places(); }
int get_place_proc_ids(int place, int ids_size, int* ids) {
  const int n = omp_get_place_num_procs(place);
  if (n > 0 && ids && ids_size >= n) omp_get_place_proc_ids(place, ids);
  return n;
}
int get_place_num() { return current_thread() ? omp_get_place_num() : -1; }
int get_partition_place_nums(int size, int* nums) {
  if (!current_thread()) return -1;
  const int n = omp_get_partition_num_places();
  if (nums && size >= n) omp_get_partition_place_nums(nums);
  return n;
}
int get_proc_id() { return sched_getcpu(); }

int get_state(ompt_wait_id_t* wait_id) {
  ThreadState* ts = current_thread();
  if (wait_id) *wait_id = 0;
  if (!ts) return ompt_state_undefined;
  if (ts->is_worker && ts->idle.load(std::memory_order_relaxed)) return ompt_state_idle;
  return ts->team && ts->team->level > 0 ? ompt_state_work_parallel : ompt_state_work_serial;
}

int enumerate_states(int current, int* next, const char** name) {
  constexpr int n = sizeof kStates / sizeof kStates[0];
  int i = 0;
  if (current != ompt_state_undefined) {
    while (i < n && kStates[i].value != current) ++i;
    ++i;
  }
  if (current == ompt_state_undefined) i = 0;
  if (i >= n) return 0;
  *next = kStates[i].value;
  *name = kStates[i].name;
  return i + 1 < n ? 1 : 0;
}

int enumerate_mutex_impls(int, int*, const char**) { return 0; }

// The team a thread's task at `level` ancestors up is bound to, walking
// out through explicit tasks' parents and each implicit task's enclosing
// team (the task that encountered its region).
struct Where {
  Task* task = nullptr;
  Team* team = nullptr;
  int thread_num = 0;
};
bool task_at(int level, Where& w) {
  ThreadState* ts = current_thread();
  if (!ts || !ts->task || level < 0) return false;
  w.task = ts->task;
  w.team = ts->team;
  w.thread_num = ts->num;
  for (int i = 0; i < level; ++i) {
    Task* t = w.task;
    if (!t->implicit) {
      w.task = t->parent;
    } else {
      Team* team = t->team;
      if (!team || !team->parent || !team->encountering) return false;
      w.thread_num = team->parent_thread_num;
      w.task = team->encountering;
      w.team = team->parent;
    }
    if (!w.task) return false;
  }
  return true;
}

int get_task_info(int level, int* flags, ompt_data_t** task_data, ompt_frame_t** frame, ompt_data_t** parallel_data,
                  int* thread_num) {
  Where w;
  if (!task_at(level, w)) return 0;
  if (flags) {
    int f = w.task->implicit ? (w.team && w.team->level == 0 ? ompt_task_initial : ompt_task_implicit) : ompt_task_explicit;
    if (w.task->undeferred) f |= ompt_task_undeferred;
    if (w.task->final_task) f |= ompt_task_final;
    *flags = f;
  }
  if (task_data) *task_data = &w.task->ompt_task;
  if (frame) *frame = no_frame();
  if (parallel_data) *parallel_data = w.team ? &w.team->ompt_parallel : nullptr;
  if (thread_num) *thread_num = w.thread_num;
  return 2;
}

int get_parallel_info(int level, ompt_data_t** parallel_data, int* team_size) {
  ThreadState* ts = current_thread();
  if (!ts || !ts->team || level < 0) return 0;
  Team* team = ts->team;
  for (int i = 0; i < level && team; ++i) team = team->parent;
  if (!team) return 0;
  if (parallel_data) *parallel_data = &team->ompt_parallel;
  if (team_size) *team_size = team->nthreads;
  return 2;
}

int get_task_memory(void** addr, std::size_t* size, int) {
  if (addr) *addr = nullptr;
  if (size) *size = 0;
  return 0;  // canopy does not say where a task's data lives
}

int get_num_devices() { return 0; }  // host only: no target device

std::uint64_t get_unique_id() { return next_id.fetch_add(1, std::memory_order_relaxed); }

std::once_flag finalized;
void finalize_now();
void finalize_tool() { std::call_once(finalized, finalize_now); }

ompt_interface_fn_t lookup(const char* name) {
  struct Entry {
    const char* name;
    ompt_interface_fn_t fn;
  };
#define CANOPY_OMPT_ENTRY(n, f) {n, reinterpret_cast<ompt_interface_fn_t>(f)}
  static const Entry entries[] = {
      CANOPY_OMPT_ENTRY("ompt_set_callback", set_callback),
      CANOPY_OMPT_ENTRY("ompt_get_callback", get_callback),
      CANOPY_OMPT_ENTRY("ompt_get_thread_data", get_thread_data),
      CANOPY_OMPT_ENTRY("ompt_get_num_procs", get_num_procs),
      CANOPY_OMPT_ENTRY("ompt_get_num_places", get_num_places),
      CANOPY_OMPT_ENTRY("ompt_get_place_proc_ids", get_place_proc_ids),
      CANOPY_OMPT_ENTRY("ompt_get_place_num", get_place_num),
      CANOPY_OMPT_ENTRY("ompt_get_partition_place_nums", get_partition_place_nums),
      CANOPY_OMPT_ENTRY("ompt_get_proc_id", get_proc_id),
      CANOPY_OMPT_ENTRY("ompt_get_state", get_state),
      CANOPY_OMPT_ENTRY("ompt_get_parallel_info", get_parallel_info),
      CANOPY_OMPT_ENTRY("ompt_get_task_info", get_task_info),
      CANOPY_OMPT_ENTRY("ompt_get_task_memory", get_task_memory),
      CANOPY_OMPT_ENTRY("ompt_get_num_devices", get_num_devices),
      CANOPY_OMPT_ENTRY("ompt_get_unique_id", get_unique_id),
      CANOPY_OMPT_ENTRY("ompt_enumerate_states", enumerate_states),
      CANOPY_OMPT_ENTRY("ompt_enumerate_mutex_impls", enumerate_mutex_impls),
      CANOPY_OMPT_ENTRY("ompt_finalize_tool", finalize_tool),
  };
#undef CANOPY_OMPT_ENTRY
  if (!name) return nullptr;
  for (const Entry& e : entries)
    if (std::strcmp(e.name, name) == 0) return e.fn;
  return nullptr;  // device tracing, OMPD and the rest: not available
}

// OpenMP 5.1 (the version canopy's runtime reports as _OPENMP's value for tools).
constexpr unsigned kOmpVersion = 202011;
constexpr const char* kRuntimeVersion = "canopy OpenMP runtime (libgomp and libomp ABIs)";

ompt_start_tool_result_t* call_start(StartTool start) {
  return start ? start(kOmpVersion, kRuntimeVersion) : nullptr;
}

ompt_start_tool_result_t* find_tool() {
  const char* setting = std::getenv("OMP_TOOL");
  if (setting && strcasecmp(setting, "disabled") == 0) return nullptr;
  if (setting && *setting && strcasecmp(setting, "enabled") != 0)
    std::fprintf(stderr, "canopy-omp: OMP_TOOL='%s': expected enabled or disabled; using the default\n", setting);
  if (ompt_start_tool_result_t* r = call_start(reinterpret_cast<StartTool>(dlsym(RTLD_DEFAULT, "ompt_start_tool"))))
    return r;
  const char* libs = std::getenv("OMP_TOOL_LIBRARIES");
  if (!libs) return nullptr;
  const std::string list = libs;
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    const std::string lib = list.substr(start, end - start);
    start = end + 1;
    if (lib.empty()) continue;
    void* h = dlopen(lib.c_str(), RTLD_LAZY | RTLD_LOCAL);
    if (!h) continue;  // as the specification says: try the next one
    if (ompt_start_tool_result_t* r = call_start(reinterpret_cast<StartTool>(dlsym(h, "ompt_start_tool")))) return r;
    dlclose(h);
  }
  return nullptr;
}

void finalize_at_exit() { finalize_tool(); }

}  // namespace

ompt_frame_t* no_frame() {
  static ompt_frame_t frame{};
  return &frame;
}

bool start() {
  ompt_start_tool_result_t* r = find_tool();
  if (!r || !r->initialize) return false;
  tool = r;
  active.store(true);  // before initialize: the tool may call ompt_set_callback and the inquiry functions
  if (!r->initialize(lookup, /*initial_device_num=*/0, &r->tool_data)) {
    active.store(false);
    cb = Callbacks{};
    tool = nullptr;
    return false;
  }
  std::atexit(finalize_at_exit);
  return true;
}

namespace {

// At exit (or ompt_finalize_tool): the idle workers end (thread_end on
// each), the initial thread's initial task and the thread end, then the
// tool's finalize.
void finalize_now() {
  if (!active.load()) return;
  ThreadState* ts = current_thread();
  const int live = runtime().live_threads.load(std::memory_order_acquire);
  const int released = release_idle_workers();
  // Wait (a while at most) for the released workers to report their end.
  for (int i = 0; i < 20000 && runtime().live_threads.load(std::memory_order_acquire) > live - released; ++i)
    yield_cpu();
  if (ts && ts->team && ts->team->level == 0 && ts->task) {
    if (cb.implicit_task)
      cb.implicit_task(ompt_scope_end, nullptr, &ts->task->ompt_task, 0, 1, ompt_task_initial);
    if (cb.thread_end) cb.thread_end(&ts->ompt_thread);
  }
  if (tool && tool->finalize) tool->finalize(&tool->tool_data);
  active.store(false);
}

}  // namespace

}  // namespace canopy::omp::ompt
