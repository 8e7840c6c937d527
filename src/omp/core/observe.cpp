// The out-of-line side of observe.hpp: OpenMP threads as rows of canopy's
// traces, and the spans of constructs.
#include "observe.hpp"

#include <atomic>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "ompt.hpp"
#include "tasks.hpp"

namespace canopy::omp {

namespace {

int trace_group = 0;  // set once by observe_init (make_runtime), before any thread state
std::atomic<int> next_row{0};

// Filled by the ABI layers' static initialisers (before any thread of the
// program can run OpenMP code), read-only afterwards.
struct CodeOfEntry {
  void (*wrapper)(void*);
  CodeOf code_of;
};
constexpr int kCodeOf = 8;
CodeOfEntry code_of_table[kCodeOf];
int code_of_count = 0;

}  // namespace

void observe_init() {
  try {
    trace_group = detail::trace_register_group("canopy OpenMP runtime");
  } catch (const std::exception& e) {
    fatal("%s", e.what());
  }
}

void observe_thread(ThreadState& ts, bool initial) {
  // The tool starts with the first initial thread, once its state exists
  // (its initialize may call omp_* routines), before any worker.
  static std::once_flag tool_once;
  if (initial) std::call_once(tool_once, [] { ompt::start(); });
  if (ompt::active.load(std::memory_order_relaxed)) {
    ts.observe.word.fetch_or(1, std::memory_order_relaxed);  // before the trace may publish a ring in it
    if (ompt::cb.thread_begin) ompt::cb.thread_begin(initial ? ompt_thread_initial : ompt_thread_worker, &ts.ompt_thread);
    if (initial && ompt::cb.implicit_task)
      ompt::cb.implicit_task(ompt_scope_begin, &ts.team->ompt_parallel, &ts.task->ompt_task, 1, 1, ompt_task_initial);
  }
  const int row = next_row.fetch_add(1, std::memory_order_relaxed);
  const std::string name = "OpenMP thread " + std::to_string(row) + (initial ? " (initial)" : "");
  try {
    detail::trace_register_thread(&ts.observe, trace_group, row, name.c_str());
  } catch (const std::exception& e) {
    fatal("trace: %s", e.what());
  }
}

void register_code_of(void (*wrapper)(void*), CodeOf code_of) {
  if (code_of_count == kCodeOf) fatal("register_code_of: more than %d wrappers", kCodeOf);
  code_of_table[code_of_count++] = {wrapper, code_of};
}

const void* code_of(void (*fn)(void*), void* data) {
  for (int i = 0; i < code_of_count; ++i)
    if (code_of_table[i].wrapper == fn) return code_of_table[i].code_of(data);
  return reinterpret_cast<const void*>(fn);
}

std::uint64_t obs_now(const ThreadState& ts) noexcept {
  return detail::trace_ring(ts.observe) ? detail::trace_clock() : 0;
}

void obs_span(ThreadState& ts, detail::TraceOmpConstruct c, std::uint64_t t0, const void* code,
              std::uint64_t b) noexcept {
  if (t0 == 0) return;
  if (detail::TraceRing* r = detail::trace_ring(ts.observe))
    detail::trace_put(r, detail::kTraceOmp, t0, detail::trace_clock(), reinterpret_cast<std::uint64_t>(code), b, 0,
                      c);
}

namespace {
bool tool() noexcept { return ompt::active.load(std::memory_order_relaxed); }
constexpr int kParallelFlags = ompt_parallel_invoker_runtime | ompt_parallel_team;
}  // namespace

void obs_parallel_begin(ThreadState& ts, Team& team, const void* codeptr) noexcept {
  team.obs_t0 = obs_now(ts);
  team.encountering = ts.task;
  team.codeptr = codeptr;
  team.ompt_parallel = ompt_data_t{};
  if (tool() && ompt::cb.parallel_begin)
    ompt::cb.parallel_begin(&ts.task->ompt_task, ompt::no_frame(), &team.ompt_parallel,
                            static_cast<unsigned>(team.nthreads), kParallelFlags, codeptr);
}

void obs_implicit_begin(ThreadState& ts, Team& team) noexcept {
  ts.task->ompt_task = ompt_data_t{};
  if (tool() && ompt::cb.implicit_task)
    ompt::cb.implicit_task(ompt_scope_begin, &team.ompt_parallel, &ts.task->ompt_task,
                           static_cast<unsigned>(team.nthreads), static_cast<unsigned>(ts.num), ompt_task_implicit);
}

void obs_implicit_end(ThreadState&, ompt_data_t* task_data, int thread_num) noexcept {
  if (tool() && ompt::cb.implicit_task)
    ompt::cb.implicit_task(ompt_scope_end, nullptr, task_data, 0, static_cast<unsigned>(thread_num), ompt_task_implicit);
}

void obs_parallel_end(ThreadState& ts, Team& team, std::uint64_t t0, const void* code) noexcept {
  obs_span(ts, detail::kOmpParallel, t0, code, static_cast<std::uint64_t>(team.nthreads));
  if (tool() && ompt::cb.parallel_end)
    ompt::cb.parallel_end(&team.ompt_parallel, &ts.task->ompt_task, kParallelFlags, team.codeptr);
}

void obs_sync_begin(ThreadState&, ompt_sync_region_t kind, ompt_data_t* parallel, ompt_data_t* task,
                    const void* codeptr) noexcept {
  if (!tool()) return;
  if (ompt::cb.sync_region) ompt::cb.sync_region(kind, ompt_scope_begin, parallel, task, codeptr);
  if (ompt::cb.sync_region_wait) ompt::cb.sync_region_wait(kind, ompt_scope_begin, parallel, task, codeptr);
}

void obs_sync_end(ThreadState&, ompt_sync_region_t kind, ompt_data_t* parallel, ompt_data_t* task,
                  const void* codeptr) noexcept {
  if (!tool()) return;
  if (ompt::cb.sync_region_wait) ompt::cb.sync_region_wait(kind, ompt_scope_end, parallel, task, codeptr);
  if (ompt::cb.sync_region) ompt::cb.sync_region(kind, ompt_scope_end, parallel, task, codeptr);
}

void obs_work(const ThreadState& ts, int kind, ompt_scope_endpoint_t ep, std::uint64_t count) noexcept {
  if (kind == 0 || !tool() || !ompt::cb.work || !ts.team || !ts.task) return;
  ompt::cb.work(static_cast<ompt_work_t>(kind), ep, &ts.team->ompt_parallel, &ts.task->ompt_task, count, nullptr);
}

void obs_single_start(const ThreadState& ts, bool executor) noexcept {
  obs_work(ts, executor ? ompt_work_single_executor : ompt_work_single_other, ompt_scope_begin, 1);
  if (!executor) obs_work(ts, ompt_work_single_other, ompt_scope_end, 1);
}

void obs_task_create(ThreadState& ts, Task* t, int flags, bool has_deps, const void* codeptr) noexcept {
  if (tool() && ompt::cb.task_create)
    ompt::cb.task_create(&ts.task->ompt_task, ompt::no_frame(), &t->ompt_task, flags, has_deps ? 1 : 0, codeptr);
}

void obs_dependences(Task* t, const void* const* addrs, const bool* out, int n) noexcept {
  if (!tool() || !ompt::cb.dependences || n <= 0) return;
  constexpr int kOnStack = 32;
  ompt_dependence_t stack[kOnStack];
  std::unique_ptr<ompt_dependence_t[]> heap;
  ompt_dependence_t* deps = stack;
  if (n > kOnStack) {
    heap.reset(new (std::nothrow) ompt_dependence_t[static_cast<std::size_t>(n)]);
    if (!heap) return;
    deps = heap.get();
  }
  for (int i = 0; i < n; ++i) {
    deps[i].variable.ptr = const_cast<void*>(addrs[i]);
    // The runtime keeps out and inout alike (both write): reported as inout.
    deps[i].dependence_type = out[i] ? ompt_dependence_type_inout : ompt_dependence_type_in;
  }
  ompt::cb.dependences(&t->ompt_task, deps, n);
}

void obs_task_switch(Task* prior, Task* next) noexcept {
  if (tool() && ompt::cb.task_schedule)
    ompt::cb.task_schedule(prior ? &prior->ompt_task : nullptr, ompt_task_switch, &next->ompt_task);
}

void obs_task_done(Task* t, ompt_task_status_t status, Task* prior) noexcept {
  if (tool() && ompt::cb.task_schedule)
    ompt::cb.task_schedule(&t->ompt_task, status, prior ? &prior->ompt_task : nullptr);
}

ompt_task_status_t obs_body_end_status(Task* t) noexcept {
  // completion_left 1: no event, or it was fulfilled (and reported early).
  if (t->completion_left.load(std::memory_order_acquire) == 1) return ompt_task_complete;
  return t->detach_half_reported.exchange(true, std::memory_order_acq_rel) ? ompt_task_complete : ompt_task_detach;
}

void obs_task_fulfilled(Task* t) noexcept {
  const bool late = t->detach_half_reported.exchange(true, std::memory_order_acq_rel);
  if (tool() && ompt::cb.task_schedule)
    ompt::cb.task_schedule(&t->ompt_task, late ? ompt_task_late_fulfill : ompt_task_early_fulfill, nullptr);
}

void obs_thread_end(ThreadState& ts) noexcept {
  if (tool() && ompt::cb.thread_end) ompt::cb.thread_end(&ts.ompt_thread);
}

}  // namespace canopy::omp
