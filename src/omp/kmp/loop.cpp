// Loops of the libomp ABI: __kmpc_for_static_init_* (computed by each
// thread alone, as libomp does: no shared state), __kmpc_dispatch_* (the
// core's work share: dynamic, guided, runtime, ordered), ordered, doacross.
// Bounds are inclusive here; the core counts iterations [0, count).
#include <algorithm>
#include <limits>
#include <type_traits>
#include <vector>

#include "../core/observe.hpp"
#include "../core/runtime.hpp"
#include "../core/workshare.hpp"
#include "../gomp/loop_common.hpp"
#include "abi.hpp"

using namespace canopy::omp;
using namespace canopy::omp::kmp;

namespace {

// libomp's sched_type values (kmp.h) used here; the monotonic and
// nonmonotonic modifiers are bits 29 and 30, "nomerge" kinds are 128 above.
enum : int {
  kStaticChunked = 33, kStatic = 34, kDynamicChunked = 35, kGuidedChunked = 36, kRuntime = 37, kAuto = 38,
  kTrapezoidal = 39, kStaticGreedy = 40, kStaticBalanced = 41, kGuidedIterative = 42, kGuidedAnalytical = 43,
  kStaticSteal = 44, kStaticBalancedChunked = 45, kOrderedLower = 64, kOrderedUpper = 72, kNomergeLower = 160,
  kDistributeStaticChunked = 91, kDistributeStatic = 92,
};
constexpr int kModifiers = (1 << 29) | (1 << 30);

template <class T>
using U = std::make_unsigned_t<T>;

// Iterations from lo to hi inclusive with stride st (0: none).
template <class T, class ST>
std::uint64_t trip_count(T lo, T hi, ST st) {
  if (st > 0) return hi < lo ? 0 : static_cast<std::uint64_t>(static_cast<U<T>>(hi - lo) / static_cast<U<T>>(st)) + 1;
  return lo < hi ? 0 : static_cast<std::uint64_t>(static_cast<U<T>>(lo - hi) / static_cast<U<T>>(-st)) + 1;
}

// Each thread's part of a static loop, the layout libomp computes (clang's
// code relies on it: an unchunked schedule is one block per thread; a
// chunked one strides by `*pstride` and clamps to the loop's upper bound).
template <class T, class ST>
void static_init(int nth, int tid, kmp_int32 schedtype, kmp_int32* plast, T* plower, T* pupper, ST* pstride, ST incr,
                 ST chunk) {
  if (incr == 0) fatal("__kmpc_for_static_init: a loop with increment 0");
  const std::uint64_t trip = trip_count(*plower, *pupper, incr);
  if (trip == 0) {  // bounds left as they are: the caller's loop runs no iteration
    if (plast) *plast = 0;
    *pstride = incr;
    return;
  }
  using UT = U<T>;
  const UT uincr = static_cast<UT>(incr);
  int sched = schedtype & ~kModifiers;
  if (nth == 1) {
    if (plast) *plast = 1;
    *pstride = incr > 0 ? static_cast<ST>(*pupper - *plower + 1) : static_cast<ST>(-(*plower - *pupper + 1));
    return;
  }
  const UT lower = static_cast<UT>(*plower);
  const std::uint64_t n = static_cast<std::uint64_t>(nth), t = static_cast<std::uint64_t>(tid);
  switch (sched) {
    case kStatic:
    case kStaticBalanced:
    case kStaticGreedy:
    case kDistributeStatic:
      if (trip < n) {
        if (t < trip) *plower = *pupper = static_cast<T>(lower + static_cast<UT>(t) * uincr);
        else *plower = static_cast<T>(static_cast<UT>(*pupper) + uincr);
        if (plast) *plast = t == trip - 1;
      } else {
        const std::uint64_t small = trip / n, extras = trip % n;
        const UT first = lower + static_cast<UT>(t * small + std::min(t, extras)) * uincr;
        *plower = static_cast<T>(first);
        *pupper = static_cast<T>(first + static_cast<UT>(small) * uincr - (t < extras ? 0 : uincr));
        if (plast) *plast = t == n - 1;
      }
      *pstride = static_cast<ST>(trip);
      return;
    case kStaticBalancedChunked: {  // schedule(simd:static): blocks rounded up to the chunk (the simd width)
      const std::uint64_t c = chunk > 0 ? static_cast<std::uint64_t>(chunk) : 1;
      const std::uint64_t span = ((trip + n - 1) / n + c - 1) / c * c;
      const T old_upper = *pupper;
      const UT first = lower + static_cast<UT>(t * span) * uincr;
      *plower = static_cast<T>(first);
      T up = static_cast<T>(first + static_cast<UT>(span) * uincr - uincr);
      if (incr > 0 ? (up > old_upper || up < *plower) : (up < old_upper || up > *plower)) up = old_upper;
      *pupper = up;
      if (plast) *plast = t == (trip - 1) / span;
      *pstride = static_cast<ST>(trip);
      return;
    }
    default: {  // chunked (static_chunked, distribute_static_chunked)
      const std::uint64_t c = chunk > 0 ? static_cast<std::uint64_t>(chunk) : 1;
      const UT span = static_cast<UT>(c) * uincr;
      const UT first = lower + span * static_cast<UT>(t);
      *plower = static_cast<T>(first);
      T up = static_cast<T>(first + span - uincr);
      // Past the type's range: the last bound instead of a wrapped one.
      if (incr > 0 && up < *plower) up = std::numeric_limits<T>::max();
      if (incr < 0 && up > *plower) up = std::numeric_limits<T>::min();
      *pupper = up;
      *pstride = static_cast<ST>(span * static_cast<UT>(n));
      if (plast) *plast = t == ((trip - 1) / c) % n;
      return;
    }
  }
}

// The OMPT work kind of a static loop's init and fini (one kind for both:
// their begin and end events pair).
int work_kind(const ident_t* loc) {
  const kmp_int32 f = loc ? loc->flags : 0;
  if (f & kIdentWorkSections) return ompt_work_sections;
  if (f & kIdentWorkDistribute) return ompt_work_distribute;
  return ompt_work_loop;
}

// The kind is kept until the fini: clang passes the distribute's ident to
// the fini of a loop inside a distribute (teams distribute parallel for).
template <class T, class ST>
[[gnu::noinline]] void static_begin_observed(ThreadState& ts, const ident_t* loc, T lower, T upper, ST incr) {
  const int kind = work_kind(loc);
  std::uint64_t& open = kmp_thread().ompt_static_work;
  open = open << 4 | static_cast<std::uint64_t>(kind);
  obs_work(ts, kind, ompt_scope_begin, incr == 0 ? 0 : trip_count(lower, upper, incr));
}

[[gnu::noinline]] void static_end_observed(ThreadState& ts, const ident_t* loc) {
  std::uint64_t& open = kmp_thread().ompt_static_work;
  const int kind = open ? static_cast<int>(open & 15) : work_kind(loc);
  open >>= 4;
  obs_work(ts, kind, ompt_scope_end, 0);
}

// distribute schedules split the loop among the league's teams, the others among the team's threads.
template <class T, class ST>
void for_static_init(const ident_t* loc, kmp_int32 schedtype, kmp_int32* plast, T* plower, T* pupper, ST* pstride,
                     ST incr, ST chunk) {
  ThreadState& ts = this_thread();
  if (observed(ts)) [[unlikely]] static_begin_observed(ts, loc, *plower, *pupper, incr);
  const int sched = schedtype & ~kModifiers;
  if (sched == kDistributeStatic || sched == kDistributeStaticChunked)
    static_init(ts.team->num_teams, ts.team->team_num, schedtype, plast, plower, pupper, pstride, incr, chunk);
  else
    static_init(ts.team->nthreads, ts.num, schedtype, plast, plower, pupper, pstride, incr, chunk);
}

// distribute parallel for in one call: the team's block of the loop
// (*pupperD its upper bound), then the calling thread's part of it.
template <class T, class ST>
void dist_for_static_init(const ident_t* loc, kmp_int32 schedule, kmp_int32* plast, T* plower, T* pupper, T* pupperD,
                          ST* pstride, ST incr, ST chunk) {
  ThreadState& ts = this_thread();
  if (observed(ts)) [[unlikely]] static_begin_observed(ts, loc, *plower, *pupper, incr);
  kmp_int32 team_last = 0;
  ST team_stride = 0;
  static_init(ts.team->num_teams, ts.team->team_num, kStatic, &team_last, plower, pupper, &team_stride, incr, ST(0));
  if (pupperD) *pupperD = *pupper;
  if (trip_count(*plower, *pupper, incr) == 0) {
    if (plast) *plast = 0;
    *pstride = incr;
    return;
  }
  kmp_int32 thread_last = 0;
  static_init(ts.team->nthreads, ts.num, schedule, &thread_last, plower, pupper, pstride, incr, chunk);
  if (plast) *plast = team_last && thread_last;
}

// dist_schedule(static, chunk) in the libomp ABI: the team's first chunk and the stride between its chunks.
template <class T, class ST>
void team_static_init(kmp_int32* p_last, T* p_lb, T* p_ub, ST* p_st, ST incr, ST chunk) {
  const ThreadState& ts = this_thread();
  static_init(ts.team->num_teams, ts.team->team_num, kDistributeStaticChunked, p_last, p_lb, p_ub, p_st, incr, chunk);
}

template <class T, class ST>
void dispatch_init(kmp_int32 schedule, T lb, T ub, ST st, ST chunk) {
  if (st == 0) fatal("__kmpc_dispatch_init: a loop with increment 0");
  int sched = schedule & ~kModifiers;
  if (sched >= kNomergeLower) sched -= kNomergeLower - 32;
  const bool ordered = sched > kOrderedLower && sched < kOrderedUpper;
  if (ordered) sched -= kOrderedLower - 32;
  int kind;
  std::uint64_t c = chunk > 0 ? static_cast<std::uint64_t>(chunk) : 0;
  switch (sched) {
    case kStaticChunked: kind = 1; break;
    case kDynamicChunked: case kStaticSteal: kind = 2; break;
    case kGuidedChunked: case kTrapezoidal: case kGuidedIterative: case kGuidedAnalytical: kind = 3; break;
    case kRuntime: kind = 0; c = 0; break;
    default: kind = 1; c = 0; break;  // static, balanced, greedy, auto
  }
  loop_begin(loop_spec(trip_count(lb, ub, st), kind, c, ordered, static_cast<std::uint64_t>(static_cast<U<T>>(lb)),
                       static_cast<std::uint64_t>(static_cast<std::int64_t>(st))));
}

// distribute parallel for with a dynamic schedule: the team's block, then dispatch over it.
template <class T, class ST>
void dist_dispatch_init(kmp_int32 schedule, kmp_int32* p_last, T lb, T ub, ST st, ST chunk) {
  const ThreadState& ts = this_thread();
  ST team_stride = 0;
  static_init(ts.team->num_teams, ts.team->team_num, kStatic, p_last, &lb, &ub, &team_stride, st, ST(0));
  dispatch_init(schedule, lb, ub, st, chunk);
}

template <class T, class ST>
int dispatch_next(kmp_int32* p_last, T* p_lb, T* p_ub, ST* p_st) {
  LoopCursor& c = this_thread().loop;
  if (!c.ws) return 0;
  std::uint64_t lo, hi;
  if (!loop_next(lo, hi)) {
    loop_leave();  // libomp's loop ends here too: the compiler calls nothing more (its barrier aside)
    return 0;
  }
  *p_lb = static_cast<T>(c.base + lo * c.step);
  *p_ub = static_cast<T>(c.base + (hi - 1) * c.step);
  if (p_st) *p_st = static_cast<ST>(c.step);
  if (p_last) *p_last = hi == c.ws->count;
  return 1;
}

}  // namespace

#define CANOPY_KMP_LOOPS(SUFFIX, T, ST)                                                                           \
  CANOPY_KMP void __kmpc_for_static_init_##SUFFIX(ident_t* loc, kmp_int32, kmp_int32 schedtype, kmp_int32* plast, \
                                                  T* plower, T* pupper, ST* pstride, ST incr, ST chunk) {        \
    for_static_init(loc, schedtype, plast, plower, pupper, pstride, incr, chunk);                                \
  }                                                                                                               \
  CANOPY_KMP void __kmpc_dispatch_init_##SUFFIX(ident_t*, kmp_int32, kmp_int32 schedule, T lb, T ub, ST st,      \
                                                ST chunk) {                                                       \
    dispatch_init(schedule, lb, ub, st, chunk);                                                                   \
  }                                                                                                               \
  CANOPY_KMP int __kmpc_dispatch_next_##SUFFIX(ident_t*, kmp_int32, kmp_int32* p_last, T* p_lb, T* p_ub,          \
                                               ST* p_st) {                                                        \
    return dispatch_next(p_last, p_lb, p_ub, p_st);                                                               \
  }                                                                                                               \
  CANOPY_KMP void __kmpc_dist_for_static_init_##SUFFIX(ident_t* loc, kmp_int32, kmp_int32 schedule,              \
                                                       kmp_int32* plast, T* plower, T* pupper, T* pupperD,        \
                                                       ST* pstride, ST incr, ST chunk) {                          \
    dist_for_static_init(loc, schedule, plast, plower, pupper, pupperD, pstride, incr, chunk);                    \
  }                                                                                                               \
  CANOPY_KMP void __kmpc_team_static_init_##SUFFIX(ident_t*, kmp_int32, kmp_int32* p_last, T* p_lb, T* p_ub,       \
                                                   ST* p_st, ST incr, ST chunk) {                                 \
    team_static_init(p_last, p_lb, p_ub, p_st, incr, chunk);                                                      \
  }                                                                                                               \
  CANOPY_KMP void __kmpc_dist_dispatch_init_##SUFFIX(ident_t*, kmp_int32, kmp_int32 schedule, kmp_int32* p_last,    \
                                                     T lb, T ub, ST st, ST chunk) {                               \
    dist_dispatch_init(schedule, p_last, lb, ub, st, chunk);                                                      \
  }                                                                                                               \
  /* Ordered turns pass per chunk (core/workshare.cpp): nothing to do per iteration. */                           \
  CANOPY_KMP void __kmpc_dispatch_fini_##SUFFIX(ident_t*, kmp_int32) {}

CANOPY_KMP_LOOPS(4, kmp_int32, kmp_int32)
CANOPY_KMP_LOOPS(4u, kmp_uint32, kmp_int32)
CANOPY_KMP_LOOPS(8, kmp_int64, kmp_int64)
CANOPY_KMP_LOOPS(8u, kmp_uint64, kmp_int64)

// The end of a static loop (or sections, distribute) of for_static_init.
CANOPY_KMP void __kmpc_for_static_fini(ident_t* loc, kmp_int32) {
  if (ThreadState* ts = observed_thread()) [[unlikely]] static_end_observed(*ts, loc);
}

CANOPY_KMP void __kmpc_ordered(ident_t*, kmp_int32) { ordered_start(); }
CANOPY_KMP void __kmpc_end_ordered(ident_t*, kmp_int32) { ordered_end(); }

// Doacross (ordered(n) with depend(sink/source)): its own work share, next
// to the one of the loop's schedule, which clang enters after this one. The
// vectors are the loop variables' values; the core wants iteration numbers.
namespace {
struct kmp_dim {
  kmp_int64 lo, up, st;
};
struct Doacross {
  WorkShare* ws = nullptr;
  std::vector<kmp_dim> dims;
  std::vector<std::uint64_t> idx;
};
// Per thread, created on its first doacross loop and kept, like the
// thread's ThreadState, for the process's life: an initial-exec pointer is
// read inline, where a thread_local object with a destructor in a shared
// library went through __tls_get_addr at every post and wait (a fifth of a
// one-thread doacross loop's time).
__attribute__((tls_model("initial-exec"))) constinit thread_local Doacross* tls_doacross = nullptr;
Doacross& doacross_state() {
  if (!tls_doacross) [[unlikely]]
    tls_doacross = new Doacross;
  return *tls_doacross;
}

// Runs f with the doacross work share as the thread's current loop.
template <class F>
void with_doacross(F&& f) {
  Doacross& d = doacross_state();
  if (!d.ws) return;
  LoopCursor& cur = this_thread().loop;
  const LoopCursor saved = cur;
  cur = LoopCursor{};
  cur.ws = d.ws;
  f();
  cur = saved;
}

const std::uint64_t* normalise(const kmp_int64* vec) {
  Doacross& d = doacross_state();
  for (std::size_t i = 0; i < d.dims.size(); ++i) {
    const kmp_dim& m = d.dims[i];
    const auto dist = m.st > 0 ? static_cast<std::uint64_t>(vec[i] - m.lo) : static_cast<std::uint64_t>(m.lo - vec[i]);
    const auto step = static_cast<std::uint64_t>(m.st > 0 ? m.st : -m.st);
    d.idx[i] = step == 1 ? dist : dist / step;  // a 64-bit division was a third of a one-thread loop's time
    if (m.st > 0 ? vec[i] < m.lo : vec[i] > m.lo) d.idx[i] = ~std::uint64_t(0);  // outside: ignored
  }
  return d.idx.data();
}
}  // namespace

CANOPY_KMP void __kmpc_doacross_init(ident_t*, kmp_int32, kmp_int32 num_dims, const kmp_dim* dims) {
  if (num_dims < 1) fatal("__kmpc_doacross_init: %d dimensions", num_dims);
  Doacross& d = doacross_state();
  // A team of one: posts and waits do nothing (core/workshare.cpp), so no
  // doacross work share either, and with_doacross returns at once.
  if (this_thread().team->nthreads == 1) {
    d.ws = nullptr;
    return;
  }
  d.dims.assign(dims, dims + num_dims);
  d.idx.assign(static_cast<std::size_t>(num_dims), 0);
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(num_dims));
  for (int i = 0; i < num_dims; ++i) {
    if (dims[i].st == 0) fatal("__kmpc_doacross_init: dimension %d has increment 0", i);
    counts[i] = trip_count(dims[i].lo, dims[i].up, dims[i].st);
  }
  LoopCursor& cur = this_thread().loop;
  const LoopCursor saved = cur;
  LoopSpec spec = loop_spec(counts[0], 1, 0, false);
  spec.ndims = static_cast<unsigned>(num_dims);
  spec.dims = counts.data();
  loop_enter(spec);
  d.ws = cur.ws;
  cur = saved;
}
CANOPY_KMP void __kmpc_doacross_post(ident_t*, kmp_int32, const kmp_int64* vec) {
  with_doacross([&] { doacross_post(normalise(vec)); });
}
CANOPY_KMP void __kmpc_doacross_wait(ident_t*, kmp_int32, const kmp_int64* vec) {
  with_doacross([&] { doacross_wait(normalise(vec)); });
}
CANOPY_KMP void __kmpc_doacross_fini(ident_t*, kmp_int32) {
  with_doacross([] { loop_leave(); });
  doacross_state().ws = nullptr;
}
