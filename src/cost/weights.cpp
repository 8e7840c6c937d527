// Per-level weights of the distance-weighted cost: the documented defaults
// (docs/cost-model.md), validation of user weights, and parsing of
// `--weights W0,W1,...`. Weights are indexed by tree level, root first, so
// that weight[common_level(a, b)] is what a byte between PUs a and b costs.
#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "canopy/cost.hpp"
#include "canopy/error.hpp"
#include "canopy/topology.hpp"

namespace canopy {

namespace {

std::string level_names(const Topology& topo) {
  std::string s;
  for (int l = 0; l < topo.num_levels(); ++l) s += fmt::format("{}{}", l ? ", " : "", topo.level(l).name);
  return s;
}

}  // namespace

// w(level) = 2^(leaf_level - level) - 1: 0 on one PU, 1 within the lowest
// shared level (a core), then roughly doubling at every level up. See
// docs/cost-model.md for why.
std::vector<double> default_weights(const Topology& topo) {
  const int L = topo.leaf_level();
  std::vector<double> w(topo.num_levels());
  for (int l = 0; l <= L; ++l) w[l] = std::ldexp(1.0, L - l) - 1.0;
  return w;
}

std::vector<double> resolve_weights(const Topology& topo, const std::vector<double>& user) {
  if (user.empty()) return default_weights(topo);
  const int L = topo.num_levels();
  const int n = static_cast<int>(user.size());
  if (n != L && n != L - 1)
    throw Error(fmt::format("weights: {} value{} given, but topology '{}' has {} levels (root first: {}); "
                            "give {} values, or {} (the PU level then weighs 0)",
                            n, n == 1 ? "" : "s", topo.source(), L, level_names(topo), L, L - 1));
  for (int i = 0; i < n; ++i)
    if (!std::isfinite(user[i]) || user[i] < 0)
      throw Error(fmt::format("weights: value {} ({}) for level {} ({}) must be finite and non-negative", i + 1,
                              user[i], i, topo.level(i).name));
  std::vector<double> w = user;
  if (n == L - 1) w.push_back(0.0);
  return w;
}

std::vector<double> parse_weights(const std::string& s) {
  if (s.find_first_not_of(" \t") == std::string::npos)
    throw Error(fmt::format("weights '{}': expected a comma-separated list of numbers such as '10,5,1'", s));
  std::vector<double> out;
  size_t start = 0;
  int item = 1;
  while (true) {
    size_t comma = s.find(',', start);
    std::string tok = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    size_t b = tok.find_first_not_of(" \t");
    size_t e = tok.find_last_not_of(" \t");
    tok = b == std::string::npos ? "" : tok.substr(b, e - b + 1);
    if (tok.empty()) throw Error(fmt::format("weights '{}': item {} is empty (expected a number)", s, item));
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(tok.c_str(), &end);
    if (end != tok.c_str() + tok.size() || errno == ERANGE)
      throw Error(fmt::format("weights '{}': item {} '{}' is not a number", s, item, tok));
    if (!std::isfinite(v) || v < 0)
      throw Error(fmt::format("weights '{}': item {} '{}' must be finite and non-negative", s, item, tok));
    out.push_back(v);
    if (comma == std::string::npos) break;
    start = comma + 1;
    ++item;
  }
  return out;
}

}  // namespace canopy
