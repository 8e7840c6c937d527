// Explicit tasks of the libomp ABI: __kmpc_omp_task_alloc gives the
// compiler a kmp_task_t (in the core task's own data block, behind a small
// header), the compiler fills in its data, then __kmpc_omp_task* queue it,
// or __kmpc_omp_task_begin_if0 / complete_if0 bracket its undeferred run.
// Dependences are converted to the core's (GCC's) layout; detach and proxy
// tasks complete through omp_fulfill_event on the core task.
#include "task.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include "../core/observe.hpp"
#include "../core/runtime.hpp"
#include "abi.hpp"

using namespace canopy::omp;
using namespace canopy::omp::kmp;

namespace canopy::omp::kmp {

namespace {

constexpr kmp_int32 kTaskProxy = 16;

void run_task(void* arg) {
  auto* head = static_cast<TaskHead*>(arg);
  auto* task = reinterpret_cast<kmp_task_t*>(head + 1);
  const kmp_int32 gtid = global_thread_num();
  task->routine(gtid, task);
  if (head->flags & kTaskDestructors) task->data1.destructors(gtid, task);
}

// Traces and tools name a task by clang's task entry, not run_task.
[[maybe_unused]] const bool task_registered = (register_code_of(run_task,
                                               [](void* arg) -> const void* {
                                                 auto* task = reinterpret_cast<kmp_task_t*>(static_cast<TaskHead*>(arg) + 1);
                                                 return reinterpret_cast<const void*>(task->routine);
                                               }),
                              true);

unsigned core_flags(kmp_int32 flags) {
  unsigned f = 0;
  if (flags & kTaskFinal) f |= kTaskFlagFinal;
  if (flags & (kTaskDetachable | kTaskProxy)) f |= kTaskFlagDetach;  // completes when fulfilled
  return f;
}

std::size_t round_up(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

}  // namespace

kmp_task_t* alloc_task(kmp_int32 flags, std::size_t sizeof_task, std::size_t sizeof_shareds, kmp_routine_entry_t entry) {
  sizeof_task = std::max(sizeof_task, sizeof(kmp_task_t));
  const std::size_t task_bytes = round_up(sizeof_task, sizeof(void*));
  TaskSpec spec;
  spec.fn = run_task;
  spec.arg_size = static_cast<long>(sizeof(TaskHead) + task_bytes + sizeof_shareds);
  spec.arg_align = alignof(TaskHead);
  spec.flags = core_flags(flags);
  void* data = nullptr;
  Task* core = task_alloc(spec, &data);
  auto* head = new (data) TaskHead;
  head->core = core;
  head->flags = flags;
  head->sizeof_task = sizeof_task;
  head->sizeof_shareds = sizeof_shareds;
  auto* task = reinterpret_cast<kmp_task_t*>(head + 1);
  std::memset(task, 0, sizeof(kmp_task_t));
  task->shareds = sizeof_shareds ? reinterpret_cast<char*>(task) + task_bytes : nullptr;
  task->routine = entry;
  return task;
}

void submit(kmp_task_t* task, void** depend, bool if_clause, unsigned depend_flags) {
  TaskHead* head = head_of(task);
  if (head->flags & kTaskPriority)
    head->core->priority = std::clamp(task->data2.priority, 0, runtime().settings.max_task_priority);
  TaskSpec spec;
  spec.flags = core_flags(head->flags) | depend_flags;
  spec.depend = depend;
  spec.if_clause = if_clause;
  task_submit(head->core, spec);
}

}  // namespace canopy::omp::kmp

namespace {

// libomp's dependence record; clang 14's flags: in 1, out and inout 3, mutexinoutset 4.
struct kmp_depend_info_t {
  std::intptr_t base_addr;
  std::size_t len;
  std::uint8_t flags;
};

// GCC's layout (what the core parses): {n, nout, out addresses..., in
// addresses...} (`in` is flags 1; the others serialise); `with_len` appends
// each item's bytes in the same order (kTaskFlagDependLen: automatic
// affinity weighs the task-to-task matrix with them). In place for the
// usual few items: no malloc per task.
using GompDepend = SmallVec<void*, 24>;
void gomp_depend(GompDepend& d, kmp_int32 ndeps, const kmp_depend_info_t* list, kmp_int32 nnoalias,
                 const kmp_depend_info_t* noalias, bool with_len = false) {
  const kmp_int32 n = ndeps + nnoalias;
  auto item = [&](kmp_int32 i) -> const kmp_depend_info_t& { return i < ndeps ? list[i] : noalias[i - ndeps]; };
  std::uintptr_t nout = 0;
  for (kmp_int32 i = 0; i < n; ++i) nout += item(i).flags != 1;
  d.push_back(reinterpret_cast<void*>(static_cast<std::uintptr_t>(n)));
  d.push_back(reinterpret_cast<void*>(nout));
  for (int pass = 0; pass < (with_len ? 2 : 1); ++pass)
    for (const bool in : {false, true})
      for (kmp_int32 i = 0; i < n; ++i)
        if ((item(i).flags == 1) == in)
          d.push_back(reinterpret_cast<void*>(pass == 0 ? item(i).base_addr : static_cast<std::uintptr_t>(item(i).len)));
}

}  // namespace

CANOPY_KMP kmp_task_t* __kmpc_omp_task_alloc(ident_t*, kmp_int32, kmp_int32 flags, std::size_t sizeof_kmp_task_t,
                                             std::size_t sizeof_shareds, kmp_routine_entry_t task_entry) {
  return alloc_task(flags, sizeof_kmp_task_t, sizeof_shareds, task_entry);
}
// A target task on the host: an ordinary task.
CANOPY_KMP kmp_task_t* __kmpc_omp_target_task_alloc(ident_t*, kmp_int32, kmp_int32 flags, std::size_t sizeof_kmp_task_t,
                                                    std::size_t sizeof_shareds, kmp_routine_entry_t task_entry,
                                                    kmp_int64) {
  return alloc_task(flags, sizeof_kmp_task_t, sizeof_shareds, task_entry);
}
CANOPY_KMP kmp_int32 __kmpc_omp_task(ident_t*, kmp_int32, kmp_task_t* task) {
  submit(task, nullptr);
  return 0;
}
// Untied task parts: every canopy task is tied, a part is a task.
CANOPY_KMP kmp_int32 __kmpc_omp_task_parts(ident_t*, kmp_int32, kmp_task_t* task) {
  submit(task, nullptr);
  return 0;
}
CANOPY_KMP kmp_int32 __kmpc_omp_task_with_deps(ident_t*, kmp_int32, kmp_task_t* task, kmp_int32 ndeps,
                                               kmp_depend_info_t* dep_list, kmp_int32 ndeps_noalias,
                                               kmp_depend_info_t* noalias_dep_list) {
  if (ndeps + ndeps_noalias == 0 || !task_dependences_matter(core_flags(head_of(task)->flags) & kTaskFlagDetach)) {
    submit(task, nullptr);
    return 0;
  }
  GompDepend d;
  gomp_depend(d, ndeps, dep_list, ndeps_noalias, noalias_dep_list, true);
  submit(task, d.data(), true, kTaskFlagDepend | kTaskFlagDependLen);
  return 0;
}
// taskwait depend(...) and the dependences of an if(0) task: wait for them.
CANOPY_KMP void __kmpc_omp_wait_deps(ident_t*, kmp_int32, kmp_int32 ndeps, kmp_depend_info_t* dep_list,
                                     kmp_int32 ndeps_noalias, kmp_depend_info_t* noalias_dep_list) {
  if (ndeps + ndeps_noalias == 0) return;
  GompDepend d;
  gomp_depend(d, ndeps, dep_list, ndeps_noalias, noalias_dep_list);
  taskwait_depend(d.data());
}
CANOPY_KMP void __kmpc_omp_task_begin_if0(ident_t*, kmp_int32, kmp_task_t* task) {
  task_begin_inline(head_of(task)->core);
}
CANOPY_KMP void __kmpc_omp_task_complete_if0(ident_t*, kmp_int32 gtid, kmp_task_t* task) {
  TaskHead* head = head_of(task);
  if (head->flags & kTaskDestructors) task->data1.destructors(gtid, task);
  task_end_inline(head->core);
}
CANOPY_KMP kmp_int32 __kmpc_omp_taskwait(ident_t*, kmp_int32) {
  taskwait();
  return 0;
}
CANOPY_KMP kmp_int32 __kmpc_omp_taskyield(ident_t*, kmp_int32, int) {
  taskyield();
  return 0;
}

// detach(event): the event handle is the core task (omp_fulfill_event takes it).
CANOPY_KMP void* __kmpc_task_allow_completion_event(ident_t*, kmp_int32, kmp_task_t* task) {
  return head_of(task)->core;
}
// Proxy tasks (target nowait): complete when the device says so, here at once.
CANOPY_KMP void __kmpc_proxy_task_completed(kmp_int32, kmp_task_t* task) { fulfill_event(head_of(task)->core); }
CANOPY_KMP void __kmpc_proxy_task_completed_ooo(kmp_task_t* task) { fulfill_event(head_of(task)->core); }

CANOPY_KMP kmp_uint64 __kmpc_get_taskid() { return this_thread().task->id; }
CANOPY_KMP kmp_uint64 __kmpc_get_parent_taskid() {
  Task* p = this_thread().task->parent;
  return p ? p->id : 0;
}
