// C API: placement handles (computed by a policy, or given task by task),
// their accessors, output formats, cost, and binding a thread with one.
#include <fmt/format.h>

#include "canopy/binding.hpp"
#include "canopy/cost.hpp"
#include "canopy/formats.hpp"
#include "canopy/mapping.hpp"
#include "capi/capi.hpp"

using namespace canopy;
using namespace canopy::capi;

namespace {

const canopy_placement& placement_of(const canopy_placement_t* p) { return need(p, "placement"); }

std::vector<double> weights_of(const Topology& t, const double* weights, size_t n) {
  if (n == 0) return {};
  if (!weights) fail(CANOPY_EINVAL, fmt::format("weights is NULL but num_weights is {}", n));
  return resolve_weights(t, std::vector<double>(weights, weights + n));
}

void check_task(const canopy_placement& pl, int task) { check_index(task, pl.p.num_tasks(), "task"); }

}  // namespace

extern "C" {

canopy_status_t canopy_placement_create(canopy_placement_t** out, const canopy_topology_t* topo,
                                        const canopy_matrix_t* matrix, const char* policy,
                                        const canopy_map_options_t* options) {
  return guard("canopy_placement_create", CANOPY_EINVAL, [&] {
    need(out, "out") = nullptr;
    const Topology& t = need(topo, "topo").topo;
    const CommMatrix& m = need(matrix, "matrix").m;
    MapOptions opt;
    if (options) {
      apply_flags(options->flags, opt.pack, opt.granularity, opt.helpers);
      opt.weights = weights_of(t, options->weights, options->num_weights);
    }
    const std::string name = policy ? std::string(policy) : default_policy();
    find_policy(name);  // an unknown name fails here, listing the known ones
    auto pl = std::make_unique<canopy_placement>(canopy_placement{map_tasks(t, m, name, opt), t});
    *out = pl.release();
  });
}

canopy_status_t canopy_placement_create_from_pus(canopy_placement_t** out, const canopy_topology_t* topo,
                                                 const int* task_pu, int num_tasks, unsigned flags) {
  return guard("canopy_placement_create_from_pus", CANOPY_EINVAL, [&] {
    need(out, "out") = nullptr;
    const Topology& t = need(topo, "topo").topo;
    check_flags(flags, CANOPY_MAP_GRANULARITY_CORE);
    if (num_tasks < 0) fail(CANOPY_EINVAL, fmt::format("num_tasks = {} is negative", num_tasks));
    if (num_tasks > 0) need(task_pu, "task_pu");
    Placement p;
    p.policy = "given";
    p.granularity = (flags & CANOPY_MAP_GRANULARITY_CORE) ? Granularity::Core : Granularity::PU;
    p.task_pu.assign(task_pu, task_pu + num_tasks);
    for (int k = 0; k < num_tasks; ++k)
      if (p.task_pu[k] < 0 || p.task_pu[k] >= t.num_pus())
        fail(CANOPY_ERANGE, fmt::format("task {} has PU {}, outside [0, {})", k, p.task_pu[k], t.num_pus()));
    try {
      validate_placement(t, p);
    } catch (const Error& e) {
      // validate_placement reports policy bugs as System errors; here the
      // placement comes from the caller.
      fail(CANOPY_EINVAL, e.what());
    }
    *out = new canopy_placement{std::move(p), t};
  });
}

void canopy_placement_destroy(canopy_placement_t* placement) { delete placement; }

canopy_status_t canopy_placement_num_tasks(const canopy_placement_t* placement, int* out) {
  return guard("canopy_placement_num_tasks", CANOPY_EINVAL,
               [&] { need(out, "out") = placement_of(placement).p.num_tasks(); });
}

canopy_status_t canopy_placement_policy(const canopy_placement_t* placement, const char** name) {
  return guard("canopy_placement_policy", CANOPY_EINVAL,
               [&] { need(name, "name") = placement_of(placement).p.policy.c_str(); });
}

canopy_status_t canopy_placement_task_pu(const canopy_placement_t* placement, int task, int* pu) {
  return guard("canopy_placement_task_pu", CANOPY_EINVAL, [&] {
    const canopy_placement& pl = placement_of(placement);
    need(pu, "pu");
    check_task(pl, task);
    *pu = pl.p.task_pu[task];
  });
}

canopy_status_t canopy_placement_task_pu_os(const canopy_placement_t* placement, int task, int* os_index) {
  return guard("canopy_placement_task_pu_os", CANOPY_EINVAL, [&] {
    const canopy_placement& pl = placement_of(placement);
    need(os_index, "os_index");
    check_task(pl, task);
    *os_index = pl.topo.pu(pl.p.task_pu[task]).os_index;
  });
}

canopy_status_t canopy_placement_helper_pu(const canopy_placement_t* placement, int task, int* pu) {
  return guard("canopy_placement_helper_pu", CANOPY_EINVAL, [&] {
    const canopy_placement& pl = placement_of(placement);
    need(pu, "pu");
    check_task(pl, task);
    *pu = pl.p.helper_pu.empty() ? -1 : pl.p.helper_pu[task];
  });
}

canopy_status_t canopy_placement_task_binding(const canopy_placement_t* placement, int task, int* os_indexes,
                                              size_t capacity, size_t* count) {
  return guard("canopy_placement_task_binding", CANOPY_EINVAL, [&] {
    const canopy_placement& pl = placement_of(placement);
    check_task(pl, task);
    copy_array(binding_os(pl, task), os_indexes, capacity, count);
  });
}

canopy_status_t canopy_placement_omp_places(const canopy_placement_t* placement, char* buf, size_t size,
                                            size_t* needed) {
  return guard("canopy_placement_omp_places", CANOPY_EINVAL, [&] {
    const canopy_placement& pl = placement_of(placement);
    copy_string(omp_places(pl.topo, pl.p), buf, size, needed);
  });
}

canopy_status_t canopy_placement_format(const canopy_placement_t* placement, const char* format,
                                        const canopy_matrix_t* matrix, char* buf, size_t size, size_t* needed) {
  return guard("canopy_placement_format", CANOPY_EINVAL, [&] {
    const canopy_placement& pl = placement_of(placement);
    PlacementFormat f = parse_placement_format(need_str(format, "format"));
    const CommMatrix* m = matrix ? &matrix->m : nullptr;
    if (m && m->size() != pl.p.num_tasks())
      fail(CANOPY_EINVAL,
           fmt::format("the matrix has {} tasks but the placement has {}", m->size(), pl.p.num_tasks()));
    copy_string(format_placement(pl.topo, pl.p, f, m), buf, size, needed);
  });
}

canopy_status_t canopy_placement_cost(const canopy_placement_t* placement, const canopy_matrix_t* matrix,
                                      const double* weights, size_t num_weights, canopy_cost_t* cost) {
  return guard("canopy_placement_cost", CANOPY_EINVAL, [&] {
    const canopy_placement& pl = placement_of(placement);
    const CommMatrix& m = need(matrix, "matrix").m;
    need(cost, "cost");
    if (m.size() != pl.p.num_tasks())
      fail(CANOPY_EINVAL,
           fmt::format("the matrix has {} tasks but the placement has {}", m.size(), pl.p.num_tasks()));
    Cost c = evaluate(pl.topo, m, pl.p, weights_of(pl.topo, weights, num_weights));
    cost->hop_bytes = c.hop_bytes;
    cost->weighted = c.weighted;
    cost->numa_crossing = c.numa_crossing;
  });
}

canopy_status_t canopy_placement_tasks_per_numa(const canopy_placement_t* placement, int* counts, size_t capacity,
                                                size_t* count) {
  return guard("canopy_placement_tasks_per_numa", CANOPY_EINVAL, [&] {
    const canopy_placement& pl = placement_of(placement);
    std::vector<int> per(pl.topo.num_numa_nodes(), 0);
    for (int pu : pl.p.task_pu) {
      int numa = pl.topo.pu(pu).numa;
      if (numa >= 0 && numa < static_cast<int>(per.size())) ++per[numa];
    }
    copy_array(per, counts, capacity, count);
  });
}

canopy_status_t canopy_placement_bind_thread(const canopy_placement_t* placement, int task) {
  return guard("canopy_placement_bind_thread", CANOPY_EINVAL, [&] {
    const canopy_placement& pl = placement_of(placement);
    check_task(pl, task);
    if (!pl.topo.is_this_machine())
      fail(CANOPY_ENOSYS, fmt::format("the placement is for topology '{}', not this machine: it cannot bind threads",
                                      pl.topo.source()));
    bind_current_thread(binding_os(pl, task));
  });
}

}  // extern "C"
