// canopy_mapping_headroom: how far below a mapper's answer can a case of the
// benchmark go? For each (case, regime) it maps the case with the reference
// policy (canopy by default) through the engine (same slots as the
// benchmark), then anneals (anneal.hpp) from each requested start: the
// reference placement, a seeded random filling of the same slots, or another
// policy's placement. One JSON line per (case, regime): the reference cost,
// each start's cost before and after annealing, and the best found. A
// probe for docs/policies/canopy.md's evidence, not a benchmark: it spends
// seconds per case. Exit status: 0 done, 2 bad input, 1 failure.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <iostream>
#include <nlohmann/json.hpp>

#include "anneal.hpp"
#include "canopy/comm_matrix.hpp"
#include "canopy/cost.hpp"
#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "canopy/topology.hpp"
#include "cases.hpp"
#include "mapping/canopy/tree.hpp"

using namespace canopy;
using namespace canopy::bench;

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// The cases to probe: the manifest's, narrowed by --filter/--only, or one
// case from --matrix/--topology.
std::vector<Case> select_cases(const std::string& manifest, const std::string& filter, const std::string& only,
                               const std::string& matrix, const std::string& topology) {
  if (manifest.empty() == matrix.empty())
    throw Error("give either --manifest or --matrix with --topology");
  if (!matrix.empty()) {
    if (topology.empty()) throw Error(fmt::format("--matrix '{}' needs --topology", matrix));
    Case c;
    c.name = matrix;
    c.matrix = matrix;
    c.topology = topology;
    return {c};
  }
  const std::vector<std::string> filters = split_list(filter), names = split_list(only);
  std::vector<Case> out;
  for (Case& c : read_manifest(manifest)) {
    bool keep = filters.empty() && names.empty();
    for (const std::string& f : filters) keep = keep || c.name.find(f) != std::string::npos;
    for (const std::string& n : names) keep = keep || c.name == n;
    if (keep) out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"canopy mapping headroom probe: anneal from a policy's placement, one JSON line per (case, regime)"};
  std::string manifest, matrix, topology, filter, only, regime_list, starts_list = "canopy", reference = "canopy";
  AnnealParams ap;
  app.add_option("--manifest", manifest, "case manifest written by gen_cases.py");
  app.add_option("--matrix", matrix, "one case: its matrix file");
  app.add_option("--topology,--input", topology, "one case: hwloc synthetic string or XML file");
  app.add_option("--filter", filter, "manifest: only cases whose name contains one of these (comma-separated)");
  app.add_option("--only", only, "manifest: only the cases with exactly these names (comma-separated)");
  app.add_option("--regime", regime_list, "only these regimes: full, over, spread, packed (comma-separated)");
  app.add_option("--reference", reference, "the policy whose cost the probe tries to beat")->capture_default_str();
  app.add_option("--starts", starts_list,
                 "annealing starts (comma-separated): 'random' (a seeded random filling of the slots) or a policy "
                 "name")
      ->capture_default_str();
  app.add_option("--moves", ap.moves, "swap proposals per annealing run")->check(CLI::Range(1, 2000000000))
      ->capture_default_str();
  app.add_option("--runs", ap.runs, "annealing runs per start")->check(CLI::Range(1, 1000))->capture_default_str();
  app.add_option("--t0", ap.t0, "start temperature, in typical per-task costs")->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--seed", ap.seed, "annealing seed")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  try {
    const std::vector<std::string> regimes = split_list(regime_list), starts = split_list(starts_list);
    for (const std::string& r : regimes) check_regime(r);
    find_policy(reference);
    for (const std::string& s : starts)
      if (s != "random") find_policy(s);
    if (starts.empty()) throw Error("--starts: expected at least one start");
    for (const Case& c : select_cases(manifest, filter, only, matrix, topology)) {
      const Topology topo = Topology::load(c.topology);
      const CommMatrix m = read_matrix(c.matrix);
      const std::vector<std::string> case_regimes =
          c.regimes.empty() ? default_regimes(m.size(), topo.num_pus()) : c.regimes;
      const cmap::Graph g = cmap::graph_of(m);
      for (const std::string& regime : case_regimes) {
        if (!regimes.empty() && std::find(regimes.begin(), regimes.end(), regime) == regimes.end()) continue;
        const double t_start = cpu_seconds();
        MapOptions o;
        o.pack = regime == "packed";
        o.weights = resolve_weights(topo, {});
        const Slots slots = choose_slots(topo, m.size(), o);
        const cmap::Tree tree = cmap::build_tree(topo, slots.capacity);
        const double ref_cost = evaluate(topo, m, map_tasks(topo, m, reference, o).task_pu).weighted;
        nlohmann::json line = {{"case", c.name}, {"regime", regime}, {"tasks", m.size()}, {"reference", reference},
                               {"reference_cost", ref_cost}};
        double best = ref_cost;
        for (const std::string& s : starts) {
          std::vector<int> start;
          if (s == "random") {
            // Any filling of the slots, shuffled with the annealing seed.
            for (int p = 0; p < topo.num_pus(); ++p) start.insert(start.end(), slots.capacity[p], p);
            cmap::Rng rng(ap.seed ^ 0x72616e646f6dULL);
            for (int i = static_cast<int>(start.size()) - 1; i > 0; --i) std::swap(start[i], start[rng.below(i + 1)]);
          } else {
            start = map_tasks(topo, m, s, o).task_pu;
          }
          const double start_cost = evaluate(topo, m, start).weighted;
          const AnnealResult r = anneal(g, tree, o.weights, std::move(start), ap);
          // The cost model's own evaluation, not the annealer's: the figure
          // every policy is judged by.
          const double found = evaluate(topo, m, r.task_pu).weighted;
          line["starts"][s] = {{"start_cost", start_cost}, {"best", found}};
          best = std::min(best, found);
        }
        line["best"] = best;
        line["ratio"] = best / ref_cost;
        line["cpu_s"] = cpu_seconds() - t_start;
        std::cout << line.dump() << std::endl;
      }
    }
  } catch (const Error& e) {
    std::cerr << "canopy_mapping_headroom: " << e.what() << '\n';
    return e.kind() == ErrorKind::BadInput ? 2 : 1;
  } catch (const std::exception& e) {
    std::cerr << "canopy_mapping_headroom: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
