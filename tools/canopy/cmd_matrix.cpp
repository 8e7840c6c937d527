// `canopy matrix`: look at a communication matrix (tasks, edges, volume,
// whether it had to be made symmetric), convert it between the dense,
// MatrixMarket and edge-list formats, and draw it as a heat map.
#include <fmt/format.h>

#include <memory>
#include <sstream>

#include "canopy/comm_matrix.hpp"
#include "canopy/error.hpp"
#include "cli.hpp"
#include "cli_common.hpp"

namespace {

struct MatrixArgs {
  std::string matrix, format, of, svg, output;
};

const char* format_name(canopy::MatrixFormat f) {
  switch (f) {
    case canopy::MatrixFormat::Dense: return "dense";
    case canopy::MatrixFormat::MatrixMarket: return "MatrixMarket";
    case canopy::MatrixFormat::EdgeList: return "edge list";
    case canopy::MatrixFormat::Auto: break;
  }
  return "auto";
}

std::string info_text(const std::string& path, const canopy::CommMatrix& m, const canopy::MatrixReadInfo& info) {
  using canopy::cli::number;
  int heaviest = -1;
  double heaviest_volume = 0;
  for (int i = 0; i < m.size(); ++i) {
    double v = m.row_sum(i);
    if (heaviest < 0 || v > heaviest_volume) {
      heaviest = i;
      heaviest_volume = v;
    }
  }
  std::string out;
  out += fmt::format("matrix         {} ({})\n", path, format_name(info.format));
  out += fmt::format("tasks          {}\n", m.size());
  out += fmt::format("edges          {} (pairs of tasks that communicate)\n", m.num_edges());
  out += fmt::format("total volume   {}\n", number(m.total()));
  if (heaviest >= 0)
    out += fmt::format("heaviest task  {} (volume {})\n", heaviest, number(heaviest_volume));
  out += fmt::format("symmetrized    {}\n",
                     info.symmetrized ? "yes: the input was not symmetric, C + C^T was taken" : "no");
  out += fmt::format("diagonal       {}\n", info.had_diagonal ? "non-zero entries ignored" : "none");
  return out;
}

const bool matrix_registered = canopy::cli::register_subcommand({
    "matrix",
    "Describe a communication matrix, convert it between formats, draw it as a heat map",
    20,
    [](CLI::App& app) -> std::function<int()> {
      auto a = std::make_shared<MatrixArgs>();
      canopy::cli::add_matrix_options(app, a->matrix, a->format)->required();
      canopy::cli::add_format_option(app, a->of, {"info", "dense", "mm", "edges"}, "info");
      app.add_option("--svg", a->svg, "Also draw the matrix as a heat map (log grey scale) into FILE")
          ->option_text("FILE")
          ->group("Output");
      canopy::cli::add_output_option(app, a->output);
      app.footer(
          "Examples:\n"
          "  canopy matrix --matrix stencil.txt                 # tasks, edges, volume, symmetry\n"
          "  canopy matrix --matrix stencil.txt --of mm -o stencil.mtx\n"
          "  canopy matrix --matrix stencil.mtx --svg stencil.svg");
      return [a] {
        canopy::MatrixReadInfo info;
        canopy::CommMatrix m = canopy::cli::load_matrix(a->matrix, a->format, &info);
        if (!a->svg.empty()) canopy::cli::write_file(a->svg, canopy::matrix_svg(m));
        if (a->of == "info") {
          canopy::cli::write_file(a->output, info_text(a->matrix, m, info));
        } else {
          std::ostringstream out;
          canopy::write_matrix(out, m, canopy::parse_matrix_format(a->of));
          canopy::cli::write_file(a->output, out.str());
        }
        return 0;
      };
    },
});

}  // namespace
