// Private to src/capi/: what the C handles hold, and the one guard that
// every extern "C" entry point runs its body in. The guard turns any C++
// exception into a canopy_status_t and keeps the message for
// canopy_last_error(), so that nothing thrown ever crosses the C boundary.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "canopy.h"
#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "canopy/placement.hpp"
#include "canopy/runtime.hpp"
#include "canopy/topology.hpp"
#include "canopy_runtime.h"

struct canopy_topology {
  canopy::Topology topo;
};

struct canopy_matrix {
  canopy::CommMatrix m;
};

// A placement keeps its own copy of the topology (the copy shares hwloc's
// tree) so that accessors and binding need no second handle.
struct canopy_placement {
  canopy::Placement p;
  canopy::Topology topo;
};

struct canopy_runtime {
  canopy::Runtime rt;
  explicit canopy_runtime(const canopy::RuntimeOptions& o) : rt(o) {}
};

// The outcome of planning, shared by every thread of a team (canopy_omp.h).
struct canopy_team {
  int num_threads = 0;
  canopy_status_t status = CANOPY_OK;
  std::string message;  // why planning failed, without a function prefix
  std::unique_ptr<canopy_placement> placement;
};

namespace canopy::capi {

// Thrown by the C layer's own checks, with the exact status to return.
struct Failure {
  canopy_status_t status;
  std::string message;
};

[[noreturn]] inline void fail(canopy_status_t status, std::string message) {
  throw Failure{status, std::move(message)};
}

// Long enough for a file name, a line number and a list of policy names;
// longer messages are cut. A fixed buffer: recording an error must not
// allocate (it may be reporting that memory ran out).
inline constexpr std::size_t kMessageSize = 1024;

struct Outcome {
  canopy_status_t status = CANOPY_OK;
  char message[kMessageSize] = "";
};

// Stores "fn: message" as the calling thread's last error (or clears it when
// the outcome is CANOPY_OK).
void record(const char* fn, const Outcome& o) noexcept;

// Runs f and translates what it throws. `bad_input` is the status that
// canopy::Error of kind BadInput means for this entry point (EINVAL for
// arguments, EPARSE for file content); kind System means ESYSTEM.
template <class F>
Outcome capture(canopy_status_t bad_input, F&& f) noexcept {
  Outcome o;
  auto set = [&o](canopy_status_t s, const char* msg) {
    o.status = s;
    std::snprintf(o.message, sizeof o.message, "%s", msg);
  };
  try {
    f();
  } catch (const Failure& e) {
    set(e.status, e.message.c_str());
  } catch (const Error& e) {
    set(e.kind() == ErrorKind::BadInput ? bad_input : CANOPY_ESYSTEM, e.what());
  } catch (const std::bad_alloc&) {
    set(CANOPY_ENOMEM, "out of memory");
  } catch (const std::exception& e) {
    set(CANOPY_EUNKNOWN, e.what());
  } catch (...) {
    set(CANOPY_EUNKNOWN, "unknown exception");
  }
  return o;
}

template <class F>
canopy_status_t guard(const char* fn, canopy_status_t bad_input, F&& f) noexcept {
  Outcome o = capture(bad_input, std::forward<F>(f));
  record(fn, o);
  return o.status;
}

// EINVAL "<what> is NULL" unless p is set.
template <class T>
T& need(T* p, const char* what) {
  if (!p) fail(CANOPY_EINVAL, std::string(what) + " is NULL");
  return *p;
}

// The same for a C string argument (returns it).
inline const char* need_str(const char* s, const char* what) {
  if (!s) fail(CANOPY_EINVAL, std::string(what) + " is NULL");
  return s;
}

// EINVAL naming the unknown bits of a flag word.
void check_flags(unsigned flags, unsigned allowed);

// The buffer convention of canopy.h: stores the needed size, copies what
// fits, and fails with ENOBUFS when the buffer is too small.
void copy_string(const std::string& s, char* buf, std::size_t size, std::size_t* needed);
// The same for arrays (no NUL): `count` receives values.size(); a NULL
// array with capacity 0 only asks for the count.
template <class T>
void copy_array(const std::vector<T>& values, T* out, std::size_t capacity, std::size_t* count) {
  if (count) *count = values.size();
  if (!out) {
    if (capacity != 0) fail(CANOPY_EINVAL, "the array is NULL but its capacity is " + std::to_string(capacity));
    return;
  }
  const std::size_t n = std::min(capacity, values.size());
  if (n) std::memcpy(out, values.data(), n * sizeof(T));
  if (capacity < values.size())
    fail(CANOPY_ENOBUFS, "array of " + std::to_string(capacity) + " entries is too small: " +
                             std::to_string(values.size()) + " needed");
}

// Map options (flags + weights) from the C flag word.
void apply_flags(unsigned flags, bool& pack, Granularity& granularity, Helpers& helpers);

// OS indexes of the logical PUs task `task` is bound to.
std::vector<int> binding_os(const canopy_placement& pl, int task);

// ERANGE unless 0 <= i < n.
void check_index(int i, int n, const char* what);

}  // namespace canopy::capi
