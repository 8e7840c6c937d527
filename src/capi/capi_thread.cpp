// C API: binding the calling thread, asking where it is bound and runs, and
// teams -- the plan that lets every thread of a parallel region bind itself
// where a policy puts it (canopy_omp.h is the OpenMP side of it).
#include <fmt/format.h>

#include "canopy/binding.hpp"
#include "canopy/mapping.hpp"
#include "capi/capi.hpp"

using namespace canopy;
using namespace canopy::capi;

namespace {

// Everything canopy_team_create checks and computes; throws on failure.
std::unique_ptr<canopy_placement> plan_team(int num_threads, const char* policy, unsigned flags,
                                            const canopy_matrix_t* matrix) {
  MapOptions opt;
  apply_flags(flags, opt.pack, opt.granularity, opt.helpers);
  if (num_threads < 1) fail(CANOPY_EINVAL, fmt::format("num_threads = {}: a team has at least one thread", num_threads));
  const Topology& topo = process_topology();
  const long limit = static_cast<long>(kMaxThreadsPerPU) * topo.num_pus();
  if (num_threads > limit)
    fail(CANOPY_EINVAL, fmt::format("num_threads = {} is more than {} per PU ({} PUs: at most {})", num_threads,
                                    kMaxThreadsPerPU, topo.num_pus(), limit));
  if (matrix && matrix->m.size() != num_threads)
    fail(CANOPY_EINVAL,
         fmt::format("the matrix has {} tasks but the team has {} threads", matrix->m.size(), num_threads));
  const std::string name = policy ? std::string(policy) : default_policy();
  find_policy(name);
  Placement p = matrix ? map_tasks(topo, matrix->m, name, opt) : map_tasks(topo, CommMatrix(num_threads), name, opt);
  return std::make_unique<canopy_placement>(canopy_placement{std::move(p), topo});
}

}  // namespace

extern "C" {

canopy_status_t canopy_thread_bind(const int* os_indexes, size_t count) {
  return guard("canopy_thread_bind", CANOPY_EINVAL, [&] {
    if (count == 0) fail(CANOPY_EINVAL, "cannot bind a thread to no CPU (count is 0)");
    need(os_indexes, "os_indexes");
    bind_current_thread(std::vector<int>(os_indexes, os_indexes + count));
  });
}

canopy_status_t canopy_thread_binding(int* os_indexes, size_t capacity, size_t* count) {
  return guard("canopy_thread_binding", CANOPY_EINVAL,
               [&] { copy_array(current_thread_binding(), os_indexes, capacity, count); });
}

canopy_status_t canopy_thread_cpu(int* os_index) {
  return guard("canopy_thread_cpu", CANOPY_EINVAL, [&] {
    need(os_index, "os_index");
    int cpu = current_cpu();
    if (cpu < 0) fail(CANOPY_ESYSTEM, "the operating system cannot tell which CPU the thread runs on");
    *os_index = cpu;
  });
}

canopy_status_t canopy_team_create(canopy_team_t** out, int num_threads, const char* policy, unsigned flags,
                                   const canopy_matrix_t* matrix) {
  return guard("canopy_team_create", CANOPY_EINVAL, [&] {
    need(out, "out") = nullptr;
    auto team = std::make_unique<canopy_team>();
    team->num_threads = num_threads;
    Outcome o = capture(CANOPY_EINVAL, [&] { team->placement = plan_team(num_threads, policy, flags, matrix); });
    if (o.status == CANOPY_OK) {
      *out = team.release();
      return;
    }
    if (o.status == CANOPY_ENOMEM) fail(o.status, o.message);
    // Keep the failure in the team (see canopy.h) and report it here too.
    team->status = o.status;
    team->message = o.message;
    *out = team.release();
    fail(o.status, o.message);
  });
}

canopy_status_t canopy_team_bind(const canopy_team_t* team, int thread_num) {
  return guard("canopy_team_bind", CANOPY_EINVAL, [&] {
    const canopy_team& t = need(team, "team");
    if (t.status != CANOPY_OK) fail(t.status, "planning the team failed: " + t.message);
    check_index(thread_num, t.num_threads, "thread_num");
    bind_current_thread(binding_os(*t.placement, thread_num));
  });
}

canopy_status_t canopy_team_placement(const canopy_team_t* team, const canopy_placement_t** placement) {
  return guard("canopy_team_placement", CANOPY_EINVAL, [&] {
    const canopy_team& t = need(team, "team");
    need(placement, "placement") = nullptr;
    if (t.status != CANOPY_OK) fail(t.status, "planning the team failed: " + t.message);
    *placement = t.placement.get();
  });
}

void canopy_team_destroy(canopy_team_t* team) { delete team; }

}  // extern "C"
