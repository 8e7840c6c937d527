// `canopy topology`: show the machine (this one, an XML file or a synthetic
// description) as text, JSON, an SVG picture, or hwloc XML to save it.
#include <memory>

#include "canopy/formats.hpp"
#include "canopy/topology.hpp"
#include "cli.hpp"
#include "cli_common.hpp"

namespace {

struct TopologyArgs {
  std::string input, of, output;
};

const bool topology_registered = canopy::cli::register_subcommand({
    "topology",
    "Show the machine's topology: levels, caches, cores, PUs, NUMA nodes (text, json, svg or xml)",
    10,
    [](CLI::App& app) -> std::function<int()> {
      auto a = std::make_shared<TopologyArgs>();
      canopy::cli::add_input_option(app, a->input);
      canopy::cli::add_format_option(app, a->of, {"text", "json", "svg", "xml"}, "text");
      canopy::cli::add_output_option(app, a->output);
      app.footer(
          "Examples:\n"
          "  canopy topology                                   # this machine (the PUs this process may use)\n"
          "  canopy topology --input 'pack:2 numa:2 core:8 pu:2' --of json\n"
          "  canopy topology --input machine.xml --of svg -o machine.svg\n"
          "  canopy topology --of xml -o here.xml              # save this machine for later --input");
      return [a] {
        canopy::Topology topo = canopy::Topology::load(a->input);
        std::string text;
        if (a->of == "text") text = canopy::topology_text(topo);
        else if (a->of == "json") text = canopy::topology_json(topo);
        else if (a->of == "svg") text = canopy::topology_svg(topo);
        else text = topo.to_xml();
        canopy::cli::write_file(a->output, text);
        return 0;
      };
    },
});

}  // namespace
