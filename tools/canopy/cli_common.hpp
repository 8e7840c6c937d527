// Pieces the placement subcommands (topology, matrix, map, eval, compare)
// share beyond cli.hpp: the options they spell alike (--matrix, --format,
// --weights, -o), loading a matrix with the notes the user must see (C + Cᵀ
// taken, diagonal ignored), and the cost summary in text and JSON.
#pragma once
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "canopy/comm_matrix.hpp"
#include "canopy/cost.hpp"
#include "canopy/topology.hpp"

namespace canopy::cli {

// --matrix FILE and --format auto|dense|mm|edges, grouped under "Input".
CLI::Option* add_matrix_options(CLI::App& app, std::string& path, std::string& format);
// -o,--output FILE ("-" = stdout, the default), grouped under "Output".
void add_output_option(CLI::App& app, std::string& path);
// --weights W0,W1,..., grouped under "Mapping".
void add_weights_option(CLI::App& app, std::string& weights);

// Reads the matrix; tells on stderr ("canopy: note: ...") when an
// asymmetric input was made symmetric or a diagonal was ignored.
CommMatrix load_matrix(const std::string& path, const std::string& format, MatrixReadInfo* info = nullptr);

// The per-level weights to use: the defaults, or --weights validated
// against the topology.
std::vector<double> weights_for(const Topology& topo, const std::string& weights_option);

// Numbers as people read them: integers without ".0", others with up to 6
// significant digits.
std::string number(double v);

// Cost lines for tables ("hop-bytes ...", "weighted cost ...", ...).
std::string cost_text(const Topology& topo, const CommMatrix& m, const Cost& c, const std::vector<double>& weights);
// The same as JSON.
nlohmann::ordered_json cost_json(const CommMatrix& m, const Cost& c, const std::vector<double>& weights);

}  // namespace canopy::cli
