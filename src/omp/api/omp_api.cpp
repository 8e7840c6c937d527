// The omp_* routines of GCC 12's omp.h (C names) and their Fortran forms
// (omp_*_ taking references, omp_*_8_ taking 8-byte integers).
#include <climits>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <sstream>
#include <string>
#include <time.h>
#include <unistd.h>

#include <canopy/binding.hpp>

#include "../core/runtime.hpp"
#include "../core/tasks.hpp"
#include "../gomp/abi.hpp"

using namespace canopy::omp;

int canopy_omp_team_num();
int canopy_omp_num_teams();

namespace {
Team* ancestor_team(int level) {
  ThreadState& ts = this_thread();
  Team* t = ts.team;
  if (level < 0 || level > t->level) return nullptr;
  while (t && t->level > level) t = t->parent;
  return t;
}
std::string affinity_string(const char* format) { return thread_affinity(format); }
thread_local std::string tls_affinity_format;
}  // namespace

extern "C" {
CANOPY_GOMP int canopy_omp_is_canopy() { return 1; }

CANOPY_GOMP void omp_set_num_threads(int n) { current_icvs().nthreads = n > 0 ? n : 1; }
CANOPY_GOMP int omp_get_num_threads() { return this_thread().team->nthreads; }
CANOPY_GOMP int omp_get_max_threads() { return current_icvs().nthreads; }
CANOPY_GOMP int omp_get_thread_num() { return this_thread().num; }
CANOPY_GOMP int omp_get_num_procs() { return runtime().usable_pus; }
CANOPY_GOMP int omp_in_parallel() { return this_thread().team->active_level > 0; }
CANOPY_GOMP void omp_set_dynamic(int d) { current_icvs().dynamic = d != 0; }
CANOPY_GOMP int omp_get_dynamic() { return current_icvs().dynamic; }
CANOPY_GOMP void omp_set_nested(int n) { current_icvs().max_active_levels = n ? 255 : 1; }
CANOPY_GOMP int omp_get_nested() { return current_icvs().max_active_levels > 1; }
CANOPY_GOMP double omp_get_wtime() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
CANOPY_GOMP double omp_get_wtick() {
  timespec t;
  clock_getres(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}
CANOPY_GOMP void omp_set_schedule(int kind, int chunk) {
  Schedule& s = current_icvs().run_sched;
  int k = kind & 0x7fffffff;
  if (k < 1 || k > 4) return;  // invalid kinds leave the ICV unchanged
  s.kind = static_cast<ScheduleKind>(k);
  s.monotonic = (kind & 0x80000000) != 0;
  s.chunk = chunk < 1 ? 0 : chunk;
}
CANOPY_GOMP void omp_get_schedule(int* kind, int* chunk) {
  const Schedule& s = current_icvs().run_sched;
  *kind = static_cast<int>(s.kind) | (s.monotonic ? static_cast<int>(0x80000000u) : 0);
  *chunk = s.chunk ? s.chunk : (s.kind == ScheduleKind::Static ? 0 : 1);
}
CANOPY_GOMP int omp_get_thread_limit() {
  int l = current_icvs().thread_limit;
  return l > 0 ? l : 2147483647;
}
CANOPY_GOMP void omp_set_max_active_levels(int l) {
  if (l >= 0) current_icvs().max_active_levels = std::min(l, 255);
}
CANOPY_GOMP int omp_get_max_active_levels() { return current_icvs().max_active_levels; }
CANOPY_GOMP int omp_get_supported_active_levels() { return 255; }
CANOPY_GOMP int omp_get_level() { return this_thread().team->level; }
CANOPY_GOMP int omp_get_active_level() { return this_thread().team->active_level; }
CANOPY_GOMP int omp_get_ancestor_thread_num(int level) {
  ThreadState& ts = this_thread();
  if (level < 0 || level > ts.team->level) return -1;
  if (level == ts.team->level) return ts.num;
  Team* t = ancestor_team(level + 1);
  return t ? t->parent_thread_num : -1;
}
CANOPY_GOMP int omp_get_team_size(int level) {
  Team* t = ancestor_team(level);
  return t ? t->nthreads : -1;
}
CANOPY_GOMP int omp_in_final() { return in_final(); }
CANOPY_GOMP int omp_get_cancellation() { return runtime().settings.cancellation; }
CANOPY_GOMP int omp_get_proc_bind() {
  const Settings& s = runtime().settings;
  if (s.proc_bind.empty()) return runtime().places_set ? 1 : 4;  // canopy's default spreads (as omp_proc_bind_spread)
  const Icvs& icvs = current_icvs();
  if (icvs.bind_var >= 0) return icvs.bind_var;
  return static_cast<int>(s.proc_bind[std::min<std::size_t>(icvs.bind_level, s.proc_bind.size() - 1)]);
}
CANOPY_GOMP void omp_set_default_device(int d) { current_icvs().default_device = d; }
CANOPY_GOMP int omp_get_default_device() { return current_icvs().default_device; }
CANOPY_GOMP int omp_get_num_devices() { return 0; }
CANOPY_GOMP int omp_get_num_teams() { return canopy_omp_num_teams(); }
CANOPY_GOMP int omp_get_team_num() { return canopy_omp_team_num(); }
CANOPY_GOMP int omp_is_initial_device() { return 1; }
CANOPY_GOMP int omp_get_initial_device() { return 0; }
CANOPY_GOMP int omp_get_device_num() { return 0; }
CANOPY_GOMP int omp_get_max_task_priority() { return runtime().settings.max_task_priority; }
CANOPY_GOMP int omp_get_num_places() { return static_cast<int>(runtime().places.size()); }
CANOPY_GOMP int omp_get_place_num_procs(int p) {
  const PlaceList& pl = runtime().places;
  return p >= 0 && p < static_cast<int>(pl.size()) ? static_cast<int>(pl[p].size()) : 0;
}
CANOPY_GOMP void omp_get_place_proc_ids(int p, int* ids) {
  const PlaceList& pl = runtime().places;
  if (p < 0 || p >= static_cast<int>(pl.size())) return;
  std::copy(pl[p].begin(), pl[p].end(), ids);
}
namespace {
int global_place_index(const std::vector<int>& cpus) {
  const PlaceList& pl = runtime().places;
  auto it = std::find(pl.begin(), pl.end(), cpus);
  return it == pl.end() ? -1 : static_cast<int>(it - pl.begin());
}
}  // namespace
CANOPY_GOMP int omp_get_place_num() {
  ThreadState& ts = this_thread();
  if (ts.bound_cpus.empty()) return -1;
  return global_place_index(ts.bound_cpus);
}
CANOPY_GOMP int omp_get_partition_num_places() {
  ThreadState& ts = this_thread();
  return static_cast<int>((ts.partition.empty() ? runtime().places : ts.partition).size());
}
CANOPY_GOMP void omp_get_partition_place_nums(int* nums) {
  ThreadState& ts = this_thread();
  const PlaceList& part = ts.partition.empty() ? runtime().places : ts.partition;
  for (std::size_t i = 0; i < part.size(); ++i) nums[i] = global_place_index(part[i]);
}
CANOPY_GOMP void omp_set_affinity_format(const char* f) { runtime().settings.affinity_format = f ? f : ""; }
CANOPY_GOMP size_t omp_get_affinity_format(char* buf, size_t size) {
  const std::string& f = runtime().settings.affinity_format;
  if (buf && size) {
    std::size_t n = std::min(size - 1, f.size());
    std::memcpy(buf, f.data(), n);
    buf[n] = 0;
  }
  return f.size();
}
CANOPY_GOMP void omp_display_affinity(const char* format) {
  std::string s = affinity_string(format);
  std::fprintf(stderr, "%s\n", s.c_str());
}
CANOPY_GOMP size_t omp_capture_affinity(char* buf, size_t size, const char* format) {
  std::string s = affinity_string(format);
  if (buf && size) {
    std::size_t n = std::min(size - 1, s.size());
    std::memcpy(buf, s.data(), n);
    buf[n] = 0;
  }
  return s.size();
}
CANOPY_GOMP void omp_display_env(int verbose) { display_env(runtime().settings, verbose != 0, std::cerr); }
// Both kinds (soft and hard) end the idle pool's OS threads: canopy keeps no
// other resource worth releasing, and a hard pause must not let threadprivate
// data survive (GCC's pause-2 checks that new threads start fresh).
CANOPY_GOMP int omp_pause_resource(int kind, int device) {
  if (device != omp_get_initial_device()) return -1;
  if (kind != 1 && kind != 2) return -1;  // omp_pause_soft, omp_pause_hard
  release_idle_workers();
  return 0;
}
CANOPY_GOMP int omp_pause_resource_all(int kind) { return omp_pause_resource(kind, 0); }
CANOPY_GOMP void omp_fulfill_event(void* e) { fulfill_event(e); }
CANOPY_GOMP void omp_set_num_teams(int n) {
  if (n > 0) runtime().settings.num_teams = n;
}
CANOPY_GOMP int omp_get_max_teams() { return runtime().settings.num_teams; }  // nteams-var, 0 when unset
CANOPY_GOMP void omp_set_teams_thread_limit(int n) {
  if (n > 0) runtime().settings.teams_thread_limit = n;
}
CANOPY_GOMP int omp_get_teams_thread_limit() { return runtime().settings.teams_thread_limit; }

// The _8_ forms (gfortran -fdefault-integer-8) take 8-byte integers:
// saturate them into int so that out-of-range levels, places and counts stay
// out of range (HUGE(0) must not wrap to a valid level; GCC's pr48894).
namespace {
int to_int(long v) {
  return v > INT_MAX ? INT_MAX : v < INT_MIN ? INT_MIN : static_cast<int>(v);
}
}  // namespace

// Fortran forms.
CANOPY_GOMP void omp_set_num_threads_(const int* n) { omp_set_num_threads(*n); }
CANOPY_GOMP void omp_set_num_threads_8_(const long* n) { omp_set_num_threads(to_int(*n)); }
CANOPY_GOMP int omp_get_num_threads_() { return omp_get_num_threads(); }
CANOPY_GOMP int omp_get_max_threads_() { return omp_get_max_threads(); }
CANOPY_GOMP int omp_get_thread_num_() { return omp_get_thread_num(); }
CANOPY_GOMP int omp_get_num_procs_() { return omp_get_num_procs(); }
CANOPY_GOMP int omp_in_parallel_() { return omp_in_parallel(); }
CANOPY_GOMP void omp_set_dynamic_(const int* d) { omp_set_dynamic(*d); }
CANOPY_GOMP void omp_set_dynamic_8_(const long* d) { omp_set_dynamic(*d != 0); }
CANOPY_GOMP int omp_get_dynamic_() { return omp_get_dynamic(); }
CANOPY_GOMP void omp_set_nested_(const int* n) { omp_set_nested(*n); }
CANOPY_GOMP void omp_set_nested_8_(const long* n) { omp_set_nested(*n != 0); }
CANOPY_GOMP int omp_get_nested_() { return omp_get_nested(); }
CANOPY_GOMP double omp_get_wtime_() { return omp_get_wtime(); }
CANOPY_GOMP double omp_get_wtick_() { return omp_get_wtick(); }
CANOPY_GOMP void omp_set_schedule_(const int* k, const int* c) { omp_set_schedule(*k, *c); }
CANOPY_GOMP void omp_set_schedule_8_(const int* k, const long* c) { omp_set_schedule(*k, to_int(*c)); }
CANOPY_GOMP void omp_get_schedule_(int* k, int* c) { omp_get_schedule(k, c); }
CANOPY_GOMP void omp_get_schedule_8_(int* k, long* c) {
  int ci;
  omp_get_schedule(k, &ci);
  *c = ci;
}
CANOPY_GOMP int omp_get_thread_limit_() { return omp_get_thread_limit(); }
CANOPY_GOMP void omp_set_max_active_levels_(const int* l) { omp_set_max_active_levels(*l); }
CANOPY_GOMP void omp_set_max_active_levels_8_(const long* l) { omp_set_max_active_levels(to_int(*l)); }
CANOPY_GOMP int omp_get_max_active_levels_() { return omp_get_max_active_levels(); }
CANOPY_GOMP int omp_get_supported_active_levels_() { return omp_get_supported_active_levels(); }
CANOPY_GOMP int omp_get_level_() { return omp_get_level(); }
CANOPY_GOMP int omp_get_active_level_() { return omp_get_active_level(); }
CANOPY_GOMP int omp_get_ancestor_thread_num_(const int* l) { return omp_get_ancestor_thread_num(*l); }
CANOPY_GOMP int omp_get_ancestor_thread_num_8_(const long* l) { return omp_get_ancestor_thread_num(to_int(*l)); }
CANOPY_GOMP int omp_get_team_size_(const int* l) { return omp_get_team_size(*l); }
CANOPY_GOMP int omp_get_team_size_8_(const long* l) { return omp_get_team_size(to_int(*l)); }
CANOPY_GOMP int omp_in_final_() { return omp_in_final(); }
CANOPY_GOMP int omp_get_cancellation_() { return omp_get_cancellation(); }
CANOPY_GOMP int omp_get_proc_bind_() { return omp_get_proc_bind(); }
CANOPY_GOMP void omp_set_default_device_(const int* d) { omp_set_default_device(*d); }
CANOPY_GOMP void omp_set_default_device_8_(const long* d) { omp_set_default_device(to_int(*d)); }
CANOPY_GOMP int omp_get_default_device_() { return omp_get_default_device(); }
CANOPY_GOMP int omp_get_num_devices_() { return 0; }
CANOPY_GOMP int omp_get_num_teams_() { return omp_get_num_teams(); }
CANOPY_GOMP int omp_get_team_num_() { return omp_get_team_num(); }
CANOPY_GOMP int omp_is_initial_device_() { return 1; }
CANOPY_GOMP int omp_get_initial_device_() { return 0; }
CANOPY_GOMP int omp_get_device_num_() { return 0; }
CANOPY_GOMP int omp_get_max_task_priority_() { return omp_get_max_task_priority(); }
CANOPY_GOMP int omp_get_num_places_() { return omp_get_num_places(); }
CANOPY_GOMP int omp_get_place_num_procs_(const int* p) { return omp_get_place_num_procs(*p); }
CANOPY_GOMP int omp_get_place_num_procs_8_(const long* p) { return omp_get_place_num_procs(to_int(*p)); }
CANOPY_GOMP void omp_get_place_proc_ids_(const int* p, int* ids) { omp_get_place_proc_ids(*p, ids); }
CANOPY_GOMP void omp_get_place_proc_ids_8_(const long* p, long* ids) {
  const PlaceList& pl = runtime().places;
  if (*p < 0 || *p >= static_cast<long>(pl.size())) return;
  for (std::size_t i = 0; i < pl[*p].size(); ++i) ids[i] = pl[*p][i];
}
CANOPY_GOMP int omp_get_place_num_() { return omp_get_place_num(); }
CANOPY_GOMP int omp_get_partition_num_places_() { return omp_get_partition_num_places(); }
CANOPY_GOMP void omp_get_partition_place_nums_(int* n) { omp_get_partition_place_nums(n); }
CANOPY_GOMP void omp_get_partition_place_nums_8_(long* n) {
  std::vector<int> v(omp_get_partition_num_places());
  omp_get_partition_place_nums(v.data());
  for (std::size_t i = 0; i < v.size(); ++i) n[i] = v[i];
}
CANOPY_GOMP void omp_display_env_(const int* v) { omp_display_env(*v); }
CANOPY_GOMP void omp_display_env_8_(const long* v) { omp_display_env(*v != 0); }
CANOPY_GOMP int omp_pause_resource_(const int* k, const int* d) { return omp_pause_resource(*k, *d); }
CANOPY_GOMP int omp_pause_resource_all_(const int* k) { return omp_pause_resource_all(*k); }
// omp_lib declares the event `value` (omp_lib.f90 of GCC 12): the handle
// itself arrives, not its address (dereferencing it was the SIGSEGV of the
// Fortran task-detach tests).
CANOPY_GOMP void omp_fulfill_event_(std::intptr_t e) { omp_fulfill_event(reinterpret_cast<void*>(e)); }
CANOPY_GOMP void omp_set_num_teams_(const int* n) { omp_set_num_teams(*n); }
CANOPY_GOMP void omp_set_num_teams_8_(const long* n) { omp_set_num_teams(to_int(*n)); }
CANOPY_GOMP int omp_get_max_teams_() { return omp_get_max_teams(); }
CANOPY_GOMP void omp_set_teams_thread_limit_(const int* n) { omp_set_teams_thread_limit(*n); }
CANOPY_GOMP void omp_set_teams_thread_limit_8_(const long* n) { omp_set_teams_thread_limit(to_int(*n)); }
CANOPY_GOMP int omp_get_teams_thread_limit_() { return omp_get_teams_thread_limit(); }
}
