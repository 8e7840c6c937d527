// The cases of the mapping benchmark: read from a manifest written by
// gen_cases.py (JSON), or one case given on the command line. A case is a
// matrix file, a machine (hwloc synthetic string or XML file) and the
// regimes it runs in: "full" (tasks = PUs), "over" (more tasks than PUs),
// "spread" and "packed" (fewer tasks than PUs; packed sets --pack).
#pragma once
#include <string>
#include <vector>

namespace canopy::bench {

struct Case {
  std::string name;      // e.g. "stencil2d_192_permuted@smp12e5"
  std::string matrix;    // path of the matrix file (resolved)
  std::string topology;  // synthetic string or XML path, as Topology::load takes it
  std::string machine;   // short machine name ("" when unknown)
  std::string family;    // matrix family ("" when unknown)
  int tasks = 0;         // from the manifest; 0 = learn from the matrix
  std::vector<std::string> regimes;  // empty = from tasks versus PUs
};

// Regimes for T tasks on P PUs: full, over, or spread and packed.
std::vector<std::string> default_regimes(int tasks, int pus);
// Throws canopy::Error for anything but full, over, spread, packed.
void check_regime(const std::string& regime);

// Reads a manifest; matrix paths are relative to the manifest's directory.
// Errors name the file and the entry.
std::vector<Case> read_manifest(const std::string& path);

// Comma-separated list -> items (empty items dropped).
std::vector<std::string> split_list(const std::string& s);

}  // namespace canopy::bench
