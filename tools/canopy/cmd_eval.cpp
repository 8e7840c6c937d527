// `canopy eval`: the cost of a given placement (one OS CPU number per task,
// as `canopy map --of list` writes) for a communication matrix on a
// topology: hop-bytes, weighted cost, bytes crossing NUMA nodes and tasks
// per NUMA node.
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>

#include "canopy/comm_matrix.hpp"
#include "canopy/cost.hpp"
#include "canopy/error.hpp"
#include "canopy/formats.hpp"
#include "canopy/topology.hpp"
#include "cli.hpp"
#include "cli_common.hpp"

namespace {

struct EvalArgs {
  std::string input, matrix, format, placement, weights, of, output;
};

canopy::Placement read_placement(const canopy::Topology& topo, const std::string& path, int tasks) {
  if (path == "-") return canopy::parse_placement_list(topo, std::cin, "<stdin>", tasks);
  std::ifstream in(path);
  if (!in) throw canopy::Error(fmt::format("{}: cannot open the placement file", path));
  return canopy::parse_placement_list(topo, in, path, tasks);
}

// A hand-written placement may put more tasks on a PU than a policy would;
// its cost is still meaningful, but the user should know.
void note_overload(const canopy::Topology& topo, const canopy::Placement& p, const std::string& path) {
  std::vector<int> load(static_cast<size_t>(topo.num_pus()), 0);
  for (int pu : p.task_pu) ++load[static_cast<size_t>(pu)];
  const int cap = (p.num_tasks() + topo.num_pus() - 1) / topo.num_pus();
  for (int pu = 0; pu < topo.num_pus(); ++pu)
    if (load[static_cast<size_t>(pu)] > cap) {
      std::fprintf(stderr, "canopy: note: %s: CPU %d holds %d tasks, more than ceil(tasks/PUs) = %d\n", path.c_str(),
                   topo.pu(pu).os_index, load[static_cast<size_t>(pu)], cap);
      return;
    }
}

int run_eval(const EvalArgs& a) {
  canopy::Topology topo = canopy::Topology::load(a.input);
  canopy::CommMatrix m = canopy::cli::load_matrix(a.matrix, a.format);
  std::vector<double> weights = canopy::cli::weights_for(topo, a.weights);
  canopy::Placement p = read_placement(topo, a.placement, m.size());
  const std::string name = a.placement == "-" ? "<stdin>" : a.placement;
  note_overload(topo, p, name);
  canopy::Cost cost = canopy::evaluate(topo, m, p, weights);
  std::string text;
  if (a.of == "table") {
    text = fmt::format("placement            {}: {} tasks on {} ({} PUs)\n", name, p.num_tasks(),
                       topo.source(), topo.num_pus());
    text += canopy::cli::cost_text(topo, m, cost, weights);
  } else {
    nlohmann::ordered_json j;
    j["placement"] = name;
    j["matrix"] = a.matrix;
    j["topology"] = topo.source();
    j["num_tasks"] = p.num_tasks();
    j["cost"] = canopy::cli::cost_json(m, cost, weights);
    text = j.dump(2) + "\n";
  }
  canopy::cli::write_file(a.output, text);
  return 0;
}

const bool eval_registered = canopy::cli::register_subcommand({
    "eval",
    "Evaluate a placement: hop-bytes, weighted cost, NUMA crossing, tasks per NUMA node",
    40,
    [](CLI::App& app) -> std::function<int()> {
      auto a = std::make_shared<EvalArgs>();
      canopy::cli::add_input_option(app, a->input);
      canopy::cli::add_matrix_options(app, a->matrix, a->format)->required();
      app.add_option("--placement", a->placement,
                     "The placement: one OS CPU number per task, whitespace separated ('-' = standard input), as "
                     "'canopy map --of list' writes it")
          ->option_text("FILE")
          ->required()
          ->group("Input");
      canopy::cli::add_weights_option(app, a->weights);
      canopy::cli::add_format_option(app, a->of, {"table", "json"}, "table");
      canopy::cli::add_output_option(app, a->output);
      app.footer(
          "Examples:\n"
          "  canopy map --input machine.xml --matrix m.txt --of list -o p.txt\n"
          "  canopy eval --input machine.xml --matrix m.txt --placement p.txt\n"
          "  echo 0 1 2 3 | canopy eval --input 'pack:2 core:2' --matrix m.txt --placement - --of json");
      return [a] { return run_eval(*a); };
    },
});

}  // namespace
