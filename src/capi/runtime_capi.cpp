// C API of the task runtime (canopy_runtime.h) over canopy::Runtime and
// canopy::TaskGroup, with the guard of the other C entry points (capi.hpp):
// no exception crosses the boundary, every failure has a status and a
// message for canopy_last_error().
#include <fmt/format.h>

#include <cstring>
#include <memory>

#include "canopy/mapping.hpp"
#include "canopy/runtime.hpp"
#include "canopy_runtime.h"
#include "capi/capi.hpp"

using namespace canopy;
using namespace canopy::capi;

struct canopy_task_group {
  TaskGroup g;
  explicit canopy_task_group(Runtime& rt) : g(rt) {}
};

namespace {

RuntimeOptions from_c(const canopy_runtime_options_t& c) {
  RuntimeOptions o;
  if (c.num_threads < 0) fail(CANOPY_EINVAL, fmt::format("num_threads = {}: expected 0 (one per core) or more", c.num_threads));
  o.num_threads = c.num_threads;
  // Read as an int: a C caller may store any value in the enum, and loading
  // an out-of-range enum is undefined in C++.
  int bind = 0;
  static_assert(sizeof bind == sizeof c.bind);
  std::memcpy(&bind, &c.bind, sizeof bind);
  switch (bind) {
    case CANOPY_BIND_CORE: o.bind = BindMode::Core; break;
    case CANOPY_BIND_PU: o.bind = BindMode::PU; break;
    case CANOPY_BIND_NONE: o.bind = BindMode::None; break;
    default: fail(CANOPY_EINVAL, fmt::format("bind = {}: expected CANOPY_BIND_CORE, _PU or _NONE", bind));
  }
  check_flags(c.flags, CANOPY_RUNTIME_ALL_FLAGS);
  if (c.policy && *c.policy) {
    find_policy(c.policy);
    o.policy = c.policy;
  }
  o.display_affinity = (c.flags & CANOPY_RUNTIME_DISPLAY_AFFINITY) != 0;
  o.stats = (c.flags & CANOPY_RUNTIME_STATS) != 0;
  int da = 0;
  static_assert(sizeof da == sizeof c.data_affinity);
  std::memcpy(&da, &c.data_affinity, sizeof da);
  switch (da) {
    case CANOPY_DATA_AFFINITY_WRITE: o.data_affinity = DataAffinity::Write; break;
    case CANOPY_DATA_AFFINITY_READ: o.data_affinity = DataAffinity::Read; break;
    case CANOPY_DATA_AFFINITY_NONE: o.data_affinity = DataAffinity::None; break;
    default:
      fail(CANOPY_EINVAL,
           fmt::format("data_affinity = {}: expected CANOPY_DATA_AFFINITY_WRITE, _READ or _NONE", da));
  }
  return o;
}

Affinity affinity_from_c(const canopy_affinity_t& c) {
  int kind = 0;  // read as an int, as `bind` above
  static_assert(sizeof kind == sizeof c.kind);
  std::memcpy(&kind, &c.kind, sizeof kind);
  check_flags(c.flags, CANOPY_AFFINITY_ALL_FLAGS);
  const bool strict = (c.flags & CANOPY_AFFINITY_STRICT) != 0;
  switch (kind) {
    case CANOPY_AFFINITY_NONE: return {};
    case CANOPY_AFFINITY_WORKER: return Affinity::worker(c.index, strict);
    case CANOPY_AFFINITY_NODE: return Affinity::node(c.index, strict);
    case CANOPY_AFFINITY_DATA: return Affinity::near(Data{c.data.index, c.data.generation}, strict);
    default:
      fail(CANOPY_EINVAL,
           fmt::format("affinity kind = {}: expected CANOPY_AFFINITY_NONE, _WORKER, _NODE or _DATA", kind));
  }
}

}  // namespace

extern "C" {

canopy_status_t canopy_runtime_create(canopy_runtime_t** out, const canopy_runtime_options_t* options) {
  return guard("canopy_runtime_create", CANOPY_EINVAL, [&] {
    need(out, "out");
    *out = nullptr;
    const RuntimeOptions o = options ? from_c(*options) : RuntimeOptions::from_env();
    *out = new canopy_runtime(o);
  });
}

void canopy_runtime_destroy(canopy_runtime_t* rt) { delete rt; }

canopy_status_t canopy_runtime_num_workers(const canopy_runtime_t* rt, int* out) {
  return guard("canopy_runtime_num_workers", CANOPY_EINVAL, [&] {
    need(out, "out") = need(rt, "rt").rt.num_workers();
  });
}

canopy_status_t canopy_runtime_worker_pu(const canopy_runtime_t* rt, int worker, int* pu, int* os_index) {
  return guard("canopy_runtime_worker_pu", CANOPY_EINVAL, [&] {
    const Runtime& r = need(rt, "rt").rt;
    check_index(worker, r.num_workers(), "worker");
    if (pu) *pu = r.placement()[worker].pu;
    if (os_index) *os_index = r.placement()[worker].pu_os;
  });
}

canopy_status_t canopy_runtime_worker_index(int* out) {
  return guard("canopy_runtime_worker_index", CANOPY_EINVAL, [&] { need(out, "out") = Runtime::this_worker_index(); });
}

canopy_status_t canopy_runtime_num_numa_nodes(const canopy_runtime_t* rt, int* out) {
  return guard("canopy_runtime_num_numa_nodes", CANOPY_EINVAL, [&] {
    need(out, "out") = need(rt, "rt").rt.num_numa_nodes();
  });
}

canopy_status_t canopy_runtime_worker_numa_node(const canopy_runtime_t* rt, int worker, int* out) {
  return guard("canopy_runtime_worker_numa_node", CANOPY_EINVAL, [&] {
    const Runtime& r = need(rt, "rt").rt;
    need(out, "out");
    check_index(worker, r.num_workers(), "worker");
    *out = r.worker_numa_node(worker);
  });
}

canopy_status_t canopy_runtime_run(canopy_runtime_t* rt, void (*fn)(void*), void* arg) {
  return guard("canopy_runtime_run", CANOPY_EINVAL, [&] {
    Runtime& r = need(rt, "rt").rt;
    if (!fn) fail(CANOPY_EINVAL, "fn is NULL");
    r.run([&] { fn(arg); });
  });
}

canopy_status_t canopy_task_group_create(canopy_task_group_t** out, canopy_runtime_t* rt) {
  return guard("canopy_task_group_create", CANOPY_EINVAL, [&] {
    need(out, "out");
    *out = nullptr;
    *out = new canopy_task_group(need(rt, "rt").rt);
  });
}

canopy_status_t canopy_task_group_spawn(canopy_task_group_t* group, void (*fn)(void*), void* arg) {
  return guard("canopy_task_group_spawn", CANOPY_EINVAL, [&] {
    TaskGroup& g = need(group, "group").g;
    if (!fn) fail(CANOPY_EINVAL, "fn is NULL");
    g.spawn([fn, arg] { fn(arg); });
  });
}

canopy_status_t canopy_task_group_spawn_affinity(canopy_task_group_t* group, const canopy_affinity_t* affinity,
                                                 void (*fn)(void*), void* arg) {
  return guard("canopy_task_group_spawn_affinity", CANOPY_EINVAL, [&] {
    TaskGroup& g = need(group, "group").g;
    if (!fn) fail(CANOPY_EINVAL, "fn is NULL");
    const Affinity a = affinity ? affinity_from_c(*affinity) : Affinity{};
    g.spawn(a, [fn, arg] { fn(arg); });
  });
}

canopy_status_t canopy_task_group_wait(canopy_task_group_t* group) {
  return guard("canopy_task_group_wait", CANOPY_EINVAL, [&] { need(group, "group").g.wait(); });
}

void canopy_task_group_destroy(canopy_task_group_t* group) { delete group; }

canopy_status_t canopy_parallel_for(canopy_runtime_t* rt, int64_t begin, int64_t end, int64_t grain,
                                    void (*body)(int64_t, int64_t, void*), void* arg) {
  return guard("canopy_parallel_for", CANOPY_EINVAL, [&] {
    Runtime& r = need(rt, "rt").rt;
    if (!body) fail(CANOPY_EINVAL, "body is NULL");
    if (grain < 0) fail(CANOPY_EINVAL, fmt::format("grain = {}: expected 0 (chosen by the runtime) or more", grain));
    r.run([&] { parallel_for(Range{begin, end, grain}, [&](std::int64_t lo, std::int64_t hi) { body(lo, hi, arg); }); });
  });
}

}  // extern "C"
