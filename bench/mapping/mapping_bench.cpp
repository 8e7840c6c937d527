// canopy_mapping_bench: the mapping-quality benchmark driver. For one case or
// every case of a manifest (gen_cases.py), it runs every registered canopy
// policy (canopy::policies(), so a new policy joins by registering) and
// Scotch, in this process, on the same topology, matrix and cost weights;
// evaluates each placement with canopy::evaluate; and prints one JSON line
// per (case, regime, policy): cost, median time of --repeat runs, CPU time,
// peak memory added, validity and determinism. run.py turns the lines into
// tables. Exit status: 0 done (even if some policy failed: see "status"),
// 2 bad input, 3 a run exceeded --timeout (its line says so).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "canopy/comm_matrix.hpp"
#include "canopy/cost.hpp"
#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "canopy/topology.hpp"
#include "cases.hpp"
#include "measure.hpp"
#include "scotch_peer.hpp"

using namespace canopy;
using namespace canopy::bench;
using json = nlohmann::json;

namespace {

// A mapper under test: canopy policies and the peers (Scotch) alike.
struct Competitor {
  std::string name;
  // task -> logical PU; `note` may receive a line for the report.
  std::function<std::vector<int>(const Topology&, const CommMatrix&, bool pack, const std::vector<double>& weights,
                                 std::string* note)>
      run;
};

std::vector<Competitor> all_competitors(ScotchStrategy strategy) {
  std::vector<Competitor> out;
  for (const Policy& p : policies()) {
    std::string name = p.name;
    out.push_back({name, [name](const Topology& t, const CommMatrix& m, bool pack, const std::vector<double>& w,
                                std::string*) {
                     MapOptions o;
                     o.pack = pack;
                     o.weights = w;
                     return map_tasks(t, m, name, o).task_pu;
                   }});
  }
  out.push_back({"scotch", [strategy](const Topology& t, const CommMatrix& m, bool pack,
                                      const std::vector<double>& w, std::string* note) {
                   ScotchOptions o;
                   o.packed = pack;
                   o.strategy = strategy;
                   o.weights = w;
                   ScotchResult r = scotch_map(t, m, o);
                   *note = r.arch;
                   return r.task_pu;
                 }});
  return out;
}

std::vector<Competitor> select(const std::vector<Competitor>& all, const std::string& list) {
  if (list.empty() || list == "all") return all;
  std::vector<Competitor> out;
  for (const std::string& name : split_list(list)) {
    bool found = false;
    for (const Competitor& c : all)
      if (c.name == name) {
        out.push_back(c);
        found = true;
      }
    if (!found) {
      std::string known;
      for (const Competitor& c : all) known += (known.empty() ? "" : ", ") + c.name;
      throw Error(fmt::format("--policy: unknown policy '{}': expected one of {}", name, known));
    }
  }
  return out;
}

// Capacity rule of a placement: every task on an existing PU, no PU with
// more than ceil(T/P) tasks. Returns "" when it holds, else why not.
std::string check_valid(const Topology& topo, const std::vector<int>& task_pu, int tasks, int* max_load) {
  const int P = topo.num_pus();
  if (static_cast<int>(task_pu.size()) != tasks)
    return fmt::format("{} tasks placed, expected {}", task_pu.size(), tasks);
  const int cap = (tasks + P - 1) / P;
  std::vector<int> load(P, 0);
  *max_load = 0;
  for (int t = 0; t < tasks; ++t) {
    int p = task_pu[t];
    if (p < 0 || p >= P) return fmt::format("task {} on PU {}, outside 0..{}", t, p, P - 1);
    *max_load = std::max(*max_load, ++load[p]);
  }
  if (*max_load > cap) return fmt::format("a PU holds {} tasks, more than ceil({}/{}) = {}", *max_load, tasks, P, cap);
  return "";
}

void emit(const json& j) { std::cout << j.dump() << '\n' << std::flush; }

struct Settings {
  int repeat = 3;
  double timeout = 0;
};

void run_one(const Case& c, const std::string& regime, const Competitor& comp, const Topology& topo,
             const CommMatrix& m, const std::vector<double>& weights, const Settings& s) {
  json line = {{"case", c.name},      {"regime", regime}, {"policy", comp.name}, {"machine", c.machine},
               {"family", c.family},  {"tasks", m.size()}, {"pus", topo.num_pus()}};
  const bool pack = regime == "packed";
  std::vector<double> wall, cpu;
  std::vector<int> first;
  bool deterministic = true;
  long rss_kb = -1;
  std::string note;
  try {
    for (int r = 0; r < s.repeat; ++r) {
      PeakRss rss;
      if (r == 0) rss.start();
      json t = line;
      t["status"] = "timeout";
      t["valid"] = false;
      t["error"] = fmt::format("run {} took longer than {} s", r + 1, s.timeout);
      Watchdog dog(s.timeout, t.dump() + "\n");
      const double w0 = wall_seconds(), c0 = process_cpu_seconds();
      std::vector<int> task_pu = comp.run(topo, m, pack, weights, &note);
      wall.push_back(wall_seconds() - w0);
      cpu.push_back(process_cpu_seconds() - c0);
      if (r == 0) {
        rss_kb = rss.delta_kb();
        first = std::move(task_pu);
      } else if (task_pu != first) {
        deterministic = false;
      }
    }
  } catch (const std::exception& e) {
    line["status"] = "error";
    line["valid"] = false;
    line["error"] = e.what();
    emit(line);
    return;
  }
  int max_load = 0;
  std::string why = check_valid(topo, first, m.size(), &max_load);
  line["valid"] = why.empty();
  line["status"] = why.empty() ? "ok" : "invalid";
  if (!why.empty()) line["error"] = why;
  if (why.empty() || first.size() == static_cast<size_t>(m.size())) {
    bool in_range = true;
    for (int p : first) in_range = in_range && p >= 0 && p < topo.num_pus();
    if (in_range) {
      Cost cost = evaluate(topo, m, first, weights);
      line["cost"] = {{"weighted", cost.weighted}, {"hop_bytes", cost.hop_bytes},
                      {"numa_crossing", cost.numa_crossing}};
      int numa_used = 0;
      for (int n : cost.tasks_per_numa) numa_used += n > 0;
      line["numa_used"] = numa_used;
      std::set<int> pus(first.begin(), first.end());
      line["pus_used"] = pus.size();
    }
  }
  line["max_load"] = max_load;
  line["time_s"] = median(wall);
  line["cpu_s"] = median(cpu);
  line["times"] = wall;
  line["peak_rss_delta_kb"] = rss_kb;
  line["deterministic"] = deterministic;
  if (!note.empty()) line["arch"] = note;
  emit(line);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"canopy mapping-quality benchmark: every policy and Scotch on each case, one JSON line per "
               "(case, regime, policy)"};
  std::string manifest, matrix, topology, name, filter, policy_list, regime_list, weights_text;
  std::string strategy_name = "quality";
  Settings s;
  bool list = false;
  auto* g_in = "Cases";
  app.add_option("--manifest", manifest, "case manifest written by gen_cases.py")->group(g_in);
  app.add_option("--matrix", matrix, "one case: its matrix file (any format canopy reads)")->group(g_in);
  app.add_option("--topology,--input", topology, "one case: hwloc synthetic string or XML file")->group(g_in);
  app.add_option("--name", name, "one case: its name in the output")->group(g_in);
  app.add_option("--filter", filter, "manifest: only cases whose name contains one of these (comma-separated)")
      ->group(g_in);
  std::string only;
  app.add_option("--only", only, "manifest: only the cases with exactly these names (comma-separated)")->group(g_in);
  app.add_option("--regime", regime_list, "only these regimes: full, over, spread, packed (comma-separated)")
      ->group(g_in);
  auto* g_run = "Running";
  app.add_option("--policy", policy_list, "only these policies (comma-separated; 'scotch' is the Scotch peer)")
      ->group(g_run);
  app.add_option("--repeat,-r", s.repeat, "runs per (case, regime, policy); time is their median")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str()
      ->group(g_run);
  app.add_option("--timeout", s.timeout, "seconds one run may take before the process stops (0 = no limit)")
      ->group(g_run);
  app.add_option("--weights", weights_text, "cost weights per level, root first (default: canopy's defaults)")
      ->group(g_run);
  app.add_option("--scotch-strategy", strategy_name, "Scotch strategy flags: quality, default, speed, balance")
      ->capture_default_str()
      ->group(g_run);
  app.add_flag("--list", list, "list the policies and cases, run nothing")->group(g_run);
  double sleep_s = -1;
  app.add_option("--self-test-sleep", sleep_s,
                 "add a competitor 'sleep' that waits this long, then places task i on PU i mod P "
                 "(tests the --timeout watchdog and run.py's resuming)")
      ->group("Testing");
  CLI11_PARSE(app, argc, argv);

  try {
    ScotchStrategy strategy = parse_scotch_strategy(strategy_name);
    std::vector<Competitor> everyone = all_competitors(strategy);
    if (sleep_s >= 0)
      everyone.push_back({"sleep", [sleep_s](const Topology& t, const CommMatrix& m, bool, const std::vector<double>&,
                                              std::string*) {
                            std::this_thread::sleep_for(std::chrono::duration<double>(sleep_s));
                            std::vector<int> out(m.size());
                            for (int i = 0; i < m.size(); ++i) out[i] = i % t.num_pus();
                            return out;
                          }});
    std::vector<Competitor> comps = select(everyone, policy_list);
    std::vector<double> user_weights = weights_text.empty() ? std::vector<double>{} : parse_weights(weights_text);
    std::vector<std::string> regimes = split_list(regime_list);
    for (const std::string& r : regimes) check_regime(r);

    if (list && manifest.empty() && matrix.empty()) {
      for (const Competitor& c : comps) std::cout << "policy " << c.name << '\n';
      return 0;
    }
    std::vector<Case> cases;
    if (!manifest.empty()) {
      if (!matrix.empty()) throw Error("give either --manifest or --matrix, not both");
      std::vector<std::string> filters = split_list(filter);
      std::vector<std::string> names = split_list(only);
      std::vector<Case> all = read_manifest(manifest);
      for (const std::string& n : names)
        if (std::none_of(all.begin(), all.end(), [&](const Case& c) { return c.name == n; }))
          throw Error(fmt::format("--only: manifest '{}' has no case named '{}'", manifest, n));
      for (Case& c : all) {
        bool keep = filters.empty();
        for (const std::string& f : filters) keep = keep || c.name.find(f) != std::string::npos;
        if (!names.empty()) keep = keep && std::find(names.begin(), names.end(), c.name) != names.end();
        if (keep) cases.push_back(std::move(c));
      }
    } else if (!matrix.empty()) {
      if (topology.empty()) throw Error("--matrix needs --topology (a synthetic string or an XML file)");
      Case c;
      c.matrix = matrix;
      c.topology = topology;
      c.name = name.empty() ? matrix : name;
      cases.push_back(c);
    } else {
      throw Error("nothing to run: give --manifest FILE or --matrix FILE --topology T (see --help)");
    }

    if (list) {
      for (const Competitor& c : comps) std::cout << "policy " << c.name << '\n';
      for (const Case& c : cases) std::cout << "case " << c.name << '\n';
      return 0;
    }

    std::map<std::string, Topology> machines;  // the suite reuses a few machines
    for (const Case& c : cases) {
      auto it = machines.find(c.topology);
      if (it == machines.end()) it = machines.emplace(c.topology, Topology::load(c.topology)).first;
      const Topology& topo = it->second;
      CommMatrix m = read_matrix(c.matrix);
      if (c.tasks > 0 && c.tasks != m.size())
        throw Error(fmt::format("case '{}': the manifest says {} tasks but '{}' has {}", c.name, c.tasks, c.matrix,
                                m.size()));
      const std::vector<double> weights = resolve_weights(topo, user_weights);
      std::vector<std::string> case_regimes = c.regimes.empty() ? default_regimes(m.size(), topo.num_pus()) : c.regimes;
      for (const std::string& regime : case_regimes) {
        if (!regimes.empty() && std::find(regimes.begin(), regimes.end(), regime) == regimes.end()) continue;
        if (regime == "packed" && m.size() >= topo.num_pus())
          throw Error(fmt::format("case '{}': regime packed needs fewer tasks than PUs ({} tasks, {} PUs)", c.name,
                                  m.size(), topo.num_pus()));
        for (const Competitor& comp : comps) run_one(c, regime, comp, topo, m, weights, s);
      }
    }
  } catch (const Error& e) {
    std::cerr << "canopy_mapping_bench: " << e.what() << '\n';
    return e.kind() == ErrorKind::BadInput ? 2 : 1;
  } catch (const std::exception& e) {
    std::cerr << "canopy_mapping_bench: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
