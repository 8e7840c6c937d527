// `canopy compare`: run every registered policy on one matrix and topology
// (canopy::compare_policies) and print the cost of each placement, its ratio
// to the best, the time the policy took, and which policy is best (lowest
// weighted cost).
#include <fmt/format.h>

#include <memory>

#include "canopy/comm_matrix.hpp"
#include "canopy/compare.hpp"
#include "canopy/cost.hpp"
#include "canopy/error.hpp"
#include "canopy/mapping.hpp"
#include "canopy/topology.hpp"
#include "cli.hpp"
#include "cli_common.hpp"

namespace {

struct CompareArgs {
  std::string input, matrix, format, granularity = "pu", weights, of, output;
  bool pack = false;
};

std::string ratio_text(double v, double best) {
  if (best > 0) return fmt::format("{:.2f}", v / best);
  return v == 0 ? "1.00" : "inf";
}

int run_compare(const CompareArgs& a) {
  canopy::Topology topo = canopy::Topology::load(a.input);
  canopy::CommMatrix m = canopy::cli::load_matrix(a.matrix, a.format);
  canopy::MapOptions opt;
  opt.pack = a.pack;
  opt.granularity = canopy::parse_granularity(a.granularity);
  opt.weights = canopy::cli::weights_for(topo, a.weights);

  const canopy::Comparison cmp = canopy::compare_policies(topo, m, opt);
  const auto& rows = cmp.results;
  const int best = cmp.best;
  const double best_weighted = best >= 0 ? rows[best].cost.weighted : 0;
  std::string w;
  for (double x : cmp.weights) w += (w.empty() ? "" : ",") + canopy::cli::number(x);

  std::string text;
  if (a.of == "table") {
    std::vector<std::vector<std::string>> cells;
    cells.push_back({"policy", "hop-bytes", "weighted", "NUMA crossing", "ratio", "time"});
    for (const canopy::PolicyResult& r : rows) {
      if (!r.error.empty()) {
        cells.push_back({r.policy, "-", "-", "-", "-", "failed: " + r.error});
        continue;
      }
      cells.push_back({r.policy, canopy::cli::number(r.cost.hop_bytes), canopy::cli::number(r.cost.weighted),
                       canopy::cli::number(r.cost.numa_crossing), ratio_text(r.cost.weighted, best_weighted),
                       fmt::format("{:.3f} ms", r.time_ms)});
    }
    std::vector<size_t> width(cells.front().size(), 0);
    for (const auto& c : cells)
      for (size_t i = 0; i < c.size(); ++i) width[i] = std::max(width[i], c[i].size());
    text = fmt::format("# {} tasks of {} on {} ({} PUs); weights per level, root first: {}\n", m.size(), a.matrix,
                       topo.source(), topo.num_pus(), w);
    for (const auto& c : cells) {
      std::string line = fmt::format("{:<{}}", c[0], width[0]);
      for (size_t i = 1; i + 1 < c.size(); ++i) line += fmt::format("  {:>{}}", c[i], width[i]);
      line += "  " + c.back();
      text += line + "\n";
    }
    text += best >= 0 ? fmt::format("best: {} (lowest weighted cost; ratio = weighted cost / best)\n", rows[best].policy)
                      : "best: none (every policy failed)\n";
  } else {
    nlohmann::ordered_json j;
    j["matrix"] = a.matrix;
    j["topology"] = topo.source();
    j["num_tasks"] = m.size();
    j["weights"] = cmp.weights;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const canopy::PolicyResult& r : rows) {
      nlohmann::ordered_json x;
      x["policy"] = r.policy;
      if (r.error.empty()) {
        x["hop_bytes"] = r.cost.hop_bytes;
        x["weighted"] = r.cost.weighted;
        x["numa_crossing"] = r.cost.numa_crossing;
        x["tasks_per_numa"] = r.cost.tasks_per_numa;
        x["ratio"] = r.ratio;
        x["time_ms"] = r.time_ms;
      } else {
        x["error"] = r.error;
      }
      list.push_back(x);
    }
    j["policies"] = list;
    j["best"] = best >= 0 ? nlohmann::ordered_json(rows[best].policy) : nlohmann::ordered_json(nullptr);
    text = j.dump(2) + "\n";
  }
  canopy::cli::write_file(a.output, text);
  for (const canopy::PolicyResult& r : rows)
    if (!r.error.empty()) return 1;
  return 0;
}

const bool compare_registered = canopy::cli::register_subcommand({
    "compare",
    "Run every mapping policy on one input and compare their costs and times",
    50,
    [](CLI::App& app) -> std::function<int()> {
      auto a = std::make_shared<CompareArgs>();
      canopy::cli::add_input_option(app, a->input);
      canopy::cli::add_matrix_options(app, a->matrix, a->format)->required();
      app.add_flag("--pack", a->pack, "With fewer tasks than PUs, pack them into as few NUMA nodes as possible")
          ->group("Mapping");
      app.add_option("--granularity", a->granularity, "Bind each task to its PU or to its whole core (default pu)")
          ->check(CLI::IsMember({"core", "pu"}))
          ->group("Mapping");
      canopy::cli::add_weights_option(app, a->weights);
      canopy::cli::add_format_option(app, a->of, {"table", "json"}, "table");
      canopy::cli::add_output_option(app, a->output);
      app.footer(
          "Examples:\n"
          "  canopy compare --input 'pack:12 numa:1 core:8 pu:2' --matrix stencil.txt\n"
          "  canopy compare --input machine.xml --matrix m.mtx --pack --of json");
      return [a] { return run_compare(*a); };
    },
});

}  // namespace
