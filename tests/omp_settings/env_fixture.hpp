// Shared helpers of the OpenMP settings tests: an environment given as a map
// (never the process's own), and parse_settings over it with the warnings
// captured as lines.
#pragma once
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "canopy/topology.hpp"
#include "omp/core/settings.hpp"

namespace omp_test {

using Env = std::map<std::string, std::string>;

inline canopy::omp::Getenv getenv_of(const Env& env) {
  return [env](const char* name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

struct Parsed {
  canopy::omp::Settings settings;
  std::vector<std::string> warnings;
};

inline Parsed parse(const Env& env, const canopy::Topology& machine) {
  std::ostringstream w;
  Parsed p{canopy::omp::parse_settings(getenv_of(env), machine, w), {}};
  std::istringstream lines(w.str());
  for (std::string line; std::getline(lines, line);) p.warnings.push_back(line);
  return p;
}

// A small machine for the variables that do not look at the topology.
inline const canopy::Topology& small_machine() {
  static const canopy::Topology t = canopy::Topology::from_synthetic("pack:2 numa:2 core:4 pu:2");
  return t;
}

inline Parsed parse(const Env& env) { return parse(env, small_machine()); }

// The places as OS CPU lists, for compact expectations.
inline std::vector<std::vector<int>> cpus_of(const canopy::omp::Settings& s) {
  std::vector<std::vector<int>> out;
  for (const auto& p : s.places) out.push_back(p.os_cpus);
  return out;
}

}  // namespace omp_test
