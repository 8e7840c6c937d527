// Data-flow tasks: a task lists the data handles it reads and writes, and
// runs when every task submitted before it that conflicts with it (read
// after write, write after read, write after write) has finished; tasks
// that do not conflict run in parallel. See docs/dataflow.md.
//
//   canopy::Data a = canopy::data_allocate(n * sizeof(double)), b = ...;
//   canopy::submit({canopy::write(a)}, [=] { fill(a); });
//   canopy::submit({canopy::read(a), canopy::write(b)}, [=] { copy(a, b); });  // after fill
//   canopy::submit({canopy::read(a)}, [=] { print(a); });                      // with copy
//   canopy::wait_all();                    // helps; rethrows a task's exception
//
// With an explicit runtime, submit(rt, ...) and wait_all(rt) (or wait_all(),
// which covers every runtime the calling thread submitted to).
//
// Order: tasks submitted by one thread run as if in program order. Tasks
// submitted by several threads at once are ordered as if each submission
// happened at one instant (a serializable order: every task comes after the
// conflicting tasks whose submission completed before its own began).
// Nesting: a task may submit tasks; they are ordered among themselves (its
// children), not with the tasks outside, and the task's own dependents
// start only when it and every task it submitted have finished.
// Exceptions: the first exception a task throws is rethrown by the next
// wait_all() or wait(Data) of the same flow; tasks that depend on the task
// that threw (directly or through other such tasks) are cancelled: they do
// not run, and their own dependents are cancelled in turn.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <new>
#include <span>
#include <type_traits>
#include <utility>

#include "canopy/affinity.hpp"
#include "canopy/data.hpp"
#include "canopy/detail/trace.hpp"
#include "canopy/runtime.hpp"

namespace canopy {

enum class AccessMode : std::uint8_t { Read, Write, ReadWrite };

struct Access {
  Data data;
  AccessMode mode = AccessMode::Read;
};

inline Access read(Data d) { return {d, AccessMode::Read}; }
inline Access write(Data d) { return {d, AccessMode::Write}; }
inline Access read_write(Data d) { return {d, AccessMode::ReadWrite}; }

// The most accesses one task may list (after merging repeats of a handle).
inline constexpr std::size_t kMaxAccesses = 256;

// Bytes that tasks accessed through a handle, split by whether the bytes
// lived on the NUMA node of the worker that ran the task (as far as canopy
// knows where the handle's pages are: bytes of pages not placed yet count
// in neither), and how many task accesses there were.
struct DataLocality {
  std::uint64_t local_bytes = 0;
  std::uint64_t remote_bytes = 0;
  std::uint64_t accesses = 0;
};

namespace detail::flow {

// What the out-of-line submission needs to know about a callable, per
// forwarding type F (a copy from an lvalue, a move from an rvalue).
struct FnOps {
  std::size_t size;
  std::size_t align;
  void (*invoke)(void* fn);
  void (*destroy)(void* fn);  // nullptr: trivially destructible
  // Constructs the callable at `dst` from `src` (the argument of submit).
  void (*construct)(void* dst, void* src);
  // Makes the callable from `src` here, sets *made, calls it and destroys
  // it (a task run at submission: one call, the callable on this frame). An
  // exception before *made is set comes from making it, after from the call.
  void (*run_here)(void* src, bool* made);
  // The label of its spans in a trace (the callable's type; canopy/trace.hpp).
  const char* (*label)() noexcept;
};

template <class F>
struct FnOpsOf {
  using Fn = std::decay_t<F>;
  static void invoke(void* p) { (*static_cast<Fn*>(p))(); }
  static void destroy(void* p) { static_cast<Fn*>(p)->~Fn(); }
  static void construct(void* dst, void* src) {
    ::new (dst) Fn(std::forward<F>(*static_cast<std::remove_reference_t<F>*>(src)));
  }
  static void run_here(void* src, bool* made) {
    Fn fn(std::forward<F>(*static_cast<std::remove_reference_t<F>*>(src)));
    *made = true;
    fn();
  }
};

template <class F>
inline constexpr FnOps kFnOps = {sizeof(std::decay_t<F>), alignof(std::decay_t<F>), &FnOpsOf<F>::invoke,
                                 std::is_trivially_destructible_v<std::decay_t<F>> ? nullptr : &FnOpsOf<F>::destroy,
                                 &FnOpsOf<F>::construct, &FnOpsOf<F>::run_here, &trace_label<std::decay_t<F>>};

// submit: rt == nullptr: the calling worker's runtime, else default_runtime().
// The waits: rt == nullptr: the scope of wait_all() / wait(Data) (wait.cpp).
void submit(RuntimeCore* rt, const Access* accesses, std::size_t count, const Affinity& affinity, const FnOps& ops,
            void* src);
void wait_all(RuntimeCore* rt);
void wait(RuntimeCore* rt, Data d);

}  // namespace detail::flow

// Submits f (a callable with no arguments) to run after the tasks it
// conflicts with. Throws canopy::Error for a null or freed handle, or more
// than kMaxAccesses distinct handles. `affinity` says where it should run;
// without one, it goes where the data it writes lives (owner computes,
// RuntimeOptions::data_affinity) when the runtime spans several NUMA nodes.
template <class F>
void submit(std::span<const Access> accesses, F&& f, Affinity affinity = {}) {
  using Fn = std::decay_t<F>;
  static_assert(std::is_invocable_v<Fn&>, "submit needs a callable with no arguments");
  static_assert(alignof(Fn) <= 64, "submit: callables aligned to more than 64 bytes are not supported");
  detail::flow::submit(nullptr, accesses.data(), accesses.size(), affinity, detail::flow::kFnOps<F&&>,
                       const_cast<void*>(static_cast<const void*>(&f)));
}
template <class F>
void submit(std::initializer_list<Access> accesses, F&& f, Affinity affinity = {}) {
  submit(std::span<const Access>(accesses.begin(), accesses.size()), std::forward<F>(f), affinity);
}
template <class F>
void submit(Runtime& rt, std::span<const Access> accesses, F&& f, Affinity affinity = {}) {
  using Fn = std::decay_t<F>;
  static_assert(std::is_invocable_v<Fn&>, "submit needs a callable with no arguments");
  static_assert(alignof(Fn) <= 64, "submit: callables aligned to more than 64 bytes are not supported");
  detail::flow::submit(rt.core(), accesses.data(), accesses.size(), affinity, detail::flow::kFnOps<F&&>,
                       const_cast<void*>(static_cast<const void*>(&f)));
}
template <class F>
void submit(Runtime& rt, std::initializer_list<Access> accesses, F&& f, Affinity affinity = {}) {
  submit(rt, std::span<const Access>(accesses.begin(), accesses.size()), std::forward<F>(f), affinity);
}

// Waits until the tasks it covers have finished, running tasks meanwhile;
// then rethrows the first exception a task of those flows threw, if any.
// wait_all(rt): every task submitted so far to rt (inside a task of rt: its
// children). wait_all(): everything the calling thread submitted, whichever
// runtime it went to (submit(rt, ...) included): outside any data-flow task,
// the top level of the calling worker's runtime, of every runtime this
// thread submitted to since it last waited there, and of the default
// runtime if it exists (never made just for this); inside a task, its
// children and what the task submitted to other runtimes. A flow is waited
// for until it is idle at some instant: tasks that other threads submit
// there during the wait are waited for too. (docs/dataflow.md, "Which tasks
// a wait covers".)
void wait_all();
void wait_all(Runtime& rt);
// Waits for every task submitted so far that accesses d, in the flows the
// matching wait_all covers, then rethrows their first exception, if any.
void wait(Data d);
void wait(Runtime& rt, Data d);

// Totals over every task that accessed d since it was allocated or
// registered (throws canopy::Error for a null or freed handle).
DataLocality data_locality(Data d);

}  // namespace canopy
