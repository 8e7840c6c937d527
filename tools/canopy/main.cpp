// `canopy`: compute placements, evaluate them and launch programs with them.
// Subcommands live in cmd_*.cpp and register themselves (see cli.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "canopy/error.hpp"
#include "cli.hpp"

namespace canopy::cli {

std::vector<Subcommand>& subcommands() {
  static std::vector<Subcommand> all;
  return all;
}

bool register_subcommand(Subcommand s) {
  subcommands().push_back(std::move(s));
  return true;
}

void add_input_option(CLI::App& app, std::string& input) {
  app.add_option("-i,--input", input,
                 "Topology: an hwloc XML file (lstopo out.xml) or an hwloc synthetic string such as "
                 "'pack:2 numa:2 core:8 pu:2'. Default: this machine (the PUs this process may use)")
      ->group("Input");
}

void add_format_option(CLI::App& app, std::string& format, const std::vector<std::string>& allowed,
                       const std::string& default_value) {
  format = default_value;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : "|") + a;
  app.add_option("--of", format, fmt::format("Output format: {} (default {})", list, default_value))
      ->check(CLI::IsMember(allowed))
      ->group("Output");
}

void write_file(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    return;
  }
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error(fmt::format("{}: cannot open for writing", path), ErrorKind::System);
  f << text;
  if (!f) throw Error(fmt::format("{}: write failed", path), ErrorKind::System);
}

}  // namespace canopy::cli

int main(int argc, char** argv) {
  using namespace canopy;
  CLI::App app{"canopy: place parallel work and data on the machine's topology.\n"
               "Run 'canopy <command> --help' for the options of each command."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("canopy ") + "0.1.0");
  std::function<int()> action;
  auto& subs = cli::subcommands();
  std::sort(subs.begin(), subs.end(), [](const auto& a, const auto& b) { return a.order < b.order; });
  for (auto& s : subs) {
    CLI::App* sub = app.add_subcommand(s.name, s.description);
    if (s.description.empty()) sub->group("");  // a helper canopy starts itself (mpi-rank): not in --help
    auto run = s.setup(*sub);
    sub->callback([&action, run] { action = run; });
  }
  // `canopy mpirun -np 4` as with every mpirun: CLI11 would read "-np" as
  // "-n p", so it becomes --np (only before the program's "--").
  std::vector<std::string> args(argv + 1, argv + argc);
  if (!args.empty() && args[0] == "mpirun")
    for (auto& a : args) {
      if (a == "--") break;
      if (a == "-np") a = "--np";
    }
  std::reverse(args.begin(), args.end());  // CLI11 takes a reversed vector
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::fprintf(stderr, "canopy: %s\n", e.what());
    std::fprintf(stderr, "Run 'canopy --help' or 'canopy <command> --help' for usage.\n");
    return 2;
  }
  try {
    return action ? action() : 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "canopy: %s\n", e.what());
    return e.kind() == ErrorKind::BadInput ? 2 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "canopy: %s\n", e.what());
    return 1;
  }
}
