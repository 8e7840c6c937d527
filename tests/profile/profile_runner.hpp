// Running `canopy profile` and the profiled programs from the tests, and the
// measures the bars of issue 14 are stated in (top-k recall, placement cost
// ratio).
#pragma once
#include <string>
#include <vector>

#include "canopy/comm_matrix.hpp"

namespace canopy::test {

struct Ran {
  int status = -1;  // exit status (128 + N: killed by signal N)
  std::string out, err;
};

// Runs `args` (no shell involved for the arguments), with `env` (NAME=value)
// added to the environment.
Ran run(const std::vector<std::string>& args, const std::vector<std::string>& env = {});

// A fresh directory under the test's temporary directory.
std::string fresh_dir(const std::string& name);

std::string read_text(const std::string& path);

// Σ over threads of |top-k(row i of measured) ∩ partners(i)| / Σ k, where
// partners(i) are the non-zero entries of row i of `truth` and k their
// number. Ties in `measured` are broken against the truth (a zero row
// finds nothing).
double top_k_recall(const CommMatrix& truth, const CommMatrix& measured);

// cost(placement from measured) / cost(placement from truth), both judged
// on the true matrix with the weighted cost, canopy's default policy, on
// the synthetic machine `topology`.
double placement_cost_ratio(const CommMatrix& truth, const CommMatrix& measured, const std::string& topology);

}  // namespace canopy::test
