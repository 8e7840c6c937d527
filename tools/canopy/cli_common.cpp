// Shared options, matrix loading with notes, and cost summaries of the
// placement subcommands (see cli_common.hpp).
#include "cli_common.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

namespace canopy::cli {

CLI::Option* add_matrix_options(CLI::App& app, std::string& path, std::string& format) {
  format = "auto";
  app.add_option("--format", format,
                 "Matrix file format: auto (default: detected), dense (rows of numbers), mm (MatrixMarket), "
                 "edges ('i j weight' lines)")
      ->check(CLI::IsMember({"auto", "dense", "mm", "matrixmarket", "edges", "edgelist"}))
      ->option_text("FORMAT")
      ->group("Input");
  return app
      .add_option("-m,--matrix", path,
                  "Communication matrix between tasks: dense rows (TreeMatch/BindMe style), MatrixMarket, or an "
                  "edge list. An asymmetric matrix is made symmetric as C + C^T")
      ->option_text("FILE")
      ->group("Input");
}

void add_output_option(CLI::App& app, std::string& path) {
  path = "-";
  app.add_option("-o,--output", path, "Write the result to FILE instead of standard output")
      ->option_text("FILE")
      ->group("Output");
}

void add_weights_option(CLI::App& app, std::string& weights) {
  app.add_option("--weights", weights,
                 "Cost weight of each level, root first, comma separated (e.g. 8,4,2,1,0): one per level, or one "
                 "per level above the PUs. Default: see docs/cost-model.md")
      ->option_text("W0,W1,...")
      ->group("Mapping");
}

CommMatrix load_matrix(const std::string& path, const std::string& format, MatrixReadInfo* out) {
  MatrixReadInfo info;
  CommMatrix m = read_matrix(path, parse_matrix_format(format), &info);
  if (out) *out = info;
  if (info.symmetrized)
    std::fprintf(stderr,
                 "canopy: note: %s is not symmetric; using C + C^T (the total traffic between each pair of tasks)\n",
                 path.c_str());
  if (info.had_diagonal)
    std::fprintf(stderr, "canopy: note: %s: non-zero diagonal entries ignored (a task does not talk to itself)\n",
                 path.c_str());
  return m;
}

std::vector<double> weights_for(const Topology& topo, const std::string& option) {
  if (option.empty()) return default_weights(topo);
  return resolve_weights(topo, parse_weights(option));
}

std::string number(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{:.6g}", v);
}

std::string cost_text(const Topology& topo, const CommMatrix& m, const Cost& c, const std::vector<double>& weights) {
  std::string w;
  for (double x : weights) w += (w.empty() ? "" : ",") + number(x);
  const double total = m.total();
  std::string out;
  out += fmt::format("hop-bytes            {}\n", number(c.hop_bytes));
  out += fmt::format("weighted cost        {}   (weights per level, root first: {})\n", number(c.weighted), w);
  out += fmt::format("NUMA crossing        {}   ({} of the total volume {})\n", number(c.numa_crossing),
                     total > 0 ? fmt::format("{:.1f}%", 100.0 * c.numa_crossing / total) : std::string("0%"),
                     number(total));
  std::string per;
  for (size_t i = 0; i < c.tasks_per_numa.size(); ++i)
    per += fmt::format("{}L#{}: {}", per.empty() ? "" : ", ", i, c.tasks_per_numa[i]);
  if (topo.num_numa_nodes() == 0) per = "(no NUMA node)";
  out += fmt::format("tasks per NUMA node  {}\n", per);
  return out;
}

nlohmann::ordered_json cost_json(const CommMatrix& m, const Cost& c, const std::vector<double>& weights) {
  nlohmann::ordered_json j;
  j["hop_bytes"] = c.hop_bytes;
  j["weighted"] = c.weighted;
  j["numa_crossing"] = c.numa_crossing;
  j["total_volume"] = m.total();
  j["tasks_per_numa"] = c.tasks_per_numa;
  j["weights"] = weights;
  return j;
}

}  // namespace canopy::cli
