// GOMP_loop_ull_* (unsigned long long iteration variables, `up` gives the
// direction) and the ull doacross entry points.
#include <cstdarg>
#include <vector>

#include "abi.hpp"
#include "loop_common.hpp"

using namespace canopy::omp;
using ull = unsigned long long;

namespace {

ull count_of(bool up, ull start, ull end, ull incr) {
  if (up) return end > start ? (end - start - 1) / incr + 1 : 0;
  return start > end ? (start - end - 1) / (0ULL - incr) + 1 : 0;
}

bool next_ull(ull* istart, ull* iend) { return next_chunk(istart, iend); }

bool start_ull(bool up, ull s, ull e, ull i, int kind, ull chunk, bool ordered, ull* is, ull* ie,
               uintptr_t* reductions = nullptr, void** mem = nullptr) {
  loop_begin(loop_spec(count_of(up, s, e, i), kind, chunk, ordered, s, i), reductions, mem);
  return is && next_ull(is, ie);
}

}  // namespace

#define ULL_START(name, kind, ordered)                                                                    \
  CANOPY_GOMP bool GOMP_loop_ull_##name##_start(bool up, ull s, ull e, ull i, ull c, ull* is, ull* ie) { \
    return start_ull(up, s, e, i, kind, c, ordered, is, ie);                                             \
  }
#define ULL_RT_START(name, ordered)                                                                \
  CANOPY_GOMP bool GOMP_loop_ull_##name##_start(bool up, ull s, ull e, ull i, ull* is, ull* ie) { \
    return start_ull(up, s, e, i, 0, 0, ordered, is, ie);                                         \
  }
#define ULL_NEXT(name) \
  CANOPY_GOMP bool GOMP_loop_ull_##name##_next(ull* is, ull* ie) { return next_ull(is, ie); }

ULL_START(static, 1, false)
ULL_START(dynamic, 2, false)
ULL_START(guided, 3, false)
ULL_START(nonmonotonic_dynamic, 2, false)
ULL_START(nonmonotonic_guided, 3, false)
ULL_RT_START(runtime, false)
ULL_RT_START(nonmonotonic_runtime, false)
ULL_RT_START(maybe_nonmonotonic_runtime, false)
ULL_START(ordered_static, 1, true)
ULL_START(ordered_dynamic, 2, true)
ULL_START(ordered_guided, 3, true)
ULL_RT_START(ordered_runtime, true)
ULL_NEXT(static)
ULL_NEXT(dynamic)
ULL_NEXT(guided)
ULL_NEXT(nonmonotonic_dynamic)
ULL_NEXT(nonmonotonic_guided)
ULL_NEXT(runtime)
ULL_NEXT(nonmonotonic_runtime)
ULL_NEXT(maybe_nonmonotonic_runtime)
ULL_NEXT(ordered_static)
ULL_NEXT(ordered_dynamic)
ULL_NEXT(ordered_guided)
ULL_NEXT(ordered_runtime)

CANOPY_GOMP bool GOMP_loop_ull_start(bool up, ull s, ull e, ull i, long sched, ull c, ull* is, ull* ie,
                                     uintptr_t* reductions, void** mem) {
  return start_ull(up, s, e, i, sched_kind(sched), c, false, is, ie, reductions, mem);
}
CANOPY_GOMP bool GOMP_loop_ull_ordered_start(bool up, ull s, ull e, ull i, long sched, ull c, ull* is, ull* ie,
                                             uintptr_t* reductions, void** mem) {
  return start_ull(up, s, e, i, sched_kind(sched), c, true, is, ie, reductions, mem);
}

namespace {
bool doacross_start(unsigned n, ull* counts, int kind, ull c, ull* is, ull* ie, uintptr_t* reductions = nullptr,
                    void** mem = nullptr) {
  doacross_begin(std::vector<std::uint64_t>(counts, counts + n), kind, c, reductions, mem);
  return is && next_ull(is, ie);
}
}  // namespace
CANOPY_GOMP bool GOMP_loop_ull_doacross_static_start(unsigned n, ull* counts, ull c, ull* is, ull* ie) {
  return doacross_start(n, counts, 1, c, is, ie);
}
CANOPY_GOMP bool GOMP_loop_ull_doacross_dynamic_start(unsigned n, ull* counts, ull c, ull* is, ull* ie) {
  return doacross_start(n, counts, 2, c, is, ie);
}
CANOPY_GOMP bool GOMP_loop_ull_doacross_guided_start(unsigned n, ull* counts, ull c, ull* is, ull* ie) {
  return doacross_start(n, counts, 3, c, is, ie);
}
CANOPY_GOMP bool GOMP_loop_ull_doacross_runtime_start(unsigned n, ull* counts, ull* is, ull* ie) {
  return doacross_start(n, counts, 0, 0, is, ie);
}
CANOPY_GOMP bool GOMP_loop_ull_doacross_start(unsigned n, ull* counts, long sched, ull c, ull* is, ull* ie,
                                              uintptr_t* reductions, void** mem) {
  return doacross_start(n, counts, sched_kind(sched), c, is, ie, reductions, mem);
}
CANOPY_GOMP void GOMP_doacross_ull_post(ull* counts) { doacross_post_counts(counts); }
CANOPY_GOMP void GOMP_doacross_ull_wait(ull first, ...) {
  va_list rest;
  va_start(rest, first);
  doacross_wait_counts(first, rest);
  va_end(rest);
}
