/* A small OMPT tool (OpenMP 5.x, omp-tools.h) that counts what the runtime
   reports and checks that it is consistent, for tests/omp/ompt_test.py:
   loaded through OMP_TOOL_LIBRARIES, it registers the callbacks, and at
   finalize prints one line "ompt: key=value ..." with the counts, or
   "ompt: FAIL <why>" for the first inconsistency it saw:
   - thread_begin/thread_end balanced per thread (thread data set at begin);
   - every parallel region begins once and ends once (its data set at begin);
     implicit tasks name a region that has begun and not ended;
   - every explicit task is created once, switched to once and completed once;
   - sync regions and implicit tasks begin and end properly nested on each
     thread (a per-thread stack), waits inside their sync region;
   - ompt_get_thread_data, ompt_get_parallel_info and ompt_get_task_info
     answer at a taskwait or taskgroup with the data the callbacks set;
   - work-sharing constructs (loop, sections, single, taskloop) begin and
     end properly nested on each thread, inside an implicit task, with the
     data of that task and its region;
   - ompt_set_callback says ompt_set_always for what it dispatches and
     ompt_set_never for what the runtime does not have. */
#include <omp-tools.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static ompt_set_callback_t set_callback;
static ompt_get_thread_data_t get_thread_data;
static ompt_get_parallel_info_t get_parallel_info;
static ompt_get_task_info_t get_task_info;

static atomic_long next_id = 1;
static atomic_long threads_begun, threads_ended, initial_threads, worker_threads;
static atomic_long parallels_begun, parallels_ended, parallel_threads;
static atomic_long implicit_begun, implicit_ended, initial_tasks;
static atomic_long tasks_created, tasks_switched, tasks_completed, tasks_with_deps, dependences;
static atomic_long barriers, taskwaits, taskgroups, join_barriers, waits, inquiries_ok;
/* Work-sharing constructs begun, by ompt_work_t (ended ones: checked by the nesting). */
#define WORK_KINDS 16
static atomic_long work_begun[WORK_KINDS], work_ended[WORK_KINDS];
static char failure[256];
static atomic_int failed;

static void fail(const char* why) {
  if (atomic_exchange(&failed, 1) == 0) snprintf(failure, sizeof failure, "%s", why);
}

/* Per-thread nesting: what begun scope each level of the stack is. In the
   static TLS block (initial-exec, 264 bytes of glibc's surplus for modules
   loaded later): a dlopen'ed module's dynamic TLS is freed by glibc when a
   new thread reuses an ended one's stack, a synchronisation ThreadSanitizer
   does not see (it reported the tool's last write as a race). */
#define DEPTH 64
#define TOOL_TLS static _Thread_local __attribute__((tls_model("initial-exec")))
TOOL_TLS int stack[DEPTH];
TOOL_TLS int depth;
TOOL_TLS int thread_started;
static void push(int what) {
  if (depth == DEPTH) return fail("nesting deeper than 64");
  stack[depth++] = what;
}
static void pop(int what, const char* name) {
  if (depth == 0 || stack[depth - 1] != what) {
    char why[128];
    snprintf(why, sizeof why, "%s ends, but the innermost open scope is %d", name, depth ? stack[depth - 1] : -1);
    return fail(why);
  }
  --depth;
}
enum { kImplicit = 1, kSync = 100, kWait = 200, kWork = 300 };

/* Explicit tasks: value = id * 16 + 8 + state (1 created, 2 running, 3
   completed); implicit tasks id * 16. */
#define EXPLICIT(d) ((d) && ((d)->value & 8))
#define STATE(d) ((d)->value & 3)
static void on_thread_begin(ompt_thread_t type, ompt_data_t* data) {
  if (thread_started) fail("thread_begin twice on one thread");
  thread_started = 1;
  data->value = atomic_fetch_add(&next_id, 1);
  atomic_fetch_add(&threads_begun, 1);
  if (type == ompt_thread_initial) atomic_fetch_add(&initial_threads, 1);
  if (type == ompt_thread_worker) atomic_fetch_add(&worker_threads, 1);
  if (get_thread_data() != data) fail("ompt_get_thread_data differs from thread_begin's data");
}
static void on_thread_end(ompt_data_t* data) {
  if (!thread_started || data->value == 0) fail("thread_end without thread_begin");
  thread_started = 0;
  data->value = 0;
  atomic_fetch_add(&threads_ended, 1);
}
static void on_parallel_begin(ompt_data_t* task, const ompt_frame_t* frame, ompt_data_t* parallel,
                              unsigned int requested, int flags, const void* codeptr) {
  (void)task, (void)frame, (void)flags, (void)codeptr;
  if (parallel->value != 0) fail("parallel_begin: region data already set");
  parallel->value = atomic_fetch_add(&next_id, 1) * 2 + 1; /* odd: open */
  atomic_fetch_add(&parallels_begun, 1);
  atomic_fetch_add(&parallel_threads, requested);
}
static void on_parallel_end(ompt_data_t* parallel, ompt_data_t* task, int flags, const void* codeptr) {
  (void)task, (void)flags, (void)codeptr;
  if ((parallel->value & 1) == 0) fail("parallel_end of a region not begun (or ended twice)");
  parallel->value &= ~(uint64_t)1;
  atomic_fetch_add(&parallels_ended, 1);
}
static void on_implicit_task(ompt_scope_endpoint_t ep, ompt_data_t* parallel, ompt_data_t* task,
                             unsigned int n, unsigned int index, int flags) {
  (void)n, (void)index;
  if (flags & ompt_task_initial) {
    if (ep == ompt_scope_begin) atomic_fetch_add(&initial_tasks, 1);
    return;
  }
  if (ep == ompt_scope_begin) {
    if (!parallel || (parallel->value & 1) == 0) fail("implicit task of a region that is not open");
    task->value = (uint64_t)atomic_fetch_add(&next_id, 1) * 16;
    atomic_fetch_add(&implicit_begun, 1);
    push(kImplicit);
  } else {
    atomic_fetch_add(&implicit_ended, 1);
    pop(kImplicit, "implicit task");
  }
}
static void on_task_create(ompt_data_t* parent, const ompt_frame_t* frame, ompt_data_t* task, int flags,
                           int has_deps, const void* codeptr) {
  (void)parent, (void)frame, (void)codeptr;
  if (!(flags & ompt_task_explicit)) return;
  if (task->value != 0) fail("task_create: task data already set");
  task->value = (uint64_t)atomic_fetch_add(&next_id, 1) * 16 + 8 + 1;
  atomic_fetch_add(&tasks_created, 1);
  if (has_deps) atomic_fetch_add(&tasks_with_deps, 1);
}
static void on_task_schedule(ompt_data_t* prior, ompt_task_status_t status, ompt_data_t* next) {
  if (EXPLICIT(next) && STATE(next) == 1) { /* an explicit task starts */
    next->value += 1;
    atomic_fetch_add(&tasks_switched, 1);
  } else if (EXPLICIT(next) && STATE(next) == 3) {
    fail("a completed task switched to");
  }
  /* A detached task completes when its event is fulfilled after its body.
     The status is tested first: an early fulfill comes from another thread
     while the task may be starting, so its data must not be read then. */
  if ((status == ompt_task_complete || status == ompt_task_cancel || status == ompt_task_late_fulfill) &&
      EXPLICIT(prior) && STATE(prior) == 2) {
    prior->value += 1;
    atomic_fetch_add(&tasks_completed, 1);
  }
}
static void on_dependences(ompt_data_t* task, const ompt_dependence_t* deps, int n) {
  (void)task, (void)deps;
  atomic_fetch_add(&dependences, n);
}
static void count_sync(ompt_sync_region_t kind) {
  switch ((int)kind) {
    case ompt_sync_region_taskwait: atomic_fetch_add(&taskwaits, 1); break;
    case ompt_sync_region_taskgroup: atomic_fetch_add(&taskgroups, 1); break;
    case ompt_sync_region_barrier_implicit_parallel: atomic_fetch_add(&join_barriers, 1); break;
    default: atomic_fetch_add(&barriers, 1); break;
  }
}
static void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t* parallel,
                           ompt_data_t* task, const void* codeptr) {
  (void)codeptr;
  if (ep == ompt_scope_begin) {
    count_sync(kind);
    push(kSync + (int)kind);
    if (kind == ompt_sync_region_taskwait || kind == ompt_sync_region_taskgroup) {
      /* The inquiry functions name the task that waits and its region (by
         value: a runtime may pass copies of the data to the callback). */
      ompt_data_t *td = NULL, *pd = NULL, *pd2 = NULL;
      int flags = 0, thread_num = -1, size = 0;
      if (get_task_info(0, &flags, &td, NULL, &pd, &thread_num) == 2 && td->value == task->value &&
          pd->value == parallel->value && (flags & (ompt_task_implicit | ompt_task_explicit | ompt_task_initial)) &&
          get_parallel_info(0, &pd2, &size) == 2 && pd2->value == parallel->value && size >= 1 && thread_num >= 0 &&
          get_parallel_info(64, &pd2, &size) == 0)
        atomic_fetch_add(&inquiries_ok, 1);
      else
        fail("ompt_get_task_info / ompt_get_parallel_info at a taskwait do not name its task and region");
    }
  } else {
    pop(kSync + (int)kind, "sync region");
  }
}
static void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t ep, ompt_data_t* parallel,
                                ompt_data_t* task, const void* codeptr) {
  (void)parallel, (void)task, (void)codeptr;
  if (ep == ompt_scope_begin) {
    if (depth == 0 || stack[depth - 1] != kSync + (int)kind) fail("a wait outside its sync region");
    atomic_fetch_add(&waits, 1);
    push(kWait + (int)kind);
  } else {
    pop(kWait + (int)kind, "sync region wait");
  }
}
static void on_work(ompt_work_t type, ompt_scope_endpoint_t ep, ompt_data_t* parallel, ompt_data_t* task,
                    uint64_t count, const void* codeptr) {
  (void)count, (void)codeptr;
  if ((int)type <= 0 || (int)type >= WORK_KINDS) return fail("work: an unknown ompt_work_t");
  if (ep == ompt_scope_begin) {
    /* The task and region are the thread's current ones (by value: a
       runtime may pass copies), the region an open one inside an implicit
       task (an orphaned construct outside any: the initial task's). */
    ompt_data_t *td = NULL, *pd = NULL;
    if (get_task_info(0, NULL, &td, NULL, &pd, NULL) != 2 || !task || !parallel || td->value != task->value ||
        pd->value != parallel->value)
      fail("work: its task and region are not the thread's current ones");
    int in_implicit = 0;
    for (int i = 0; i < depth; ++i) in_implicit |= stack[i] == kImplicit;
    if (in_implicit && (parallel->value & 1) == 0) fail("work of a region that is not open");
    atomic_fetch_add(&work_begun[type], 1);
    push(kWork + (int)type);
  } else {
    atomic_fetch_add(&work_ended[type], 1);
    char name[32];
    snprintf(name, sizeof name, "work %d", (int)type);
    pop(kWork + (int)type, name);
  }
}

static int initialize(ompt_function_lookup_t lookup, int device, ompt_data_t* data) {
  (void)device, (void)data;
  set_callback = (ompt_set_callback_t)lookup("ompt_set_callback");
  get_thread_data = (ompt_get_thread_data_t)lookup("ompt_get_thread_data");
  get_parallel_info = (ompt_get_parallel_info_t)lookup("ompt_get_parallel_info");
  get_task_info = (ompt_get_task_info_t)lookup("ompt_get_task_info");
  if (!set_callback || !get_thread_data || !get_parallel_info || !get_task_info) {
    fail("lookup did not find the entry points");
    return 1;
  }
  if (lookup("ompt_no_such_function") != NULL) fail("lookup found a function that does not exist");
#define REG(event, fn)                                                                 \
  if (set_callback(event, (ompt_callback_t)fn) == ompt_set_error) fail("ompt_set_callback(" #event ") failed");
  REG(ompt_callback_thread_begin, on_thread_begin);
  REG(ompt_callback_thread_end, on_thread_end);
  REG(ompt_callback_parallel_begin, on_parallel_begin);
  REG(ompt_callback_parallel_end, on_parallel_end);
  REG(ompt_callback_implicit_task, on_implicit_task);
  REG(ompt_callback_task_create, on_task_create);
  REG(ompt_callback_task_schedule, on_task_schedule);
  REG(ompt_callback_dependences, on_dependences);
  REG(ompt_callback_sync_region, on_sync_region);
  REG(ompt_callback_sync_region_wait, on_sync_region_wait);
  if (set_callback(ompt_callback_work, (ompt_callback_t)on_work) != ompt_set_always)
    fail("ompt_set_callback(ompt_callback_work) is not ompt_set_always");
  /* A host-only runtime has no target regions: it must say never. */
  if (set_callback(ompt_callback_target, (ompt_callback_t)on_work) != ompt_set_never)
    fail("ompt_set_callback(ompt_callback_target) is not ompt_set_never");
  return 1;
}

static void finalize(ompt_data_t* data) {
  (void)data;
  if (atomic_load(&parallels_begun) != atomic_load(&parallels_ended)) fail("parallel begin/end counts differ");
  if (atomic_load(&implicit_begun) != atomic_load(&implicit_ended)) fail("implicit task begin/end counts differ");
  if (atomic_load(&tasks_created) != atomic_load(&tasks_switched) ||
      atomic_load(&tasks_created) != atomic_load(&tasks_completed))
    fail("tasks created, switched to and completed differ");
  for (int k = 0; k < WORK_KINDS; ++k)
    if (atomic_load(&work_begun[k]) != atomic_load(&work_ended[k])) fail("work begin/end counts differ");
  if (atomic_load(&failed)) {
    printf("ompt: FAIL %s\n", failure);
  } else {
    printf("ompt: threads_begun=%ld threads_ended=%ld initial_threads=%ld worker_threads=%ld parallel=%ld "
           "parallel_threads=%ld implicit=%ld initial_tasks=%ld tasks=%ld completed=%ld inquiries=%ld deps_tasks=%ld "
           "dependences=%ld barriers=%ld join_barriers=%ld taskwaits=%ld taskgroups=%ld waits=%ld loops=%ld sections=%ld single_executor=%ld single_other=%ld "
           "taskloops=%ld\n",
           atomic_load(&threads_begun), atomic_load(&threads_ended), atomic_load(&initial_threads),
           atomic_load(&worker_threads), atomic_load(&parallels_begun), atomic_load(&parallel_threads),
           atomic_load(&implicit_begun), atomic_load(&initial_tasks), atomic_load(&tasks_created),
           atomic_load(&tasks_completed), atomic_load(&inquiries_ok), atomic_load(&tasks_with_deps),
           atomic_load(&dependences), atomic_load(&barriers), atomic_load(&join_barriers), atomic_load(&taskwaits),
           atomic_load(&taskgroups), atomic_load(&waits), atomic_load(&work_begun[ompt_work_loop]),
           atomic_load(&work_begun[ompt_work_sections]), atomic_load(&work_begun[ompt_work_single_executor]),
           atomic_load(&work_begun[ompt_work_single_other]), atomic_load(&work_begun[ompt_work_taskloop]));
  }
  fflush(stdout);
}

ompt_start_tool_result_t* ompt_start_tool(unsigned int version, const char* runtime) {
  (void)runtime;
  static ompt_start_tool_result_t result = {initialize, finalize, {0}};
  return version >= 201611 ? &result : NULL;
}
