// C API of data-flow tasks (canopy_dataflow.h) over canopy/dataflow.hpp,
// with the guard of the other C entry points (capi.hpp). A given runtime
// is entered through canopy_runtime_run (its handle's layout belongs to
// runtime_capi.cpp), inside which the C++ calls use the calling worker's
// runtime.
#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <vector>

#include "canopy/dataflow.hpp"
#include "canopy/taskgraph.hpp"
#include "canopy_dataflow.h"
#include "capi/capi.hpp"

using namespace canopy;
using namespace canopy::capi;

namespace {

Data data_from_c(canopy_data_t d) { return Data{d.index, d.generation}; }

AccessMode mode_from_c(const canopy_access_t& a, std::size_t i) {
  // Read as an int: a C caller may store any value in the enum.
  int m = 0;
  static_assert(sizeof m == sizeof a.mode);
  std::memcpy(&m, &a.mode, sizeof m);
  switch (m) {
    case CANOPY_ACCESS_READ: return AccessMode::Read;
    case CANOPY_ACCESS_WRITE: return AccessMode::Write;
    case CANOPY_ACCESS_READ_WRITE: return AccessMode::ReadWrite;
    default:
      fail(CANOPY_EINVAL,
           fmt::format("accesses[{}].mode = {}: expected CANOPY_ACCESS_READ, _WRITE or _READ_WRITE", i, m));
  }
}

Affinity affinity_from_c(const canopy_affinity_t& c) {
  int kind = 0;
  static_assert(sizeof kind == sizeof c.kind);
  std::memcpy(&kind, &c.kind, sizeof kind);
  check_flags(c.flags, CANOPY_AFFINITY_ALL_FLAGS);
  const bool strict = (c.flags & CANOPY_AFFINITY_STRICT) != 0;
  switch (kind) {
    case CANOPY_AFFINITY_NONE: return Affinity{};
    case CANOPY_AFFINITY_WORKER: return Affinity::worker(c.index, strict);
    case CANOPY_AFFINITY_NODE: return Affinity::node(c.index, strict);
    case CANOPY_AFFINITY_DATA: {
      const Data d = data_from_c(c.data);
      detail::data_entry(d);  // a null or freed handle is an error now, not when the task is ready
      return Affinity::near(d, strict);
    }
    default:
      fail(CANOPY_EINVAL,
           fmt::format("affinity kind = {}: expected CANOPY_AFFINITY_NONE, _WORKER, _NODE or _DATA", kind));
  }
}

// Runs f inside `rt` (or the current/default runtime when NULL); an
// exception of f comes out of here as is.
template <class F>
void in_runtime(canopy_runtime_t* rt, F&& f) {
  if (!rt) {
    f();
    return;
  }
  struct Ctx {
    F* f;
    std::exception_ptr error;
  } ctx{&f, nullptr};
  const canopy_status_t s = canopy_runtime_run(
      rt,
      [](void* p) {
        auto* c = static_cast<Ctx*>(p);
        try {
          (*c->f)();
        } catch (...) {
          c->error = std::current_exception();
        }
      },
      &ctx);
  if (ctx.error) std::rethrow_exception(ctx.error);
  if (s != CANOPY_OK) fail(s, canopy_last_error());
}

struct CTask {
  void (*fn)(void*);
  void* arg;
  void operator()() const { fn(arg); }
};

// The accesses of a C call, checked and converted (into `acc`).
void accesses_from_c(const canopy_access_t* accesses, std::size_t count, Access* acc) {
  if (count > 0 && !accesses) fail(CANOPY_EINVAL, fmt::format("accesses is NULL but count is {}", count));
  if (count > CANOPY_MAX_ACCESSES)
    fail(CANOPY_ERANGE, fmt::format("count = {}: at most CANOPY_MAX_ACCESSES ({})", count, CANOPY_MAX_ACCESSES));
  for (std::size_t i = 0; i < count; ++i) acc[i] = Access{data_from_c(accesses[i].data), mode_from_c(accesses[i], i)};
}

}  // namespace

struct canopy_taskgraph {
  TaskGraph graph;
};

extern "C" {

canopy_status_t canopy_submit(canopy_runtime_t* rt, const canopy_access_t* accesses, size_t count,
                              const canopy_affinity_t* affinity, void (*fn)(void*), void* arg) {
  return guard("canopy_submit", CANOPY_EINVAL, [&] {
    if (!fn) fail(CANOPY_EINVAL, "fn is NULL");
    Access acc[CANOPY_MAX_ACCESSES];
    accesses_from_c(accesses, count, acc);
    const Affinity a = affinity ? affinity_from_c(*affinity) : Affinity{};
    in_runtime(rt, [&] { submit(std::span<const Access>(acc, count), CTask{fn, arg}, a); });
  });
}

canopy_status_t canopy_wait_all(canopy_runtime_t* rt) {
  // NULL: wait_all() (everything this thread submitted, whichever runtime);
  // a runtime: wait_all(rt), that runtime only.
  return guard("canopy_wait_all", CANOPY_EINVAL, [&] {
    in_runtime(rt, [rt] { detail::flow::wait_all(rt ? detail::tls_worker->rt : nullptr); });
  });
}

canopy_status_t canopy_wait_data(canopy_runtime_t* rt, canopy_data_t data) {
  return guard("canopy_wait_data", CANOPY_EINVAL, [&] {
    in_runtime(rt, [&] { detail::flow::wait(rt ? detail::tls_worker->rt : nullptr, data_from_c(data)); });
  });
}

canopy_status_t canopy_data_locality(canopy_data_t data, uint64_t* local_bytes, uint64_t* remote_bytes,
                                     uint64_t* accesses) {
  return guard("canopy_data_locality", CANOPY_EINVAL, [&] {
    const DataLocality l = data_locality(data_from_c(data));
    if (local_bytes) *local_bytes = l.local_bytes;
    if (remote_bytes) *remote_bytes = l.remote_bytes;
    if (accesses) *accesses = l.accesses;
  });
}

canopy_status_t canopy_taskgraph_create(canopy_taskgraph_t** out) {
  return guard("canopy_taskgraph_create", CANOPY_EINVAL, [&] {
    if (!out) fail(CANOPY_EINVAL, "out is NULL");
    *out = new canopy_taskgraph;
  });
}

canopy_status_t canopy_taskgraph_add(canopy_taskgraph_t* graph, const canopy_access_t* accesses, size_t count,
                                     const canopy_affinity_t* affinity, void (*fn)(void*), void* arg) {
  return guard("canopy_taskgraph_add", CANOPY_EINVAL, [&] {
    if (!graph) fail(CANOPY_EINVAL, "graph is NULL");
    if (!fn) fail(CANOPY_EINVAL, "fn is NULL");
    Access acc[CANOPY_MAX_ACCESSES];
    accesses_from_c(accesses, count, acc);
    const Affinity a = affinity ? affinity_from_c(*affinity) : Affinity{};
    graph->graph.add(std::span<const Access>(acc, count), CTask{fn, arg}, a);
  });
}

canopy_status_t canopy_taskgraph_run(canopy_taskgraph_t* graph, canopy_runtime_t* rt) {
  return guard("canopy_taskgraph_run", CANOPY_EINVAL, [&] {
    if (!graph) fail(CANOPY_EINVAL, "graph is NULL");
    in_runtime(rt, [&] { graph->graph.run(); });
  });
}

canopy_status_t canopy_taskgraph_set_affinity(canopy_taskgraph_t* graph, const char* mode) {
  return guard("canopy_taskgraph_set_affinity", CANOPY_EINVAL, [&] {
    if (!graph) fail(CANOPY_EINVAL, "graph is NULL");
    graph->graph.set_affinity(parse_auto_affinity(need_str(mode, "mode")));
  });
}

canopy_status_t canopy_taskgraph_matrix(const canopy_taskgraph_t* graph, canopy_matrix_t** out) {
  return guard("canopy_taskgraph_matrix", CANOPY_EINVAL, [&] {
    if (!graph) fail(CANOPY_EINVAL, "graph is NULL");
    if (!out) fail(CANOPY_EINVAL, "out is NULL");
    *out = new canopy_matrix{graph->graph.matrix().matrix};
  });
}

canopy_status_t canopy_taskgraph_task_label(const canopy_taskgraph_t* graph, size_t task, char* buf, size_t size,
                                            size_t* needed) {
  return guard("canopy_taskgraph_task_label", CANOPY_EINVAL, [&] {
    if (!graph) fail(CANOPY_EINVAL, "graph is NULL");
    const TaskMatrix m = graph->graph.matrix();
    if (task >= m.labels.size())
      fail(CANOPY_ERANGE, fmt::format("task {}: the graph has {} tasks", task, m.labels.size()));
    copy_string(m.labels[task], buf, size, needed);
  });
}

canopy_status_t canopy_placement_create_for_runtime(canopy_placement_t** out, canopy_runtime_t* rt,
                                                    const canopy_matrix_t* matrix, const char* policy) {
  return guard("canopy_placement_create_for_runtime", CANOPY_EINVAL, [&] {
    if (!out) fail(CANOPY_EINVAL, "out is NULL");
    if (!matrix) fail(CANOPY_EINVAL, "matrix is NULL");
    Runtime& r = rt ? rt->rt : default_runtime();
    TaskMatrix m;
    m.matrix = matrix->m;
    Placement p = compute_placement(r, m, policy ? policy : "");
    *out = new canopy_placement{std::move(p), worker_topology(r)};
  });
}

canopy_status_t canopy_taskgraph_apply(canopy_taskgraph_t* graph, canopy_runtime_t* rt,
                                       const canopy_placement_t* placement) {
  return guard("canopy_taskgraph_apply", CANOPY_EINVAL, [&] {
    if (!graph) fail(CANOPY_EINVAL, "graph is NULL");
    if (!placement) fail(CANOPY_EINVAL, "placement is NULL");
    graph->graph.apply(rt ? rt->rt : default_runtime(), placement->p);
  });
}

canopy_status_t canopy_taskgraph_task_worker(const canopy_taskgraph_t* graph, size_t task, int* worker) {
  return guard("canopy_taskgraph_task_worker", CANOPY_EINVAL, [&] {
    if (!graph) fail(CANOPY_EINVAL, "graph is NULL");
    if (!worker) fail(CANOPY_EINVAL, "worker is NULL");
    if (task >= graph->graph.size())
      fail(CANOPY_ERANGE, fmt::format("task {}: the graph has {} tasks", task, graph->graph.size()));
    const std::vector<int> w = graph->graph.task_workers();
    *worker = task < w.size() ? w[task] : -1;
  });
}

canopy_status_t canopy_stream_matrix(canopy_runtime_t* rt, canopy_matrix_t** out) {
  return guard("canopy_stream_matrix", CANOPY_EINVAL, [&] {
    if (!out) fail(CANOPY_EINVAL, "out is NULL");
    *out = new canopy_matrix{stream_matrix(rt ? rt->rt : default_runtime()).matrix};
  });
}

canopy_status_t canopy_stream_apply(canopy_runtime_t* rt, const canopy_placement_t* placement) {
  return guard("canopy_stream_apply", CANOPY_EINVAL, [&] {
    if (!placement) fail(CANOPY_EINVAL, "placement is NULL");
    apply_stream_placement(rt ? rt->rt : default_runtime(), placement->p);
  });
}

canopy_status_t canopy_stream_task_worker(canopy_runtime_t* rt, size_t task, int* worker) {
  return guard("canopy_stream_task_worker", CANOPY_EINVAL, [&] {
    if (!worker) fail(CANOPY_EINVAL, "worker is NULL");
    const StreamReport r = stream_affinity(rt ? rt->rt : default_runtime());
    if (r.workers.empty()) {
      *worker = -1;
      return;
    }
    if (task >= r.workers.size())
      fail(CANOPY_ERANGE, fmt::format("task {}: the stream has {} mapped tasks", task, r.workers.size()));
    *worker = r.workers[task];
  });
}

size_t canopy_taskgraph_size(const canopy_taskgraph_t* graph) { return graph ? graph->graph.size() : 0; }

void canopy_taskgraph_destroy(canopy_taskgraph_t* graph) { delete graph; }

}  // extern "C"
