// The placement half of automatic affinity (canopy/auto_affinity.hpp): the
// workers' topology, mapping a task matrix onto it (the placement engine,
// then balancing the groups by measured work), turning PUs into workers,
// and the files and lines users read (CANOPY_AFFINITY_DUMP,
// CANOPY_DISPLAY_AFFINITY).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>

#include "canopy/auto_affinity.hpp"
#include "canopy/cost.hpp"
#include "canopy/data.hpp"
#include "canopy/error.hpp"
#include "canopy/formats.hpp"
#include "canopy/mapping.hpp"
#include "canopy/runtime.hpp"
#include "canopy/topology.hpp"
#include "dataflow/recording.hpp"
#include "formats/labels.hpp"
#include "mapping/canopy/canopy_policy.hpp"
#include "runtime/runtime_core.hpp"

namespace canopy {

namespace {

// Stop balancing when the most loaded PU carries at most 10% more than its
// node's mean, or less than 50 µs more: measured durations are noisy (tasks of a
// microsecond vary by their size), and each move may cost locality.
constexpr double kBalanceSlack = 1.10;
constexpr double kBalanceSeconds = 50e-6;

// Moves tasks from the most loaded PU to a less loaded one of its NUMA
// node, the closest first, choosing the task whose work is nearest half the
// gap (each move lowers the larger of the two loads), while the PU carries
// more than its node's mean by the slack. Never across NUMA nodes: a task
// moved to another node takes its bytes with it (the handles it writes
// stay with their main writer), and measured durations are noisy (the
// emulated NUMA VMs especially). Bounded: a few moves per PU.
void balance_by_work(const Topology& topo, std::vector<int>& task_pu, const std::vector<double>& work) {
  const int P = topo.num_pus();
  const int T = static_cast<int>(task_pu.size());
  if (P < 2 || static_cast<int>(work.size()) != T) return;
  std::vector<double> load(P, 0);
  std::vector<std::vector<int>> on(P);
  for (int t = 0; t < T; ++t) {
    load[task_pu[t]] += work[t];
    on[task_pu[t]].push_back(t);
  }
  auto node_of = [&](int pu) { return topo.pu(pu).numa; };
  std::vector<char> stuck(P, 0);  // no move lowers it any more
  std::vector<int> by_distance;
  for (int iter = 0; iter < 4 * P + 16; ++iter) {
    int h = -1;
    for (int u = 0; u < P; ++u)
      if (!stuck[u] && (h < 0 || load[u] > load[h])) h = u;
    if (h < 0) return;
    double sum = 0;
    by_distance.clear();
    for (int u = 0; u < P; ++u)
      if (node_of(u) == node_of(h)) {
        sum += load[u];
        by_distance.push_back(u);
      }
    const double mean = sum / static_cast<double>(by_distance.size());
    if (mean <= 0 || load[h] <= kBalanceSlack * mean || load[h] - mean <= kBalanceSeconds) {
      stuck[h] = 1;
      continue;
    }
    std::sort(by_distance.begin(), by_distance.end(), [&](int a, int b) {
      const int da = topo.distance(h, a), db = topo.distance(h, b);
      return da != db ? da < db : load[a] < load[b];
    });
    bool moved = false;
    for (int d : by_distance) {
      const double gap = load[h] - load[d];
      if (d == h || load[d] > mean || gap <= 0) continue;
      int pick = -1;
      double best = gap;
      for (std::size_t k = 0; k < on[h].size(); ++k) {
        const int t = on[h][k];
        if (work[t] <= 0 || work[t] >= gap) continue;
        const double miss = std::abs(work[t] - gap / 2);
        if (miss < best) {
          best = miss;
          pick = static_cast<int>(k);
        }
      }
      if (pick < 0) continue;
      const int t = on[h][pick];
      on[h][pick] = on[h].back();
      on[h].pop_back();
      on[d].push_back(t);
      load[h] -= work[t];
      load[d] += work[t];
      task_pu[t] = d;
      moved = true;
      break;
    }
    if (!moved) stuck[h] = 1;
  }
}

}  // namespace

namespace detail::flow {

Topology worker_topology(RuntimeCore* c) {
  std::lock_guard<std::mutex> lock(c->affinity_mutex);
  if (!c->worker_topology) {
    std::vector<int> os;
    for (const WorkerPlacement& w : c->placement) os.push_back(w.pu_os);
    std::sort(os.begin(), os.end());
    os.erase(std::unique(os.begin(), os.end()), os.end());
    c->worker_topology = std::make_shared<const Topology>(c->topology->restricted(os));
  }
  return *c->worker_topology;
}

Placement place_tasks(const Topology& topo, const TaskMatrix& m, const std::string& name) {
  Placement p;
  if (name == "canopy") {
    // canopy's policy with its run-time effort (canopy_policy.hpp), through
    // the same steps as map_tasks: slots, policy, validation.
    MapOptions o;
    o.weights = resolve_weights(topo, {});
    const Slots slots = choose_slots(topo, m.matrix.size(), o);
    p.policy = name;
    p.task_pu = policy::canopy_lean(topo, m.matrix, o, slots);
    validate_placement(topo, p);
  } else {
    p = map_tasks(topo, m.matrix, name);
  }
  if (!m.work.empty()) balance_by_work(topo, p.task_pu, m.work);
  return p;
}

Placement compute_placement(RuntimeCore* rt, const TaskMatrix& m, const std::string& policy) {
  if (m.matrix.size() < 1) throw Error("compute_placement: the matrix has no task");
  if (!m.work.empty() && static_cast<int>(m.work.size()) != m.matrix.size())
    throw Error(fmt::format("compute_placement: {} work values for {} tasks", m.work.size(), m.matrix.size()));
  const std::string name =
      !policy.empty() ? policy : !rt->options.policy.empty() ? rt->options.policy : default_policy();
  return place_tasks(worker_topology(rt), m, name);
}

std::vector<int> workers_of_placement(const Topology& topo, const std::vector<int>& worker_pu, const Placement& p) {
  const int W = static_cast<int>(worker_pu.size());
  // Workers by PU, core and NUMA node.
  std::vector<std::vector<int>> on_pu(topo.num_pus()), on_core(topo.num_cores()), on_numa(topo.num_numa_nodes());
  for (int w = 0; w < W; ++w) {
    const int pu = worker_pu[w];
    if (pu < 0 || pu >= topo.num_pus()) continue;
    on_pu[pu].push_back(w);
    on_core[topo.pu(pu).core].push_back(w);
    on_numa[topo.pu(pu).numa].push_back(w);
  }
  std::vector<int> turn_pu(on_pu.size(), 0), turn_core(on_core.size(), 0), turn_numa(on_numa.size(), 0);
  int turn_any = 0;
  std::vector<int> out(p.task_pu.size());
  for (std::size_t t = 0; t < p.task_pu.size(); ++t) {
    const int pu = p.task_pu[t];
    if (pu < 0 || pu >= topo.num_pus())
      throw Error(fmt::format("placement_workers: task {} is on PU {}, outside the workers' 0..{}", t, pu,
                              topo.num_pus() - 1));
    const PUInfo& info = topo.pu(pu);
    if (!on_pu[pu].empty())
      out[t] = on_pu[pu][turn_pu[pu]++ % on_pu[pu].size()];
    else if (!on_core[info.core].empty())
      out[t] = on_core[info.core][turn_core[info.core]++ % on_core[info.core].size()];
    else if (!on_numa[info.numa].empty())
      out[t] = on_numa[info.numa][turn_numa[info.numa]++ % on_numa[info.numa].size()];
    else
      out[t] = turn_any++ % W;
  }
  return out;
}

std::vector<int> placement_workers(RuntimeCore* rt, const Placement& p) {
  const Topology topo = worker_topology(rt);
  std::vector<int> worker_pu(rt->num_workers);
  for (int w = 0; w < rt->num_workers; ++w) worker_pu[w] = topo.pu_by_os_index(rt->placement[w].pu_os);
  return workers_of_placement(topo, worker_pu, p);
}

void write_affinity_files(const std::string& dir, const std::string& name, RuntimeCore* rt, const TaskMatrix& m,
                          const Placement& p) {
  write_affinity_files(dir, name, worker_topology(rt), m, p, placement_workers(rt, p), "worker");
}

void write_affinity_files(const std::string& dir, const std::string& name, const Topology& topo, const TaskMatrix& m,
                          const Placement& p, const std::vector<int>& workers, const char* unit) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw Error(fmt::format("affinity dump directory '{}': {}", dir, ec.message()));
  const std::string mpath = (std::filesystem::path(dir) / (name + ".edges")).string();
  {
    std::ostringstream body;
    write_matrix(body, m.matrix, MatrixFormat::EdgeList);
    std::ofstream out(mpath);
    out << "# canopy automatic affinity: bytes between tasks (docs/auto-affinity.md)\n";
    for (std::size_t t = 0; t < m.labels.size(); ++t)
      out << "# " << m.labels[t] << (m.work.empty() ? std::string() : fmt::format(" work {:.3g} s", m.work[t]))
          << "\n";
    out << body.str();
    if (!out) throw Error(fmt::format("cannot write the affinity matrix '{}'", mpath));
  }
  const std::string ppath = (std::filesystem::path(dir) / (name + ".placement")).string();
  std::ofstream out(ppath);
  out << fmt::format("# canopy automatic affinity: {} tasks, policy {}, machine '{}'\n", p.num_tasks(), p.policy,
                     topo.source());
  out << "# one OS CPU number per task (canopy eval --matrix " << name << ".edges --placement " << name
      << ".placement)\n";
  for (int t = 0; t < p.num_tasks(); ++t)
    out << topo.pu(p.task_pu[t]).os_index << "  # task " << t << " " << unit << " " << workers[t] << "\n";
  if (!out) throw Error(fmt::format("cannot write the affinity placement '{}'", ppath));
}

std::string describe_groups(const char* unit, const std::vector<std::pair<int, int>>& pu_os_numa, const TaskMatrix& m,
                            const std::vector<int>& workers) {
  const std::size_t W = pu_os_numa.size();
  std::vector<std::vector<int>> tasks(W);
  std::vector<double> work(W, 0);
  for (std::size_t t = 0; t < workers.size(); ++t) {
    tasks[workers[t]].push_back(static_cast<int>(t));
    if (!m.work.empty()) work[workers[t]] += m.work[t];
  }
  std::string s;
  for (std::size_t w = 0; w < W; ++w) {
    s += fmt::format("canopy affinity: {} {} (PU P#{}, NUMA node {}): {} tasks {}", unit, w, pu_os_numa[w].first,
                     pu_os_numa[w].second, tasks[w].size(), tasks[w].empty() ? "-" : formats::ranges(tasks[w]));
    if (!m.work.empty()) s += fmt::format(", work {:.3f} ms", work[w] * 1e3);
    s += "\n";
  }
  return s;
}

std::string describe_placement(RuntimeCore* rt, const TaskMatrix& m, const Placement& p) {
  std::vector<std::pair<int, int>> where;
  for (int w = 0; w < rt->num_workers; ++w) where.emplace_back(rt->placement[w].pu_os, rt->placement[w].numa);
  return describe_groups("worker", where, m, placement_workers(rt, p));
}

void move_handles(RuntimeCore* rt, const Recording& r, const std::vector<int>& task_worker, AffinityReport* report) {
  report->pages_moved = 0;
  report->pages_left = 0;
  report->handles_left = 0;
  report->move_refusal.clear();
  const int nodes = data_num_nodes();
  if (nodes < 2 || !rt->topology || !rt->topology->is_this_machine()) return;
  for (const HandleWriter& hw : handle_writers(r, task_worker)) {
    if (hw.worker < 0 || hw.worker >= rt->num_workers) continue;
    const int node = rt->slots[hw.worker]->machine_node;
    if (node < 0 || node >= nodes) continue;
    try {
      data_entry(hw.data);
    } catch (const Error&) {
      continue;  // freed since it was recorded
    }
    const DataMoveResult m = data_try_move_to_node(hw.data, node);
    report->pages_moved += m.moved;
    if (m.left > 0) {
      report->pages_left += m.left;
      ++report->handles_left;
      if (report->move_refusal.empty())
        report->move_refusal =
            fmt::format("#{} to node {}: {}", hw.data.index, node, m.reason.empty() ? "pages stayed" : m.reason);
    }
  }
}

}  // namespace detail::flow

Topology worker_topology(const Runtime& rt) { return detail::flow::worker_topology(rt.core()); }

Placement compute_placement(const Runtime& rt, const TaskMatrix& m, const std::string& policy) {
  return detail::flow::compute_placement(rt.core(), m, policy);
}

std::vector<int> placement_workers(const Runtime& rt, const Placement& p) {
  return detail::flow::placement_workers(rt.core(), p);
}

void write_affinity_files(const std::string& dir, const std::string& name, const Runtime& rt, const TaskMatrix& m,
                          const Placement& p) {
  detail::flow::write_affinity_files(dir, name, rt.core(), m, p);
}

Placement read_placement(const Runtime& rt, const std::string& path, int tasks) {
  std::ifstream in(path);
  if (!in) throw Error(fmt::format("cannot open the placement file '{}'", path));
  return parse_placement_list(worker_topology(rt), in, path, tasks);
}

std::string describe_placement(const Runtime& rt, const TaskMatrix& m, const Placement& p) {
  return detail::flow::describe_placement(rt.core(), m, p);
}

}  // namespace canopy
