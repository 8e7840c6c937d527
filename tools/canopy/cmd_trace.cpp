// `canopy trace FILE`: what a trace recorded with CANOPY_TRACE=FILE.json
// says, for people: per worker busy / searching / parked / idle time,
// tasks, steals by distance, data-flow bytes local and remote, and the
// observed critical path of the data-flow tasks; --svg writes a timeline
// picture (trace_svg.cpp). docs/trace.md.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "cli.hpp"
#include "trace_read.hpp"

namespace {

struct TraceArgs {
  std::string file, svg, color = "label";
  int width = 1200;
};

int run_trace(const TraceArgs& a) {
  const canopy::cli::TraceFile t = canopy::cli::read_trace(a.file);
  std::cout << canopy::cli::summary_text(a.file, t);
  if (!a.svg.empty()) {
    canopy::cli::SvgOptions o;
    o.width = a.width;
    o.color_by_numa = a.color == "numa";
    canopy::cli::write_file(a.svg, canopy::cli::timeline_svg(t, o));
  }
  return 0;
}

const bool trace_registered = canopy::cli::register_subcommand({
    "trace",
    "Summarise a trace (CANOPY_TRACE=FILE.json) and draw its timeline as SVG",
    75,
    [](CLI::App& app) -> std::function<int()> {
      auto a = std::make_shared<TraceArgs>();
      app.add_option("file", a->file, "A trace in the JSON format, written by CANOPY_TRACE=FILE.json or trace_start")
          ->required()
          ->group("Input");
      app.add_option("--svg", a->svg, "Also write the timeline picture (SVG) to this file ('-' = standard output)")
          ->option_text("OUT")
          ->group("Output");
      app.add_option("--color", a->color, "Colour task boxes by their label or by the worker's NUMA node (default label)")
          ->check(CLI::IsMember({"label", "numa"}))
          ->group("Output");
      app.add_option("--width", a->width, "Width of the picture in pixels (default 1200)")
          ->check(CLI::Range(300, 20000))
          ->group("Output");
      app.footer(
          "Examples:\n"
          "  CANOPY_TRACE=run.json ./app && canopy trace run.json --svg run.svg\n"
          "  canopy trace run.json --svg run.svg --color numa --width 1600");
      return [a] { return run_trace(*a); };
    },
});

}  // namespace
