// What else a clang program may call in libomp: the __kmpc_* forms of the
// allocator and lock routines (over canopy's omp_* ones), error directives,
// and libomp's own extensions (kmp_*: stack size, blocktime, library mode,
// memory, affinity masks, cancellation status; ompc_*: C forms of omp_*).
#include <sched.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../core/ompt.hpp"
#include "../core/cancel.hpp"
#include "../core/futex.hpp"
#include "../core/runtime.hpp"
#include "abi.hpp"

using namespace canopy::omp;
using namespace canopy::omp::kmp;

// canopy's omp_* routines (api/), called from here.
extern "C" {
void* omp_alloc(std::size_t, std::uintptr_t);
void* omp_aligned_alloc(std::size_t, std::size_t, std::uintptr_t);
void* omp_calloc(std::size_t, std::size_t, std::uintptr_t);
void* omp_realloc(void*, std::size_t, std::uintptr_t, std::uintptr_t);
void omp_free(void*, std::uintptr_t);
std::uintptr_t omp_init_allocator(std::uintptr_t, int, const void*);
void omp_destroy_allocator(std::uintptr_t);
void omp_set_default_allocator(std::uintptr_t);
std::uintptr_t omp_get_default_allocator();
void omp_init_lock(void*);
void omp_init_nest_lock(void*);
void omp_init_lock_with_hint(void*, int);
void omp_init_nest_lock_with_hint(void*, int);
void omp_destroy_lock(void*);
void omp_destroy_nest_lock(void*);
void omp_set_lock(void*);
void omp_set_nest_lock(void*);
void omp_unset_lock(void*);
void omp_unset_nest_lock(void*);
int omp_test_lock(void*);
int omp_test_nest_lock(void*);
int omp_pause_resource_all(int);
void omp_set_num_threads(int);
void omp_set_dynamic(int);
void omp_set_nested(int);
void omp_set_max_active_levels(int);
void omp_set_schedule(int, int);
int omp_get_ancestor_thread_num(int);
int omp_get_team_size(int);
void omp_set_affinity_format(const char*);
std::size_t omp_get_affinity_format(char*, std::size_t);
void omp_display_affinity(const char*);
std::size_t omp_capture_affinity(char*, std::size_t, const char*);
}

// Allocators (the allocate directive and clause).
CANOPY_KMP void* __kmpc_alloc(int, std::size_t size, std::uintptr_t a) { return omp_alloc(size, a); }
CANOPY_KMP void* __kmpc_aligned_alloc(int, std::size_t align, std::size_t size, std::uintptr_t a) {
  return omp_aligned_alloc(align, size, a);
}
CANOPY_KMP void* __kmpc_calloc(int, std::size_t n, std::size_t size, std::uintptr_t a) { return omp_calloc(n, size, a); }
CANOPY_KMP void* __kmpc_realloc(int, void* p, std::size_t size, std::uintptr_t a, std::uintptr_t free_a) {
  return omp_realloc(p, size, a, free_a);
}
CANOPY_KMP void __kmpc_free(int, void* p, std::uintptr_t a) { omp_free(p, a); }
CANOPY_KMP std::uintptr_t __kmpc_init_allocator(int, std::uintptr_t memspace, int ntraits, const void* traits) {
  return omp_init_allocator(memspace, ntraits, traits);
}
CANOPY_KMP void __kmpc_destroy_allocator(int, std::uintptr_t a) { omp_destroy_allocator(a); }
CANOPY_KMP void __kmpc_set_default_allocator(int, std::uintptr_t a) { omp_set_default_allocator(a); }
CANOPY_KMP std::uintptr_t __kmpc_get_default_allocator(int) { return omp_get_default_allocator(); }

// Locks: `user_lock` is the program's omp_lock_t / omp_nest_lock_t.
CANOPY_KMP void __kmpc_init_lock(ident_t*, kmp_int32, void** l) { omp_init_lock(l); }
CANOPY_KMP void __kmpc_init_lock_with_hint(ident_t*, kmp_int32, void** l, kmp_uint32 h) {
  omp_init_lock_with_hint(l, static_cast<int>(h));
}
CANOPY_KMP void __kmpc_init_nest_lock(ident_t*, kmp_int32, void** l) { omp_init_nest_lock(l); }
CANOPY_KMP void __kmpc_init_nest_lock_with_hint(ident_t*, kmp_int32, void** l, kmp_uint32 h) {
  omp_init_nest_lock_with_hint(l, static_cast<int>(h));
}
CANOPY_KMP void __kmpc_destroy_lock(ident_t*, kmp_int32, void** l) { omp_destroy_lock(l); }
CANOPY_KMP void __kmpc_destroy_nest_lock(ident_t*, kmp_int32, void** l) { omp_destroy_nest_lock(l); }
CANOPY_KMP void __kmpc_set_lock(ident_t*, kmp_int32, void** l) { omp_set_lock(l); }
CANOPY_KMP void __kmpc_set_nest_lock(ident_t*, kmp_int32, void** l) { omp_set_nest_lock(l); }
CANOPY_KMP void __kmpc_unset_lock(ident_t*, kmp_int32, void** l) { omp_unset_lock(l); }
CANOPY_KMP void __kmpc_unset_nest_lock(ident_t*, kmp_int32, void** l) { omp_unset_nest_lock(l); }
CANOPY_KMP int __kmpc_test_lock(ident_t*, kmp_int32, void** l) { return omp_test_lock(l); }
CANOPY_KMP int __kmpc_test_nest_lock(ident_t*, kmp_int32, void** l) { return omp_test_nest_lock(l); }

// scope (clang 16 and later emit these): nothing at run time, its barrier is emitted apart.
CANOPY_KMP void __kmpc_scope(ident_t*, kmp_int32, void*) {}
CANOPY_KMP void __kmpc_end_scope(ident_t*, kmp_int32, void*) {}

// The error directive at(execution): severity 1 warning, 2 fatal.
CANOPY_KMP void __kmpc_error(ident_t* loc, int severity, const char* message) {
  const char* where = loc && loc->psource ? loc->psource : "";
  std::fprintf(stderr, "canopy-omp: %s: error directive encountered%s%s%s%s\n", severity == 2 ? "fatal error" : "warning",
               message ? ": " : "", message ? message : "", *where ? " at " : "", where);
  std::fflush(stderr);
  if (severity == 2) std::exit(EXIT_FAILURE);
}

// target-offload-var in libomp's encoding (disabled 0, default 1, mandatory 2).
CANOPY_KMP int __kmpc_get_target_offload() {
  switch (runtime().settings.target_offload) {
    case TargetOffload::Disabled: return 0;
    case TargetOffload::Mandatory: return 2;
    default: return 1;
  }
}
CANOPY_KMP int __kmpc_pause_resource(int kind) { return omp_pause_resource_all(kind); }

// kmp_* extensions.
CANOPY_KMP void kmp_set_stacksize_s(std::size_t size) { runtime().settings.stacksize = size; }  // for threads started later
CANOPY_KMP void kmp_set_stacksize(int size) { kmp_set_stacksize_s(size > 0 ? static_cast<std::size_t>(size) : 0); }
CANOPY_KMP std::size_t kmp_get_stacksize_s() { return runtime().settings.stacksize; }
CANOPY_KMP int kmp_get_stacksize() { return static_cast<int>(runtime().settings.stacksize); }
// Blocktime 0 means: do not spin before sleeping (canopy's wait budget); any other value restores it.
namespace {
std::atomic<int> g_blocktime{200};  // libomp's default, in ms
std::atomic<int> g_library{3};      // throughput
}  // namespace
CANOPY_KMP void kmp_set_blocktime(int ms) {
  Runtime& rt = runtime();
  static const int default_spins = rt.spin_count.load(std::memory_order_relaxed);
  g_blocktime.store(ms < 0 ? 0 : ms, std::memory_order_relaxed);
  rt.spin_count.store(ms <= 0 ? 0 : default_spins, std::memory_order_relaxed);
  refresh_wait_state(rt);
}
CANOPY_KMP int kmp_get_blocktime() { return g_blocktime; }
// Library modes (serial 1, turnaround 2, throughput 3): recorded; serial runs later regions on one thread.
CANOPY_KMP void kmp_set_library(int mode) {
  if (mode < 1 || mode > 3) return;
  g_library = mode;
  if (mode == 1) omp_set_num_threads(1);
}
CANOPY_KMP void kmp_set_library_serial() { kmp_set_library(1); }
CANOPY_KMP void kmp_set_library_turnaround() { kmp_set_library(2); }
CANOPY_KMP void kmp_set_library_throughput() { kmp_set_library(3); }
CANOPY_KMP int kmp_get_library() { return g_library; }
// KMP_* settings strings and dispatch buffer counts are libomp's tuning; canopy has none of them.
CANOPY_KMP void kmp_set_defaults(const char*) {}
CANOPY_KMP void kmp_set_disp_num_buffers(int) {}
CANOPY_KMP void kmp_set_warnings_on() {}
CANOPY_KMP void kmp_set_warnings_off() {}
CANOPY_KMP int kmp_get_num_known_threads() { return runtime().live_threads.load(std::memory_order_relaxed); }
CANOPY_KMP int kmp_get_cancellation_status(int kind) {
  // libomp's kinds: parallel 1, loop 2, sections 3, taskgroup 4.
  static const int kinds[] = {0, kCancelParallel, kCancelLoop, kCancelSections, kCancelTaskgroup};
  return kind >= 1 && kind <= 4 ? cancellation_point(kinds[kind]) : 0;
}

CANOPY_KMP void* kmp_malloc(std::size_t size) { return std::malloc(size); }
CANOPY_KMP void* kmp_aligned_malloc(std::size_t size, std::size_t align) {
  if (align < sizeof(void*) || (align & (align - 1))) return nullptr;
  return std::aligned_alloc(align, (size + align - 1) / align * align);
}
CANOPY_KMP void* kmp_calloc(std::size_t n, std::size_t size) { return std::calloc(n, size); }
CANOPY_KMP void* kmp_realloc(void* p, std::size_t size) { return std::realloc(p, size); }
CANOPY_KMP void kmp_free(void* p) { std::free(p); }

// Affinity masks: a kmp_affinity_mask_t holds a cpu_set_t of canopy's.
CANOPY_KMP void kmp_create_affinity_mask(void** mask) {
  auto* set = new cpu_set_t;
  CPU_ZERO(set);
  *mask = set;
}
CANOPY_KMP void kmp_destroy_affinity_mask(void** mask) {
  delete static_cast<cpu_set_t*>(*mask);
  *mask = nullptr;
}
CANOPY_KMP int kmp_set_affinity_mask_proc(int proc, void** mask) {
  if (!mask || !*mask || proc < 0 || proc >= CPU_SETSIZE) return -1;
  CPU_SET(proc, static_cast<cpu_set_t*>(*mask));
  return 0;
}
CANOPY_KMP int kmp_unset_affinity_mask_proc(int proc, void** mask) {
  if (!mask || !*mask || proc < 0 || proc >= CPU_SETSIZE) return -1;
  CPU_CLR(proc, static_cast<cpu_set_t*>(*mask));
  return 0;
}
CANOPY_KMP int kmp_get_affinity_mask_proc(int proc, void** mask) {
  if (!mask || !*mask || proc < 0 || proc >= CPU_SETSIZE) return -1;
  return CPU_ISSET(proc, static_cast<cpu_set_t*>(*mask)) ? 1 : 0;
}
CANOPY_KMP int kmp_set_affinity(void** mask) {
  if (!mask || !*mask) return -1;
  return sched_setaffinity(0, sizeof(cpu_set_t), static_cast<cpu_set_t*>(*mask)) == 0 ? 0 : -1;
}
CANOPY_KMP int kmp_get_affinity(void** mask) {
  if (!mask || !*mask) return -1;
  return sched_getaffinity(0, sizeof(cpu_set_t), static_cast<cpu_set_t*>(*mask)) == 0 ? 0 : -1;
}
CANOPY_KMP int kmp_get_affinity_max_proc() { return CPU_SETSIZE; }

// ompc_*: the C forms libomp exports of some omp_* routines.
CANOPY_KMP void ompc_set_num_threads(int n) { omp_set_num_threads(n); }
CANOPY_KMP void ompc_set_dynamic(int d) { omp_set_dynamic(d); }
CANOPY_KMP void ompc_set_nested(int n) { omp_set_nested(n); }
CANOPY_KMP void ompc_set_max_active_levels(int l) { omp_set_max_active_levels(l); }
CANOPY_KMP void ompc_set_schedule(int kind, int chunk) { omp_set_schedule(kind, chunk); }
CANOPY_KMP int ompc_get_ancestor_thread_num(int level) { return omp_get_ancestor_thread_num(level); }
CANOPY_KMP int ompc_get_team_size(int level) { return omp_get_team_size(level); }
CANOPY_KMP void ompc_set_affinity_format(const char* f) { omp_set_affinity_format(f); }
CANOPY_KMP std::size_t ompc_get_affinity_format(char* buf, std::size_t size) { return omp_get_affinity_format(buf, size); }
CANOPY_KMP void ompc_display_affinity(const char* f) { omp_display_affinity(f); }
CANOPY_KMP std::size_t ompc_capture_affinity(char* buf, std::size_t size, const char* f) {
  return omp_capture_affinity(buf, size, f);
}

// OpenMP 5.1, 3.14: no tool (omp_control_tool_notool, -2), or a tool
// without a control_tool callback, which canopy does not dispatch
// (omp_control_tool_nocallback, -1).
CANOPY_KMP int omp_control_tool(int, int, void*) { return ompt::active.load(std::memory_order_relaxed) ? -1 : -2; }
