// The hot-path side of tracing (canopy/trace.hpp is the API; src/trace/
// keeps the sessions and writes the files): the event record, the
// per-worker ring it goes into, and the inline hooks the runtime calls at
// each event site.
//
// Zero cost when off: every site compares the worker's `trace` pointer with
// null and branches (traces(w): two instructions on x86-64); the traced
// branch is out of the fast path. When on: a time stamp counter read at each end of a
// span and one store of a 40-byte record into the worker's own ring, with
// no lock, no system call and no allocation.
//
// The ring (one per worker slot, owned by src/trace, alive as long as its
// runtime): only the thread holding the slot writes events; the index
// `count` only grows and is published with a release store after the
// record, so a reader that loads it (acquire) reads whole records. A
// session reads the records [base, count): it sets `base` to `count` when
// it starts, and a full ring (count - base == capacity) drops new events
// and counts them in `lost`, so that what was kept stays consistent
// (whole spans, recorded when they end). A writer that loaded the pointer
// just before a session stopped may still write one record after it: into
// a slot past what the session read, never into one it reads.
#pragma once
#include <atomic>
#include <cstdint>

#include "canopy/detail/flag.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#else
#include <time.h>
#endif


#include "canopy/detail/worker.hpp"

namespace canopy::detail {

// What a record is. Spans have t0 < t1; instants have t1 == t0.
enum TraceKind : std::uint8_t {
  kTraceTask = 0,       // a runtime task (TaskGroup, invoke's stolen half, loops): a = label
  kTraceFlowTask = 1,   // a data-flow task: a = its FnOps (label()), b = its id (node address)
  kTraceGraphTask = 2,  // a TaskGraph node: a = label, b = graph id, c = node index
  kTraceSteal = 3,      // instant: c = victim worker, d = distance class (StealClass)
  kTracePark = 4,       // span: the worker slept (ends with its wake-up)
  kTraceSearch = 5,     // span: an idle worker searched for work (stealing)
  kTraceRelease = 6,    // instant: data-flow task a (id) made task b (id) ready
  kTraceMigration = 7,  // instant: handle c's pages moved to NUMA node d, b bytes
  kTracePlacement = 8,  // instant: graph b's task c placed on worker a (d: 0 automatic affinity, 1 apply())
  kTraceOmp = 9,        // span: an OpenMP construct (canopy's OpenMP runtime): d = TraceOmpConstruct,
                        // a = code address (outlined or task function; 0: none), b = team size (parallel)
  kTraceKinds = 10
};

// What a kTraceOmp span is.
enum TraceOmpConstruct : std::uint16_t {
  kOmpParallel = 0,      // a parallel region on its primary thread, fork to join
  kOmpImplicitTask = 1,  // a thread's implicit task of a region (its join barrier included)
  kOmpTask = 2,          // an explicit task's body
  kOmpBarrier = 3,       // a team barrier (the barrier construct, or a work share's implicit one)
  kOmpJoinBarrier = 4,   // the implicit barrier at the end of a parallel region
  kOmpTaskwait = 5,
  kOmpTaskgroup = 6,     // the end of a taskgroup (waiting for its tasks)
  kOmpConstructs = 7
};

struct TraceEvent {
  std::uint64_t t0;
  std::uint64_t t1;
  std::uint64_t a;
  std::uint64_t b;
  std::uint32_t c;
  std::uint16_t d;
  std::uint8_t kind;
  std::uint8_t pad;
};

struct TraceRing {
  TraceEvent* events = nullptr;
  std::uint64_t mask = 0;  // capacity - 1 (a power of two)
  // Written by the owner (the slot's thread) only.
  std::atomic<std::uint64_t> count{0};
  std::atomic<std::uint64_t> lost{0};
  // Written when a session starts (before the ring is published to the
  // worker); read by the owner at each event.
  std::atomic<std::uint64_t> base{0};
  std::atomic<std::uint32_t> kinds{0};  // bit k: record events of kind k
};

// Time stamps: the time stamp counter (invariant on the x86 machines canopy
// runs on; converted to nanoseconds with the rate measured over the
// session), else the monotonic clock in ns (vDSO, no system call).
inline std::uint64_t trace_clock() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
#endif
}

// A label for a callable type: the address of this function's pretty name
// ("... [with T = main()::<lambda()>]"), a constant; src/trace cuts the
// type out of it when it writes the file.
template <class T>
const char* trace_label() noexcept {
  return __PRETTY_FUNCTION__;
}

inline TraceRing* trace_ring(const Worker* w) noexcept { return w->trace.load(std::memory_order_acquire); }

// Whether w traces: the one test every task pays when tracing is off (two
// instructions on x86-64, flag.hpp). The traced path loads the ring again
// (acquire) before it uses it.
[[gnu::always_inline]] inline bool traces(const Worker* w) noexcept { return nonzero_relaxed(w->trace); }

inline void trace_put(TraceRing* r, TraceKind kind, std::uint64_t t0, std::uint64_t t1, std::uint64_t a,
                      std::uint64_t b, std::uint32_t c, std::uint16_t d) noexcept {
  if ((r->kinds.load(std::memory_order_relaxed) & (1u << kind)) == 0) return;
  const std::uint64_t n = r->count.load(std::memory_order_relaxed);
  if (n - r->base.load(std::memory_order_relaxed) > r->mask) {
    r->lost.store(r->lost.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return;
  }
  r->events[n & r->mask] = TraceEvent{t0, t1, a, b, c, d, kind, 0};
  r->count.store(n + 1, std::memory_order_release);
}

// An instant event of worker w, if it traces.
inline void trace_instant(Worker* w, TraceKind kind, std::uint64_t a, std::uint64_t b, std::uint32_t c,
                          std::uint16_t d) noexcept {
  if (TraceRing* r = trace_ring(w)) [[unlikely]] {
    const std::uint64_t t = trace_clock();
    trace_put(r, kind, t, t, a, b, c, d);
  }
}

// The span of body() (recorded when it ends, also by an exception).
struct TraceSpanEnd {
  TraceRing* r;
  TraceKind kind;
  std::uint64_t t0, a, b;
  std::uint32_t c;
  ~TraceSpanEnd() { trace_put(r, kind, t0, trace_clock(), a, b, c, 0); }
};

// The traced path of trace_call, out of line (the untraced one keeps no
// registers for it). The session may have stopped since the caller's test.
template <class Body>
[[gnu::noinline]] void trace_call_traced(Worker* w, TraceKind kind, const void* a, std::uint64_t b,
                                         std::uint32_t c, Body& body) {
  TraceRing* r = trace_ring(w);
  if (r == nullptr) return body();
  TraceSpanEnd end{r, kind, trace_clock(), reinterpret_cast<std::uint64_t>(a), b, c};
  body();
}

template <class Body>
[[gnu::always_inline]] inline void trace_call(Worker* w, TraceKind kind, const void* a, std::uint64_t b,
                                              std::uint32_t c, Body&& body) {
  if (traces(w)) [[unlikely]]
    return trace_call_traced(w, kind, a, b, c, body);
  body();
}

// A span whose ends are in different places (a park, a search): its start
// (0 when w does not trace), then its end.
inline std::uint64_t trace_begin(const Worker* w) noexcept { return trace_ring(w) ? trace_clock() : 0; }
inline void trace_end(Worker* w, TraceKind kind, std::uint64_t t0) noexcept {
  if (t0 != 0)
    if (TraceRing* r = trace_ring(w)) trace_put(r, kind, t0, trace_clock(), 0, 0, 0, 0);
}

// The traced path of a task kind's run function, out of line so that the
// untraced path keeps its code (its tail calls, no stack frame): runs
// Body(task, w) inside a task span labelled with the callable type F. It
// takes the run function's own arguments in their order, so that the
// untraced path's jump to it moves no register. The caller tested
// traces(w) first; the session may have stopped since.
template <auto Body, class F, class T>
[[gnu::noinline]] auto trace_task(T task, Worker* w) {
  TraceRing* r = trace_ring(w);
  if (r == nullptr) return Body(task, w);
  TraceSpanEnd end{r, kTraceTask, trace_clock(), reinterpret_cast<std::uint64_t>(trace_label<F>()), 0, 0};
  return Body(task, w);
}

// Threads of a runtime that is not a RuntimeCore (canopy's OpenMP runtime,
// whose threads are its own): each registers a slot once and keeps it for
// the life of the process. A session gives the slot a ring (made at its
// first session, never freed) by storing the ring's address in `word`;
// bit 0 of `word` belongs to the slot's owner (the OpenMP runtime marks
// the threads an OMPT tool observes with it) and the session keeps it, so
// the owner tests one word for "traced or observed". Rows: process `group`
// (trace_register_group), thread `index`.
struct TraceThreadSlot {
  std::atomic<std::uintptr_t> word{0};
  int group = 0;
  int index = 0;
};
inline TraceRing* trace_ring(const TraceThreadSlot& s) noexcept {
  return reinterpret_cast<TraceRing*>(s.word.load(std::memory_order_acquire) & ~std::uintptr_t{1});
}
// A group of rows (one process in the trace) named `name`; reads
// CANOPY_TRACE and its companions if no runtime did yet (throws
// canopy::Error for a bad value). Returns the group's id.
int trace_register_group(const char* name);
// Registers a thread's slot (its ring armed now if a session records);
// `name` names its row.
void trace_register_thread(TraceThreadSlot* slot, int group, int index, const char* name);

// Events of threads that hold no worker slot (a data move from the main
// thread): a lock-protected buffer of the session (src/trace). Not a hot
// path. Does nothing when no session records `kind`.
void trace_outside(TraceKind kind, std::uint64_t a, std::uint64_t b, std::uint32_t c, std::uint16_t d) noexcept;
// The worker's ring if it has one, else the outside buffer.
void trace_event_anywhere(TraceKind kind, std::uint64_t a, std::uint64_t b, std::uint32_t c,
                          std::uint16_t d) noexcept;

// Runtimes register with the tracer when made (an active session, or
// CANOPY_TRACE, gives their slots rings) and leave it when destroyed (after
// their threads ended: the session keeps a copy of their events).
struct RuntimeCore;
void trace_attach(RuntimeCore* rt);
void trace_detach(RuntimeCore* rt) noexcept;

}  // namespace canopy::detail
