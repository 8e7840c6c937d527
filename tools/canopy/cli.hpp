// Shared pieces of the `canopy` command line tool: the subcommand registry
// (each cmd_*.cpp registers itself, so adding a subcommand touches one file),
// the options every subcommand shares (--input, --of), and error reporting
// (stderr "canopy: <what>", exit 2 on bad input, 1 on failure).
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

namespace canopy::cli {

struct Subcommand {
  std::string name;
  std::string description;
  int order;  // position in `canopy --help`
  // Adds options to `app` and returns the action to run once parsed.
  std::function<std::function<int()>(CLI::App& app)> setup;
};

// Registers a subcommand at static-initialisation time; returns true.
bool register_subcommand(Subcommand s);
std::vector<Subcommand>& subcommands();

// --input XML|SYNTHETIC (absent = this machine), grouped under "Input".
void add_input_option(CLI::App& app, std::string& input);
// --of FORMAT with the allowed values listed in --help.
void add_format_option(CLI::App& app, std::string& format, const std::vector<std::string>& allowed,
                       const std::string& default_value);

// Write `text` to `path` ("-" = stdout); throws canopy::Error naming the path on failure.
void write_file(const std::string& path, const std::string& text);

}  // namespace canopy::cli
