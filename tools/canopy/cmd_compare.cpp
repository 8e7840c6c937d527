// `canopy compare`: run every registered policy on one matrix and topology
// and print the cost of each placement, its ratio to the best, the time the
// policy took, and which policy is best (lowest weighted cost).
#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "canopy/comm_matrix.hpp"
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

struct Row {
  std::string name;
  canopy::Cost cost;
  double ms = 0;
  std::string error;  // empty when the policy succeeded
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

  std::vector<Row> rows;
  int best = -1;
  for (const canopy::Policy& pol : canopy::policies()) {
    Row r;
    r.name = pol.name;
    try {
      auto t0 = std::chrono::steady_clock::now();
      canopy::Placement p = canopy::map_tasks(topo, m, pol.name, opt);
      auto t1 = std::chrono::steady_clock::now();
      r.ms = std::chrono::duration<double, std::milli>(t1 - t0).count();
      r.cost = canopy::evaluate(topo, m, p, opt.weights);
    } catch (const canopy::Error& e) {
      // One broken policy must not hide the others' results.
      r.error = e.what();
    }
    rows.push_back(r);
    int i = static_cast<int>(rows.size()) - 1;
    if (r.error.empty() && (best < 0 || r.cost.weighted < rows[best].cost.weighted ||
                            (r.cost.weighted == rows[best].cost.weighted && r.cost.hop_bytes < rows[best].cost.hop_bytes)))
      best = i;
  }
  const double best_weighted = best >= 0 ? rows[best].cost.weighted : 0;
  std::string w;
  for (double x : opt.weights) w += (w.empty() ? "" : ",") + canopy::cli::number(x);

  std::string text;
  if (a.of == "table") {
    std::vector<std::vector<std::string>> cells;
    cells.push_back({"policy", "hop-bytes", "weighted", "NUMA crossing", "ratio", "time"});
    for (const Row& r : rows) {
      if (!r.error.empty()) {
        cells.push_back({r.name, "-", "-", "-", "-", "failed: " + r.error});
        continue;
      }
      cells.push_back({r.name, canopy::cli::number(r.cost.hop_bytes), canopy::cli::number(r.cost.weighted),
                       canopy::cli::number(r.cost.numa_crossing), ratio_text(r.cost.weighted, best_weighted),
                       fmt::format("{:.3f} ms", r.ms)});
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
    text += best >= 0 ? fmt::format("best: {} (lowest weighted cost; ratio = weighted cost / best)\n", rows[best].name)
                      : "best: none (every policy failed)\n";
  } else {
    nlohmann::ordered_json j;
    j["matrix"] = a.matrix;
    j["topology"] = topo.source();
    j["num_tasks"] = m.size();
    j["weights"] = opt.weights;
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Row& r : rows) {
      nlohmann::ordered_json x;
      x["policy"] = r.name;
      if (r.error.empty()) {
        x["hop_bytes"] = r.cost.hop_bytes;
        x["weighted"] = r.cost.weighted;
        x["numa_crossing"] = r.cost.numa_crossing;
        x["tasks_per_numa"] = r.cost.tasks_per_numa;
        x["ratio"] = best_weighted > 0 ? r.cost.weighted / best_weighted : 1.0;
        x["time_ms"] = r.ms;
      } else {
        x["error"] = r.error;
      }
      list.push_back(x);
    }
    j["policies"] = list;
    j["best"] = best >= 0 ? nlohmann::ordered_json(rows[best].name) : nlohmann::ordered_json(nullptr);
    text = j.dump(2) + "\n";
  }
  canopy::cli::write_file(a.output, text);
  for (const Row& r : rows)
    if (!r.error.empty()) return 1;
  return 0;
}

const bool registered = canopy::cli::register_subcommand({
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
